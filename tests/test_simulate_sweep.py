"""`ctdsl simulate --sweep`: at each grid point, the run `--set` gives at that point, beside the solver's step.

The references come from other commands: `ctdsl simulate --set rho=0.6` (the
same runs, so the same mean, bit for bit) and `ctdsl solve --set rho=0.6 -f json`
(the closed form). The grid 0.2:0.6:2 is linspace(0.2, 0.6, 2) = [0.2, 0.6],
ends exact; the table has 2 points x 3 schemes = 6 rows.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl import limits
from ctdsl import units as U
from ctdsl.cli import app
from ctdsl.simulate.simsweep import override_text

ROOT = Path(__file__).resolve().parents[1]
CONTENTION = str(ROOT / "examples" / "15_contention.ct")  # param rho = 0.5 in 0 .. 0.95: the WAN's load
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()
RUN = ["--seeds", "2", "--steps", "4", "--warmup", "1", "--no-progress"]
HEADER = "rho,scheme,closed_form_step_s,simulated_step_s,ci_low_s,ci_high_s,seeds"


def _sweep(*extra: str):
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", "rho=0.2:0.6:2", *RUN, *extra])
    assert r.exit_code == 0, r.output
    return r


def _rows(text: str) -> list[list[str]]:
    return [line.split(",") for line in text.strip().splitlines()[1:]]


@pytest.fixture(scope="module")
def table():
    return _sweep("-f", "csv", "-j", "1").stdout


def test_each_point_is_the_plain_run_there_and_the_solver_beside_it(table):
    assert table.splitlines()[0] == HEADER
    rows = _rows(table)
    assert [(r[0], r[1]) for r in rows] == [(x, s) for x in ("0.2", "0.6") for s in ("adamw", "two_bit", "diloco")]
    plain = runner.invoke(app, ["simulate", CONTENTION, "--set", "rho=0.6", *RUN, "-f", "json"])
    solved = runner.invoke(app, ["solve", CONTENTION, "--set", "rho=0.6", "-f", "json"])
    sims = {s["name"]: s["simulated"]["step"] for s in json.loads(plain.stdout)["schemes"]}
    steps = {s["name"]: s["step"]["seconds"] for s in json.loads(solved.stdout)["schemes"]}
    for r in rows[3:]:
        assert float(r[3]) == sims[r[1]]["mean"]  # the same runs: the same float
        assert float(r[2]) == pytest.approx(steps[r[1]], rel=1e-12)
        assert float(r[4]) < float(r[3]) < float(r[5]) and r[6] == "2"


def test_two_processes_write_the_same_csv(table, tmp_path):
    out = tmp_path / "s.csv"
    _sweep("-j", "2", "-o", str(out))
    assert out.read_text(encoding="utf-8") == table


def test_parquet_holds_the_csv_numbers_with_units(table, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "s.parquet"
    _sweep("-j", "1", "-f", "parquet", "-o", str(out))
    t = pq.read_table(out)
    assert t.column_names == HEADER.split(",")
    assert t.schema.field("simulated_step_s").metadata == {b"unit": b"s"}
    rows = _rows(table)
    assert t.column("simulated_step_s").to_pylist() == [float(r[3]) for r in rows]
    assert t.column("scheme").to_pylist() == [r[1] for r in rows]


def test_plot_and_table(tmp_path):
    png = tmp_path / "s.png"
    r = _sweep("-j", "1", "--plot", str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "closed form" in r.stdout and "adamw" in r.stdout and "95% interval" in r.stdout


def test_override_text_is_exact_in_base_units():
    """12.5 GB/s is 1.25e10 B/s: written '12500000000.0 B/s', read back as the same float."""
    bw = U.dim(B=1, s=-1)
    assert override_text(1.25e10, bw) == "12500000000.0 B/s"
    assert override_text(0.1 + 0.2, U.Dim()) == "0.30000000000000004"
    assert ctdsl.load(FLAGSHIP, {"wan_bw": override_text(1.25e10 / 3, bw)}).spec.params["wan_bw"].default == 1.25e10 / 3


def test_bad_sweeps():
    big = limits.MAX_SIM_SWEEP_POINTS + 1
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", f"rho=0.1:0.8:{big}", *RUN])
    assert r.exit_code != 0 and "CT608" in r.output and f"{big:,} points" in r.output
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", "nope=0.1:0.8:2", *RUN])
    assert r.exit_code == 1 and "CT101" in r.stderr
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", "rho=0.1:0.8", *RUN])
    assert r.exit_code == 2
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", "rho=0.1:0.8:2", "--partial", "p.json", *RUN])
    assert r.exit_code == 2 and "--partial" in r.stderr
    r = runner.invoke(app, ["simulate", CONTENTION, "-o", "x.csv", *RUN])
    assert r.exit_code == 2 and "--sweep" in r.stderr
    r = runner.invoke(app, ["simulate", CONTENTION, "--sweep", "rho=0.1:0.8:2", "-f", "parquet", *RUN])
    assert r.exit_code == 2 and "-o" in r.stderr
