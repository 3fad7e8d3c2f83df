"""`Study.simulate()` gives the library user what `ctdsl simulate` prints."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from solvekit import ROOT

SPEC = str(ROOT / "examples" / "15_contention.ct")


def test_api_and_cli_agree_and_are_deterministic():
    a = ctdsl.load(SPEC).simulate(steps=20, seeds=3)
    b = ctdsl.load(SPEC).simulate(steps=20, seeds=3)
    out = CliRunner().invoke(app, ["simulate", SPEC, "--steps", "20", "--seeds", "3", "--format", "json"])
    assert out.exit_code == 0, out.stderr
    cli = {s["name"]: s["simulated"]["step"]["mean"] for s in json.loads(out.stdout)["schemes"]}
    assert {n: s.step.mean for n, s in a.schemes.items()} == cli
    assert [r.step for r in a.schemes["adamw"].runs] == [r.step for r in b.schemes["adamw"].runs]


def test_simulate_one_scheme_and_the_limits():
    r = ctdsl.load(SPEC).simulate(steps=5, seeds=2, schemes=["diloco"])
    assert list(r.schemes) == ["diloco"]
    big = CliRunner().invoke(app, ["simulate", SPEC, "--steps", "1000000"])
    assert big.exit_code == 2 and "Traceback" not in big.stderr
