"""A spec that checks clean but cannot be solved gives a coded diagnostic (CT7xx), never a traceback.

The chunks of tests/solve_errors/*.ct (format: tools/chunkedfile.py) must check
clean and then fail to solve with exactly the diagnostics they announce. The
commands that solve (`solve`, `export latex`, `sweep`, `report`) print that
diagnostic at the statement that asked, with file:line:col, and exit 1, in
process (typer's CliRunner) and as a real `ctdsl` process.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl.symbolic.breakeven as breakeven_module
from ctdsl.api import check, load
from ctdsl.cli import app
from ctdsl.codes import CODES
from ctdsl.diagnostics import render_text
from ctdsl.failure import Failure

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from chunkedfile import SPEC_NAME, mismatches, read_chunks  # noqa: E402

SOLVE_ERRORS = ROOT / "tests" / "solve_errors"
CHUNKS = [c for f in sorted(SOLVE_ERRORS.glob("*.ct")) for c in read_chunks(f)]
FLAGSHIP = ROOT / "tests" / "data" / "llama70b_workers.ct"  # the study with single-GPU workers
runner = CliRunner()


def _chunk(code: str):
    return next(c for c in CHUNKS if c.codes == {code})


def _write(tmp_path: Path, chunk) -> Path:
    path = tmp_path / "spec.ct"
    path.write_text(chunk.text, encoding="utf-8")
    return path


def _breakeven_line(chunk) -> int:
    return next(n for n, line in enumerate(chunk.text.splitlines(), start=1) if line.startswith("breakeven "))


@pytest.mark.parametrize("chunk", CHUNKS, ids=lambda c: c.id)
def test_chunk_checks_clean_and_fails_to_solve_as_announced(chunk, monkeypatch):
    monkeypatch.chdir(chunk.file.parent)
    result = check(SPEC_NAME, text=chunk.text)
    assert result.ok, [d.message for d in result.diagnostics]
    from ctdsl.symbolic.solve import solve

    from ctdsl.numeric.search import run_search

    with pytest.raises(Failure) as caught:
        solution = solve(result.spec)
        for s in result.spec.searches:  # a design search fails after the solve (CT703)
            run_search(solution, s)
    diags = list(caught.value.diagnostics)
    rendered = {id(d): render_text(d, result.sources) for d in diags}
    problems = mismatches(chunk, diags)  # quoted texts in the findings' own words (chunkedfile.finding_text)
    assert not problems, "\n".join(problems) + "\n\n" + "\n\n".join(rendered.values())


def test_every_solving_code_has_a_chunk():
    covered = {e.code for c in CHUNKS for e in c.expectations}
    solving = {code for code in CODES if code.startswith("CT7")}
    assert solving and solving <= covered, sorted(solving - covered)


@pytest.mark.parametrize("code", ["CT701", "CT702"])
def test_solve_prints_the_diagnostic_at_the_breakeven_and_exits_1(tmp_path, code):
    chunk = _chunk(code)
    path = _write(tmp_path, chunk)
    r = runner.invoke(app, ["solve", str(path)])
    assert r.exit_code == 1, r.output
    assert r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}:{_breakeven_line(chunk)}:1: {code} break-even dense vs two_bit")
    assert "^^^^" in r.stderr and "this break-even" in r.stderr and "= help:" in r.stderr
    assert r.stderr.rstrip().endswith("Found 1 error.")
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


@pytest.mark.parametrize(
    "args",
    [["export", "latex", "SPEC"], ["sweep", "SPEC", "--format", "json"], ["report", "SPEC", "-o", "OUT/report.md"]],
    ids=["export", "sweep", "report"],
)
def test_every_command_that_solves_reports_it(tmp_path, args):
    path = _write(tmp_path, _chunk("CT702"))
    args = [a.replace("SPEC", str(path)).replace("OUT", str(tmp_path)) for a in args]
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith(f"{path}:{_breakeven_line(_chunk('CT702'))}:1: CT702 ")
    assert "Traceback" not in r.output
    assert not (tmp_path / "report.md").exists()


def test_regime_limit_forced_on_the_flagship(monkeypatch):
    # every break-even of the flagship has 2 regime pairs: a limit of 1 fails the first one,
    # `breakeven band_switch vs adamw over wan_bw` on line 136
    monkeypatch.setattr(breakeven_module, "MAX_REGIMES", 1)
    r = runner.invoke(app, ["solve", str(FLAGSHIP)])
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{FLAGSHIP}:136:1: CT701 break-even band_switch vs adamw over wan_bw: ")
    assert "more than 1 regimes" in r.stderr and "Traceback" not in r.output
    with pytest.raises(Failure) as caught:
        load(FLAGSHIP).solve()
    (d,) = caught.value.diagnostics
    assert (d.code, d.span.line, d.span.col, d.span.end_col) == ("CT701", 136, 1, 1 + len("breakeven band_switch vs adamw over wan_bw"))


def test_regime_limit_of_a_baseline_comparison_points_at_the_scheme(tmp_path, monkeypatch):
    # no breakeven statement: the baseline asks for x vs y over b (the first ranged data rate)
    path = tmp_path / "base.ct"
    path.write_text(
        textwrap.dedent(
            """\
            param b = 5 GB/s in 1 GB/s .. 100 GB/s log 20
            model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
            device d { peak = 100 TFLOP/s; efficiency = 1 }
            link lan { bandwidth = 10 GB/s; latency = 1 us }
            link wan { bandwidth = b; latency = 10 us }
            switch s {}
            dc east { workers = 2; device = d; link = lan; switch = s }
            dc west : east {}
            wan east <-> west = wan
            scheme y { payload = dense; collective = hier_allreduce; steps = 100 }
            scheme x { payload = quantise; bits = 2 b; collective = hier_allreduce; steps = 400 }
            baseline y
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(breakeven_module, "MAX_REGIMES", 1)
    r = runner.invoke(app, ["solve", str(path)])
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{path}:11:8: CT701 break-even x vs y over b: "), r.stderr
    assert "compared with the baseline y" in r.stderr


def test_a_real_process_prints_the_diagnostic_not_a_traceback(tmp_path):
    path = _write(tmp_path, _chunk("CT701"))
    done = subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", "solve", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith(f"{path}:{_breakeven_line(_chunk('CT701'))}:1: CT701 ")
    assert "Traceback" not in done.stderr
