"""A library file (no dc: schemes and params for several topology files) checks and
lints clean; only a command that runs it asks for a dc (CT410), with a help line
that offers no made-up names (the old one said `device = gpu`)."""

from __future__ import annotations

import textwrap

from typer.testing import CliRunner

import ctdsl
from ctdsl.api import SpecError, check
from ctdsl.cli.app import app

LIBRARY = """
# schemes and params shared by several topology files
import std.models
param frac = 1/16 in 1/256 .. 1/2
model job : llama3_70b { tokens = 16384 }
scheme dense { payload = dense; collective = hier_allreduce; steps = 10000 }
scheme band { payload = band; fraction = frac; collective = hier_allgather; steps = 12000 }
breakeven dense vs band over frac
"""

TOPOLOGY = """
import "shared.ct"
import std.devices
import std.links
device g : h100 { efficiency = 0.4 }
switch tor {}
dc east { workers = 4; device = g; link = ib_ndr; switch = tor }
dc west : east {}
wan east <-> west = eth100g
"""


def write(tmp_path):
    (tmp_path / "shared.ct").write_text(textwrap.dedent(LIBRARY), encoding="utf-8")
    (tmp_path / "cluster.ct").write_text(textwrap.dedent(TOPOLOGY), encoding="utf-8")
    return tmp_path / "shared.ct", tmp_path / "cluster.ct"


def test_a_library_lints_and_checks_clean(tmp_path):
    lib, _ = write(tmp_path)
    for cmd in ("lint", "check"):
        r = CliRunner().invoke(app, [cmd, str(lib)])
        assert r.exit_code == 0, r.output
        assert "All checks passed." in r.stdout
    assert check(lib).ok


def test_running_a_library_is_ct410_without_made_up_code(tmp_path):
    lib, _ = write(tmp_path)
    r = CliRunner().invoke(app, ["solve", str(lib)])
    assert r.exit_code == 1
    assert "CT410 the spec has schemes but no data centre to run them on (a file without a dc is a library)" in r.stderr
    assert "help: run a spec that imports this file and defines its dc blocks and wan links" in r.stderr
    assert "device = " not in r.stderr
    try:
        ctdsl.load(lib)
    except SpecError as exc:
        assert [d.code for d in exc.diagnostics] == ["CT410"]
    else:  # pragma: no cover
        raise AssertionError("ctdsl.load of a library must raise")


def test_the_topology_that_imports_it_solves(tmp_path):
    _, topo = write(tmp_path)
    r = CliRunner().invoke(app, ["lint", str(topo)])
    assert r.exit_code == 0, r.output
    sol = ctdsl.load(topo).solve()
    assert list(sol.schemes) == ["dense", "band"]
    assert len(sol.breakevens) == 1
