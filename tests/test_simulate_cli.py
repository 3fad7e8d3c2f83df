"""`ctdsl simulate`: output formats, exit codes, determinism, --validate, and the
promise that check and lint never import simpy."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
runner = CliRunner()
SMALL = ["--steps", "15", "--seeds", "3", "--warmup", "2"]


def run(*args):
    return runner.invoke(app, list(args))


# the flagship's schemes are simulated step by step (their syncs overlap the backward pass or come every
# step): at 90% WAN load a step is minutes of simulated time, so these runs pick a few schemes
SOME = ["--scheme", "adamw", "--scheme", "band_switch", "--scheme", "diloco"]
TWO = ["--scheme", "adamw", "--scheme", "diloco"]


def test_flagship_at_90_percent_wan_load_shows_each_scheme_growing():
    r = run("simulate", FLAGSHIP, "--set", "wan_load=0.9", *SOME, *SMALL)
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    for title in ("Step time: closed forms and simulation", "Where the closed forms break", "Time to target", "Loaded links"):
        assert title in out
    for name in ("adamw", "band_switch", "diloco"):
        assert name in out
    assert "growth" in out and "simulated step by step" in out
    assert "wan_load = 0.9" in out.splitlines()[0]  # the header: one line, however long the spec's path
    assert r.stderr == ""


def test_json_is_deterministic_and_shows_growth():
    a = run("simulate", FLAGSHIP, "--set", "wan_load=0.9", "--format", "json", *TWO, *SMALL)
    b = run("simulate", FLAGSHIP, "--set", "wan_load=0.9", "--format", "json", *TWO, *SMALL)
    assert a.exit_code == 0 and a.stdout == b.stdout
    data = json.loads(a.stdout)
    assert data["schema"] == "ctdsl.simulate/2"
    assert data["settings"] == {"steps": 15, "seeds": 3, "warmup": 2, "seed": 0, "latency": "propagate"}
    by = {s["name"]: s for s in data["schemes"]}
    adamw, diloco = by["adamw"], by["diloco"]
    # the dense scheme that syncs every step grows far more than the one that syncs every 100 (its
    # one long flow every 100 steps is slowed 1 / (1 - rho) on the WAN shared fairly, ~8% of its step)
    assert adamw["simulated"]["growth"] > 2 > 1.2 > diloco["simulated"]["growth"]
    assert len(adamw["simulated"]["per_seed"]) == 3
    # a background transfer's closed-form wait past its S = 4 GB / 12.5 GB/s under processor sharing: rho S / (1 - rho)
    assert adamw["links"][0]["load"] == 0.9 and adamw["links"][0]["md1_wait"] == pytest.approx(0.9 * 0.32 / 0.1)
    c = run("simulate", FLAGSHIP, "--set", "wan_load=0.9", "--format", "json", "--seed", "1", *TWO, *SMALL)
    assert c.stdout != a.stdout


def test_csv_one_row_per_scheme():
    r = run("simulate", CONTENTION, "--format", "csv", *SMALL)
    assert r.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["scheme"] for row in rows] == ["adamw", "two_bit", "diloco"]
    assert float(rows[0]["sim_step_mean_s"]) > float(rows[0]["free_step_s"])


def test_scheme_filter_and_unknown_scheme():
    r = run("simulate", CONTENTION, "--scheme", "diloco", "--format", "json", *SMALL)
    assert [s["name"] for s in json.loads(r.stdout)["schemes"]] == ["diloco"]
    bad = run("simulate", CONTENTION, "--scheme", "dilocco")
    assert bad.exit_code == 2 and "diloco" in bad.stderr


@pytest.mark.parametrize("args", [["--steps", "0"], ["--seeds", "1"], ["--warmup", "-1"], ["--format", "xml"]])
def test_usage_errors_exit_2(args):
    r = run("simulate", CONTENTION, *args)
    assert r.exit_code == 2


def test_missing_file_exit_2_and_bad_spec_exit_1(tmp_path):
    assert run("simulate", "no/such.ct").exit_code == 2
    p = tmp_path / "bad.ct"
    p.write_text("link l { bandwidth = 1 GB/s; latency = 1 us; load = 1; transfer = 1 GB }\n")
    r = run("simulate", str(p))
    assert r.exit_code == 1 and "CT302" in r.stderr and "Traceback" not in r.stdout + r.stderr


def test_validate_flagship_agrees():
    r = run("simulate", FLAGSHIP, "--validate", "--seeds", "6")
    assert r.exit_code == 0, r.stdout
    assert "Simulation against the closed forms" in r.stdout and "All checks agree." in r.stdout
    assert "DISAGREES" not in r.stdout and "DIFFERS" not in r.stdout


def test_validate_json_lists_every_kind_of_check():
    r = run("simulate", CONTENTION, "--validate", "--format", "json", "--seeds", "6")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["schema"] == "ctdsl.simulate.validate/1" and data["ok"] is True
    kinds = {c["kind"] for c in data["checks"]}
    assert kinds == {"exact", "ps", "stragglers"}  # its WAN shared fairly: the processor-sharing wait, rho S / (1 - rho)
    exact = [c for c in data["checks"] if c["kind"] == "exact"]
    assert len(exact) == 3 and all(c["relative_difference"] <= 1e-9 for c in exact)
    # the spec's own load (0.5) is among the M/D/1 loads
    assert any("rho = 0.5" in c["what"] for c in data["checks"])


def test_check_and_lint_do_not_import_simpy():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from ctdsl.cli import app\n"
        f"r = CliRunner().invoke(app, ['check', {FLAGSHIP!r}])\n"
        "assert r.exit_code == 0, r.stdout\n"
        f"r = CliRunner().invoke(app, ['lint', {CONTENTION!r}])\n"
        "print('simpy' in sys.modules, 'ctdsl.simulate' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=HANG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False False"


def test_solve_table_shows_queueing_and_stragglers_for_the_example():
    r = run("solve", CONTENTION)
    assert r.exit_code == 0
    assert "queueing" in r.stdout and "stragglers" in r.stdout
    assert "exact" in r.stdout and "numerically integrated" in r.stdout and "lower bound" in r.stdout  # queueing over both WAN directions


def test_without_load_the_flagship_simulates_to_its_closed_form():
    r = run("simulate", FLAGSHIP, *SMALL)  # wan_load = 0 at its default
    assert r.exit_code == 0
    assert r.stdout.count("yes (deterministic)") == 9 and "1.00x" in r.stdout
    assert "Loaded links" not in r.stdout


def test_one_scheme_alone_gets_the_numbers_it_gets_among_all():
    alone = json.loads(run("simulate", CONTENTION, "--scheme", "two_bit", "--format", "json", *SMALL).stdout)
    full = json.loads(run("simulate", CONTENTION, "--format", "json", *SMALL).stdout)
    pick = next(s for s in full["schemes"] if s["name"] == "two_bit")
    assert alone["schemes"][0]["simulated"] == pick["simulated"]


def test_a_spec_without_schemes_gives_each_data_format_its_own_empty_result(tmp_path):
    """A data format's reader gets the format's empty form, not a sentence: simulate --format json printed
    "x.ct: no schemes to simulate" on stdout with exit 0 (found by the fuzz campaign, seed 25, input 0)."""
    spec = tmp_path / "no_schemes.ct"
    spec.write_text("param x = 1\n", encoding="utf-8")
    j = run("simulate", str(spec), "--format", "json", *SMALL)
    assert j.exit_code == 0
    data = json.loads(j.stdout)
    assert data["schema"] == "ctdsl.simulate/2" and data["schemes"] == [] and data["params"] == {"x": 1.0}
    c = run("simulate", str(spec), "--format", "csv", *SMALL)
    rows = list(csv.reader(io.StringIO(c.stdout)))
    assert c.exit_code == 0 and len(rows) == 1 and rows[0][0] == "scheme"  # the header, no row
    t = run("simulate", str(spec), *SMALL)
    assert t.exit_code == 0 and "no schemes to simulate" in t.stdout  # a person reading the table is told
