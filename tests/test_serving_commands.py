"""Every command on the study spec (issue 28's done-when list): check, lint, sweep, simulate and
explore in process, each once and small (solve, report and export latex are held byte for byte by
tests/test_outputs_*.py; the numbers by tests/test_serving*.py).
"""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
DISAGG = str(ROOT / "specs" / "llama70b_disagg.ct")


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


def test_check_and_lint_pass(runner):
    assert runner.invoke(app, ["check", DISAGG]).exit_code == 0
    done = runner.invoke(app, ["lint", DISAGG, "--format", "json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["summary"]["suppressed"] == 6  # five slow 25 GbE hand-offs (CTL014) and the batch (CTL015)


def test_sweep_gives_each_path_over_the_rate(runner):
    done = runner.invoke(app, ["sweep", DISAGG, "--sweep", "rate=1 req/s:3 req/s:2"])
    assert done.exit_code == 0, done.output
    rows = list(csv.DictReader(StringIO(done.output)))
    assert [float(r["rate_1_per_s"]) for r in rows] == [1.0, 3.0]
    assert all(float(r["disagg/ndr.ttft_p_s"]) > 0 for r in rows)
    assert float(rows[1]["disagg/e25.ttft_p_s"]) > float(rows[0]["disagg/e25.ttft_p_s"])  # the link's queue grows with the rate


def test_simulate_runs_every_path(runner):
    done = runner.invoke(app, ["simulate", DISAGG, "--requests", "200", "--seeds", "2", "-f", "json"])
    assert done.exit_code == 0, done.output
    paths = {p["path"] for p in json.loads(done.output)["paths"]}
    assert {"disagg/ndr", "disagg/e25_fp8_mod", "coloc/both"} <= paths


def test_explore_writes_a_page(runner, tmp_path):
    out = tmp_path / "e.html"
    done = runner.invoke(app, ["explore", DISAGG, "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
