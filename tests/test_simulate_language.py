"""The language for contention and stragglers: a link's background load and
transfer size, a dc's jitter, and the simulation block. Each problem is a
diagnostic with its code, place and hint."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ctdsl.api import check
from ctdsl.cli import app
from ctdsl.model import expr as E

HEAD = """\
import std.devices
import std.links
import std.models
model job : llama3_8b {{ tokens = 8192 }}
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{}}
link shared {{ bandwidth = 12.5 GB/s; latency = 20 us; {link} }}
dc east {{
  workers = 4
  device = gpu0
  link = ib_ndr
  switch = tor
  {dc}
}}
dc west : east {{ {west} }}
wan east <-> west = shared
scheme dense {{ payload = dense; collective = hier_allreduce; steps = 100 }}
{extra}
"""


def _check(tmp_path, link="load = 0.5; transfer = 1 GB", dc="", west="", extra=""):
    path = tmp_path / "spec.ct"
    path.write_text(HEAD.format(link=link, dc=dc, west=west, extra=extra), encoding="utf-8")
    return check(str(path))


def _only(result):
    assert len(result.diagnostics) == 1, [d.message for d in result.diagnostics]
    return result.diagnostics[0]


def test_clean_spec_carries_load_jitter_and_simulation(tmp_path):
    r = _check(
        tmp_path,
        dc="jitter = 2 s; jitter_kind = lognormal; jitter_sigma = 0.5",
        extra="simulation run { steps = 50; seeds = 4; warmup = 5 }",
    )
    assert r.ok, [d.message for d in r.diagnostics]
    spec = r.spec
    env = spec.defaults()
    link = spec.links["shared"]
    assert E.evaluate(link.load, env) == 0.5 and E.evaluate(link.transfer, env) == 1e9
    for name in ("east", "west"):  # west inherits east's jitter
        dc = spec.dcs[name]
        assert E.evaluate(dc.jitter, env) == 2.0
        assert dc.jitter_kind == "lognormal" and E.evaluate(dc.jitter_sigma, env) == 0.5
    sim = spec.simulation
    assert [E.evaluate(x, env) for x in (sim.steps, sim.seeds, sim.warmup)] == [50, 4, 5]


def test_jitter_defaults_to_exponential_and_simulation_fields_to_defaults(tmp_path):
    r = _check(tmp_path, dc="jitter = 1 s", extra="simulation run {}")
    assert r.ok
    assert r.spec.dcs["east"].jitter_kind == "exponential" and r.spec.dcs["east"].jitter_sigma is None
    sim = r.spec.simulation
    assert [E.evaluate(x, {}) for x in (sim.steps, sim.seeds, sim.warmup)] == [100, 10, 10]


def test_no_jitter_means_none(tmp_path):
    r = _check(tmp_path)
    assert r.ok
    assert r.spec.dcs["east"].jitter is None and r.spec.dcs["east"].jitter_kind is None


def test_load_without_transfer_is_ct105_at_the_link(tmp_path):
    d = _only(_check(tmp_path, link="load = 0.5"))
    assert d.code == "CT105"
    assert "background load but no transfer size" in d.message and "WAN east <-> west" in d.message
    assert d.span.line == 7
    assert d.help == "add transfer = 1 GB"


def test_load_without_transfer_on_a_preset_points_at_the_use(tmp_path):
    path = tmp_path / "spec.ct"
    text = HEAD.format(link="", dc="", west="", extra="").replace(
        "link = ib_ndr", "link = busy"
    ) + "link busy : ib_ndr { load = 0.2 }\n"
    path.write_text(text, encoding="utf-8")
    r = check(str(path))
    d = _only(r)
    assert d.code == "CT105" and "dc 'east'" in d.message
    assert d.span.line == 19  # the link's definition, in the user's file


def test_load_must_be_a_utilisation(tmp_path):
    d = _only(_check(tmp_path, link="load = 1; transfer = 1 GB"))
    assert d.code == "CT302" and "utilisation in [0, 1)" in d.message


def test_jitter_kind_without_jitter(tmp_path):
    d = _only(_check(tmp_path, dc="jitter_kind = uniform"))
    assert d.code == "CT105" and "no jitter" in d.message and d.span.line == 13


def test_lognormal_needs_sigma_reported_once_for_a_base_and_its_heir(tmp_path):
    d = _only(_check(tmp_path, dc="jitter = 1 s; jitter_kind = lognormal"))
    assert d.code == "CT105" and "jitter_sigma" in d.message and d.help.startswith("add jitter_sigma")


def test_sigma_for_another_kind_is_ct113(tmp_path):
    d = _only(_check(tmp_path, dc="jitter = 1 s; jitter_sigma = 0.3"))
    assert d.code == "CT113" and "does not apply to exponential jitter" in d.message


def test_unknown_jitter_kind_suggests(tmp_path):
    d = _only(_check(tmp_path, dc="jitter = 1 s; jitter_kind = exponentail"))
    assert d.code == "CT108" and "exponential" in d.help


def test_jitter_is_a_time(tmp_path):
    d = _only(_check(tmp_path, west="jitter = 2 GB"))
    assert d.code == "CT202" and d.help == "e.g. jitter = 2 s"


def test_warmup_must_be_whole(tmp_path):
    d = _only(_check(tmp_path, extra="simulation run { warmup = 2.5 }"))
    assert d.code == "CT305" and d.span.line == 18


@pytest.mark.parametrize("field, code", [("steps = 0", "CT301"), ("seeds = 2.5", "CT305"), ("warmup = -1", "CT304")])
def test_simulation_bounds(tmp_path, field, code):
    d = _only(_check(tmp_path, extra=f"simulation run {{ {field} }}"))
    assert d.code == code


def test_cli_renders_with_caret_and_no_traceback(tmp_path):
    path = tmp_path / "spec.ct"
    path.write_text(HEAD.format(link="load = 0.5", dc="", west="", extra=""), encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path)])
    assert r.exit_code == 1
    out = r.stdout + r.stderr
    assert "CT105" in out and "^^^^^^" in out and "help: add transfer" in out and "Traceback" not in out
    assert f"{path}:7:6" in out

