"""The harness pays for the code under test, not for itself, and still runs every command.

- typer's CliRunner would rebuild the click command from the app on every invoke;
  the harness builds it once, and puts typer's own builder back after each invoke;
- whether an input checked clean comes from the check command's own CheckResult,
  so the input is not checked a second time by the harness; the decision is the
  one `ctdsl.api.check` gives when asked directly;
- slow is measured in CPU seconds by default (a sleeping command is not slow, a
  busy one is), in wall-clock seconds when asked. The harness reads its clocks
  through `clocks`; the tests give it clocks of their own, which only the command
  under test moves, so the classification is checked without measuring time.
"""

from __future__ import annotations

import typer.main
import typer.testing

import ctdsl.api
from fuzz.cases import LIMIT
from fuzz.harness import ALL_COMMANDS, FIRST, ROOT, Harness

FLAGSHIP = (ROOT / "specs" / "llama70b_wan.ct").read_text(encoding="utf-8")
BROKEN = FLAGSHIP.replace("param wan_bw", "param wan_bw_typo", 1)  # every use of wan_bw is now unknown
# a clean spec that runs every command: schemes, a module, a break-even (the flagship's 16 commands cost ~15
# CPU-s, this one's ~2; what each command costs on real specs is bench/fuzz.py's to measure)
CLEAN = (ROOT / "examples" / "14_breakeven.ct").read_text(encoding="utf-8")


def test_the_broken_spec_is_broken_and_the_flagship_is_not(tmp_path):
    """The two inputs below, asked of the API directly."""
    (tmp_path / "a.ct").write_text(FLAGSHIP, encoding="utf-8")
    (tmp_path / "b.ct").write_text(BROKEN, encoding="utf-8")
    assert ctdsl.api.check(tmp_path / "a.ct").ok
    assert not ctdsl.api.check(tmp_path / "b.ct").ok


def test_a_clean_input_runs_every_command_and_a_broken_one_check_and_lint():
    h = Harness(limit=LIMIT)
    try:
        clean, broken = h.run(CLEAN), h.run(BROKEN)
    finally:
        h.close()
    assert clean.clean and [o.command for o in clean.outcomes] == ALL_COMMANDS
    assert not broken.clean and [o.command for o in broken.outcomes] == FIRST == ["check", "lint-sarif", "lint-text",
                                                                                   "lint-github"]
    # what ctdsl writes itself passes every sink's oracle: a leak is spec text getting through, never ctdsl's own
    assert [(o.command, o.leaks) for o in clean.outcomes + broken.outcomes if o.leaks] == []


def test_the_input_is_checked_once_through_the_api(monkeypatch):
    """Before, the harness checked each input again to learn if it was clean: two calls for a broken input."""
    calls = []
    real = ctdsl.api.check

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ctdsl.api, "check", counting)
    h = Harness(limit=LIMIT)
    try:
        res = h.run(BROKEN)
    finally:
        h.close()
    assert not res.clean
    assert len(calls) == 1  # the check command's own (lint loads and checks through the loader)
    assert ctdsl.api.check is counting  # the harness put back what it found


def test_the_click_command_is_built_once(monkeypatch):
    h = Harness(limit=LIMIT)
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


class Clocks:
    """A wall clock and a CPU clock that move only when told to."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def pair(self):
        return (lambda: self.wall, lambda: self.cpu)


def _graph_kind(monkeypatch, clock: str, wall: float, cpu: float) -> str:
    """The kind of outcome of the graph command when drawing the graph takes `wall` and `cpu` seconds (told, not spent)."""
    import ctdsl.model.graph

    clocks = Clocks()
    real = ctdsl.model.graph.to_json

    def to_json(*args, **kwargs):
        clocks.wall += wall
        clocks.cpu += cpu
        return real(*args, **kwargs)

    monkeypatch.setattr(ctdsl.model.graph, "to_json", to_json)
    h = Harness(slow=1.0, limit=LIMIT, clock=clock, clocks=clocks.pair())
    try:
        (o,) = h.run(FLAGSHIP, only={"graph-json"}).outcomes
    finally:
        h.close()
    return o.kind


def test_a_command_that_sleeps_is_slow_by_the_wall_clock_only(monkeypatch):
    assert _graph_kind(monkeypatch, "cpu", wall=1.5, cpu=0.0) == "ok"
    assert _graph_kind(monkeypatch, "wall", wall=1.5, cpu=0.0) == "slow"


def test_a_command_that_computes_is_slow_by_both_clocks(monkeypatch):
    assert _graph_kind(monkeypatch, "cpu", wall=1.5, cpu=1.5) == "slow"
    assert _graph_kind(monkeypatch, "wall", wall=1.5, cpu=1.5) == "slow"


def test_a_command_under_the_slow_bound_is_ok_by_both_clocks(monkeypatch):
    assert _graph_kind(monkeypatch, "cpu", wall=0.5, cpu=0.5) == "ok"
    assert _graph_kind(monkeypatch, "wall", wall=0.5, cpu=0.5) == "ok"
