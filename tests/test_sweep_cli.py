"""`ctdsl sweep`: output, --sweep parsing and its diagnostics, determinism, lazy imports."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), env={"NO_COLOR": "1"})


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_default_grid_is_the_spec_sweeps():
    r = run("sweep", FLAGSHIP)
    assert r.exit_code == 0, r.stderr
    got = rows(r.stdout)
    # wan_bw log 41 x budget lin 10; eff and wan_load have no sweep
    assert len(got) == 41 * 10
    assert {g["eff"] for g in got} == {"0.4"}
    assert got[0]["wan_bw_B_per_s"] == "100000000.0" and got[-1]["wan_bw_B_per_s"] == "1000000000000.0"
    assert [g["budget_FLOP_per_s"] for g in got[:2]] == ["10000000000.0", "19888888888.88889"]
    cols = list(got[0])
    for s in ("adamw", "band_switch", "diloco"):
        for c in ("step_s", "time_to_target_s", "energy_to_target_J", "binding"):
            assert f"{s}.{c}" in cols
    assert cols[-1] == "winner"


def test_rows_match_solve(tmp_path):
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=0.5 GB/s:50 GB/s:3:log")
    assert r.exit_code == 0, r.stderr
    got = rows(r.stdout)
    assert [float(g["wan_bw_B_per_s"]) for g in got] == pytest.approx([5e8, 5e9, 5e10], rel=1e-15)
    for g in got:
        sol = ctdsl.load(FLAGSHIP, {"wan_bw": f"{float(g['wan_bw_B_per_s'])!r} B/s"}).solve()
        for name, s in sol.schemes.items():
            assert float(g[f"{name}.time_to_target_s"]) == pytest.approx(s.time_to_target.value, rel=1e-12)
            assert float(g[f"{name}.step_s"]) == pytest.approx(s.step_time.value, rel=1e-12)
            assert float(g[f"{name}.energy_to_target_J"]) == pytest.approx(s.energy_to_target.value, rel=1e-12)
            assert g[f"{name}.binding"] == s.binding.label  # the sweep's columns name a component as the tables do
        best = min(sol.schemes.values(), key=lambda s: s.time_to_target.value)
        assert g["winner"] == best.name


def test_chunk_size_does_not_change_a_byte():
    args = ["sweep", FLAGSHIP, "--sweep", "wan_bw=0.1 GB/s:1000 GB/s:301:log", "--sweep", "eff=0.2:0.6:7", "--components"]
    a = run(*args, "--chunk", "1")
    b = run(*args, "--chunk", "97")
    c = run(*args)
    assert a.exit_code == b.exit_code == c.exit_code == 0
    assert a.stdout == b.stdout == c.stdout
    assert len(rows(a.stdout)) == 301 * 7


def test_json_output(tmp_path):
    out = tmp_path / "s.json"
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:100 GB/s:5:log", "-f", "json", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    d = json.loads(out.read_text())
    assert d["schema"] == "ctdsl.sweep/1"
    assert d["points"] == len(d["rows"]) == 5
    assert d["axes"] == [{"name": "wan_bw", "unit": "B/s", "lo": 1e9, "hi": 1e11, "count": 5, "spacing": "log"}]
    assert d["params"]["budget"] == {"unit": "FLOP/s", "value": 5e10, "swept": False}
    assert len(d["columns"]) == len(d["units"]) == len(d["rows"][0])
    i = d["columns"].index("adamw.time_to_target_s")
    assert d["units"][i] == "s"
    csv_rows = rows(run("sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:100 GB/s:5:log").stdout)
    assert [row[i] for row in d["rows"]] == [float(c["adamw.time_to_target_s"]) for c in csv_rows]


def test_values_that_cannot_be_computed_are_empty_or_null(tmp_path):
    spec = tmp_path / "nosteps.ct"
    text = Path(FLAGSHIP).read_text().replace("  steps = 10000\n", "")
    spec.write_text(text)
    r = run("sweep", str(spec), "--sweep", "wan_bw=1 GB/s:2 GB/s:2")
    assert r.exit_code == 0, r.stderr
    got = rows(r.stdout)
    assert got[0]["adamw.time_to_target_s"] == "" and got[0]["adamw.step_s"] != ""
    j = run("sweep", str(spec), "--sweep", "wan_bw=1 GB/s:2 GB/s:2", "-f", "json")
    d = json.loads(j.stdout)
    assert d["rows"][0][d["columns"].index("adamw.energy_to_target_J")] is None


def test_a_name_alone_sweeps_the_spec_range():
    r = run("sweep", FLAGSHIP, "--sweep", "budget")
    assert r.exit_code == 0, r.stderr
    got = rows(r.stdout)
    assert len(got) == 10 and {g["wan_bw_B_per_s"] for g in got} == {"12500000000.0"}


def test_set_applies_to_the_fixed_params():
    r = run("sweep", FLAGSHIP, "--sweep", "budget=10 GFLOP/s:20 GFLOP/s:2", "--set", "wan_bw=25 GB/s")
    assert r.exit_code == 0, r.stderr
    assert {g["wan_bw_B_per_s"] for g in rows(r.stdout)} == {"25000000000.0"}


@pytest.mark.parametrize(
    "value, code",
    [
        ("wan=1 GB/s:2 GB/s:3", "CT101"),  # unknown param
        ("wan_bw=1 ms:2 ms:3", "CT202"),  # wrong dimension
        ("wan_bw=1 GBs:2 GB/s:3", "CT205"),  # unknown unit
        ("wan_bw=0 GB/s:2 GB/s:3", "CT301"),  # the low end is a bandwidth of zero
        ("eff=0.5:1.5:3", "CT302"),  # the high end is not a fraction
        ("wan_bw=5 GB/s:1 GB/s:3", "CT307"),  # reversed
        ("wan_load=0:0.5:3:log", "CT307"),  # log from zero
        ("wan_bw=1 GB/s +:2 GB/s:3", "CT004"),  # not an expression
    ],
)
def test_bad_sweep_values_are_diagnostics(value, code):
    r = run("sweep", FLAGSHIP, "--sweep", value)
    assert r.exit_code == 1, r.stdout
    assert code in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert r.stdout == ""


def test_sweep_diagnostics_name_the_sweep():
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=1 GBs:2 GB/s:3")
    assert "--sweep wan_bw (low end)" in r.stderr and "--set" not in r.stderr
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=0 GB/s:2 GB/s:3")
    assert "low end of the sweep" in r.stderr


def test_a_param_without_range_needs_one():
    r = run("sweep", FLAGSHIP, "--sweep", "eff", "--set", "wan_bw=1 GB/s")
    assert r.exit_code == 0  # eff has a range in the spec (no spacing): lin, 11 points
    assert len(rows(r.stdout)) == 11


@pytest.mark.parametrize(
    "args, text",
    [
        (["--sweep", "wan_bw=1 GB/s:2 GB/s"], "name=lo:hi:n"),
        (["--sweep", "wan_bw=1 GB/s:2 GB/s:x"], "whole number"),
        (["--sweep", "wan_bw=1 GB/s:2 GB/s:0"], "whole number"),
        (["--sweep", "wan_bw=1 GB/s:2 GB/s:3:cubic"], "lin or log"),
        (["--sweep", "wan bw"], "name=lo:hi:n"),
        (["--sweep", "budget", "--sweep", "budget"], "twice"),
        (["--sweep", "budget", "--set", "budget=20 GFLOP/s"], "both"),
        (["--plot", "out.gif"], ".png, .svg or .pdf"),
        (["--chunk", "0"], "chunk"),
    ],
)
def test_malformed_arguments_are_usage_errors(args, text):
    r = run("sweep", FLAGSHIP, *args)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert text in r.stderr and "Traceback" not in r.stderr


def test_missing_file_and_bad_spec(tmp_path):
    assert run("sweep", "no/such/file.ct").exit_code == 2
    bad = tmp_path / "bad.ct"
    bad.write_text("link l { bandwidth = 5 ms; latency = 1 us }\n")
    r = run("sweep", str(bad))
    assert r.exit_code == 1 and "CT202" in r.stderr


def test_unwritable_output_is_a_usage_error(tmp_path):
    r = run("sweep", FLAGSHIP, "-o", str(tmp_path / "no" / "such" / "dir" / "x.csv"))
    assert r.exit_code == 2 and "cannot write" in r.stderr


def test_same_spec_same_bytes_across_processes(tmp_path):
    outs = []
    for _ in range(2):
        p = subprocess.run(
            [sys.executable, "-c", "from ctdsl.cli import main; main()", "sweep", FLAGSHIP, "--sweep", "wan_bw=0.1 GB/s:1000 GB/s:50:log", "-f", "json"],
            capture_output=True,
            cwd=ROOT,
        )
        assert p.returncode == 0, p.stderr
        outs.append(p.stdout)
    assert outs[0] == outs[1]


def test_check_and_lint_never_import_numpy_or_matplotlib():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from ctdsl.cli import app\n"
        f"CliRunner().invoke(app, ['check', {FLAGSHIP!r}])\n"
        f"CliRunner().invoke(app, ['lint', {FLAGSHIP!r}])\n"
        "print(sorted(m for m in ('numpy', 'matplotlib') if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


@pytest.mark.parametrize("text", ["compute", "queueing on wan, ib_ndr", 'a "quoted" name', "two\nlines", "cr\rhere", " spaced ", ""])
def test_csv_fields_are_quoted_as_the_csv_module_quotes_them(text):
    from ctdsl.report.sweepout import _quoted

    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([text, "x"])
    assert buf.getvalue() == _quoted(text) + ",x\n"
