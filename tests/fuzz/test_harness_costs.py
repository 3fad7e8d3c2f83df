"""The harness pays for the code under test, not for itself, and still runs every command.

- typer's CliRunner would rebuild the click command from the app on every invoke;
  the harness builds it once, and puts typer's own builder back after each invoke;
- whether an input checked clean comes from the check command's own CheckResult,
  so the input is not checked a second time by the harness; the decision is the
  one `ctdsl.api.check` gives when asked directly;
- slow is measured in CPU seconds by default (a sleeping command is not slow, a
  busy one is), in wall-clock seconds when asked.
"""

from __future__ import annotations

import time

import typer.main
import typer.testing

import ctdsl.api
from fuzz.harness import ALL_COMMANDS, ROOT, Harness

FLAGSHIP = (ROOT / "specs" / "llama70b_wan.ct").read_text(encoding="utf-8")
BROKEN = FLAGSHIP.replace("param wan_bw", "param wan_bw_typo", 1)  # every use of wan_bw is now unknown


def test_the_broken_spec_is_broken_and_the_flagship_is_not(tmp_path):
    """The two inputs below, asked of the API directly."""
    (tmp_path / "a.ct").write_text(FLAGSHIP, encoding="utf-8")
    (tmp_path / "b.ct").write_text(BROKEN, encoding="utf-8")
    assert ctdsl.api.check(tmp_path / "a.ct").ok
    assert not ctdsl.api.check(tmp_path / "b.ct").ok


def test_a_clean_input_runs_every_command_and_a_broken_one_check_and_lint():
    h = Harness(limit=20.0)
    try:
        clean, broken = h.run(FLAGSHIP), h.run(BROKEN)
    finally:
        h.close()
    assert clean.clean and [o.command for o in clean.outcomes] == ALL_COMMANDS
    assert not broken.clean and [o.command for o in broken.outcomes] == ["check", "lint-sarif"]


def test_the_input_is_checked_once_through_the_api(monkeypatch):
    """Before, the harness checked each input again to learn if it was clean: two calls for a broken input."""
    calls = []
    real = ctdsl.api.check

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ctdsl.api, "check", counting)
    h = Harness(limit=20.0)
    try:
        res = h.run(BROKEN)
    finally:
        h.close()
    assert not res.clean
    assert len(calls) == 1  # the check command's own (lint loads and checks through the loader)
    assert ctdsl.api.check is counting  # the harness put back what it found


def test_the_click_command_is_built_once(monkeypatch):
    h = Harness(limit=20.0)
    builds = []
    real = typer.main.get_command

    def counting(app):
        builds.append(app)
        return real(app)

    monkeypatch.setattr(typer.testing, "_get_command", counting)
    try:
        res = h.run(FLAGSHIP, only={"check", "solve-json"})
    finally:
        h.close()
    assert [o.kind for o in res.outcomes] == ["ok", "ok"]
    assert builds == []
    assert typer.testing._get_command is counting  # restored after each invoke


def _graph_that(monkeypatch, work):
    import ctdsl.model.graph

    real = ctdsl.model.graph.to_json

    def slow_graph(*args, **kwargs):
        work()
        return real(*args, **kwargs)

    monkeypatch.setattr(ctdsl.model.graph, "to_json", slow_graph)


def _sleep():
    time.sleep(1.5)


def _spin():
    end = time.process_time() + 1.5
    while time.process_time() < end:
        pass


def _graph_kind(clock: str) -> str:
    h = Harness(slow=1.0, limit=20.0, clock=clock)
    try:
        (o,) = h.run(FLAGSHIP, only={"graph-json"}).outcomes
    finally:
        h.close()
    return o.kind


def test_a_command_that_sleeps_is_slow_by_the_wall_clock_only(monkeypatch):
    _graph_that(monkeypatch, _sleep)
    assert _graph_kind("cpu") == "ok"  # graph of the flagship itself takes well under 1 s of CPU
    assert _graph_kind("wall") == "slow"


def test_a_command_that_computes_is_slow_by_both_clocks(monkeypatch):
    _graph_that(monkeypatch, _spin)
    assert _graph_kind("cpu") == "slow"
    assert _graph_kind("wall") == "slow"
