"""A sweep asked for on the command line is held to a declared sweep's bound; SIGTERM leaves no .part.

Issue 25, item 10. `--sweep x=1:2:100000000` was held only to the command
line's own 10^8 points an axis (7.4 GB of CSV after 240 s), where a declared
sweep has MAX_SWEEP_POINTS an axis and MAX_GRID_POINTS in all: one function
(`ctdsl.api.sweep_axes`) now bounds and reads every sweep asked for, for
`ctdsl sweep`, `ctdsl simulate --sweep` and `Study.sweep`, and reads the ends
from the spec as it was loaded, not from the file again. A sweep stopped by
SIGTERM left its hidden `.part` file (896 MB after 30 s): the entry point now
turns SIGTERM into an exception, and the file written half-way is removed; the
test sends the signal to a real process in the middle of writing.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl import limits
from ctdsl.api import check
from ctdsl.cli import app
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
runner = CliRunner()
ONE_MORE = limits.MAX_SWEEP_POINTS + 1


def run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"NO_COLOR": "1"})


def test_a_command_line_axis_past_a_declared_sweeps_bound_is_ct607_before_anything_is_written(tmp_path):
    out = tmp_path / "grid.csv"
    r = run("sweep", FLAGSHIP, "--sweep", f"wan_bw=1 GB/s:2 GB/s:{ONE_MORE}", "-o", out)
    assert r.exit_code == 1, r.output
    assert f"--sweep wan_bw:1:1: CT607 the sweep of 'wan_bw' has {ONE_MORE:,} points; at most {limits.MAX_SWEEP_POINTS:,} are swept on one axis" in r.stderr
    assert not out.exists() and not list(tmp_path.iterdir())


def test_the_attack_of_a_hundred_million_points_is_ct607():
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:2 GB/s:100000000")
    assert r.exit_code == 1 and "CT607" in r.stderr and "100,000,000 points" in r.stderr and r.stdout == ""


def test_a_command_line_grid_past_the_bound_is_ct607_at_the_sweeps():
    r = run("sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:2 GB/s:1000", "--sweep", "budget=10 GFLOP/s:20 GFLOP/s:1001")
    assert r.exit_code == 1, r.output
    assert "CT607 the sweeps make a grid of 1,000 x 1,001 = 1,001,000 points; at most 1,000,000 are swept" in r.stderr
    assert "--sweep budget:1:1" in r.stderr and "1,000 points" in r.stderr  # the other sweep, as a secondary place


def test_at_the_bound_the_grid_is_swept():
    r = run("sweep", FLAGSHIP, "--sweep", f"wan_bw=1 GB/s:2 GB/s:{limits.MAX_SWEEP_POINTS}", "--sweep", "budget=10 GFLOP/s:20 GFLOP/s:1", "--format", "json")
    assert r.exit_code == 0, r.stderr


def test_simulate_sweep_is_held_to_the_same_bound():
    r = run("simulate", CONTENTION, "--sweep", f"rho=0.1:0.8:{ONE_MORE}", "--steps", "2")
    assert r.exit_code == 1, r.output
    assert "CT607" in r.stderr and "CT608" not in r.stderr


def test_study_sweep_is_held_to_the_same_bound():
    study = ctdsl.load(FLAGSHIP)
    with pytest.raises(ctdsl.SpecError) as err:
        study.sweep({"wan_bw": ("1 GB/s", "2 GB/s", ONE_MORE)})
    assert [d.code for d in err.value.diagnostics] == ["CT607"]
    with pytest.raises(ctdsl.SpecError) as err:
        study.sweep({"wan_bw": ("1 GB/s", "2 GB/s", 1000), "budget": ("10 GFLOP/s", "20 GFLOP/s", 1001)})
    assert [d.code for d in err.value.diagnostics] == ["CT607"] and "1,001,000 points" in err.value.diagnostics[0].message


def test_the_ends_are_read_against_the_spec_as_loaded_not_as_the_file_is_now(tmp_path):
    """The spec is changed on disk after it was loaded (a bandwidth of 0 at every value): the
    sweep's ends are still those of the spec loaded, and its values the same."""
    path = tmp_path / "spec.ct"
    text = Path(FLAGSHIP).read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    study = ctdsl.load(path)
    axes = {"wan_bw": ("1 GB/s", "100 GB/s", 5, "log"), "budget": ("10 GFLOP/s", "90 GFLOP/s", 3)}
    before = study.sweep(axes)
    path.write_text(text.replace("param wan_bw", "param nothing = 0 GB/s\nparam wan_bw").replace("bandwidth = wan_bw", "bandwidth = nothing"), encoding="utf-8")
    assert not check(path).ok  # the file as it is now does not check
    after = study.sweep(axes)
    assert after.columns == before.columns
    for name in before.columns:
        assert after[name].tolist() == before[name].tolist(), name


def _sweep_process(out: Path) -> subprocess.Popen:
    # SIGINT as under a terminal (Python's handler): a background shell may start us with it ignored
    code = "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); from ctdsl.cli import main; sys.argv = ['ctdsl'] + sys.argv[1:]; main()"
    args = ["sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:100 GB/s:100000", "--sweep", "budget=10 GFLOP/s:20 GFLOP/s:10", "-o", str(out)]
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _part_growing(folder: Path, proc: subprocess.Popen) -> str:
    """The hidden .part file once it holds a megabyte (the sweep is writing), while the process runs."""
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline and proc.poll() is None:
        parts = glob.glob(str(folder / ".grid.csv.*.part"))
        if parts and os.path.getsize(parts[0]) > 1_000_000:
            return parts[0]
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"the sweep never wrote a megabyte: {proc.communicate()}")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_in_the_middle_of_writing_leaves_no_part_file(tmp_path, sig, code):
    out = tmp_path / "grid.csv"
    proc = _sweep_process(out)
    part = _part_growing(tmp_path, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG)
    assert proc.returncode == code, err
    assert not os.path.exists(part) and not out.exists()
    assert list(tmp_path.iterdir()) == [] and "Traceback" not in err
