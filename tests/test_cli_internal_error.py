"""An unexpected exception in any command: one line on stderr and exit 3; the traceback only with --debug.

A solver function is replaced by one that raises, in process (typer's CliRunner,
pytest's monkeypatch) and in a real `ctdsl` process (the replacement made before
`main()` runs).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
CONTENTION = str(ROOT / "examples" / "15_contention.ct")
LINE = "internal error: RuntimeError: boom in the solver; please report\n"
runner = CliRunner()


def _boom(*args, **kwargs):
    raise RuntimeError("boom in the solver")


@pytest.fixture
def broken_solver(monkeypatch):
    import ctdsl.symbolic.solve

    monkeypatch.setattr(ctdsl.symbolic.solve, "solve", _boom)


@pytest.mark.parametrize(
    "args",
    [["solve", FLAGSHIP], ["solve", FLAGSHIP, "-f", "json"], ["export", "latex", FLAGSHIP], ["sweep", FLAGSHIP]],
    ids=["solve", "solve-json", "export", "sweep"],
)
def test_one_line_and_exit_3(broken_solver, args):
    r = runner.invoke(app, args)
    assert r.exit_code == 3
    assert r.stderr == LINE
    assert r.stdout == ""
    assert isinstance(r.exception, SystemExit)  # handled: CliRunner saw only the exit


def test_debug_adds_the_traceback(broken_solver):
    r = runner.invoke(app, ["--debug", "solve", FLAGSHIP])
    assert r.exit_code == 3
    assert r.stderr.startswith("Traceback (most recent call last):\n")
    assert 'raise RuntimeError("boom in the solver")' in r.stderr
    assert r.stderr.endswith("RuntimeError: boom in the solver\n" + LINE)


def test_a_multi_line_message_stays_on_one_line(monkeypatch):
    import ctdsl.simulate.runner

    def boom(*args, **kwargs):
        raise ValueError("first\nsecond")

    monkeypatch.setattr(ctdsl.simulate.runner, "simulate", boom)
    r = runner.invoke(app, ["simulate", CONTENTION, "--steps", "5", "--seeds", "2"])
    assert r.exit_code == 3
    assert r.stderr == "internal error: ValueError: first second; please report\n"


def test_debug_is_off_again_for_the_next_command(broken_solver):
    assert runner.invoke(app, ["--debug", "solve", FLAGSHIP]).stderr.startswith("Traceback")
    assert runner.invoke(app, ["solve", FLAGSHIP]).stderr == LINE


def test_usage_errors_and_findings_keep_their_codes():
    assert runner.invoke(app, ["solve", "no/such.ct"]).exit_code == 2
    assert runner.invoke(app, ["solve", FLAGSHIP, "--format", "xml"]).exit_code == 2
    assert runner.invoke(app, ["check", str(ROOT / "tests" / "data" / "two_errors.ct")]).exit_code == 1
    assert runner.invoke(app, ["--version"]).exit_code == 0


_PROCESS = """
import sys
import ctdsl.symbolic.solve
def boom(*args, **kwargs):
    raise RuntimeError("boom in the solver")
ctdsl.symbolic.solve.solve = boom
from ctdsl.cli import main
sys.argv = ["ctdsl", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("debug", [False, True])
def test_a_real_process(debug):
    args = (["--debug"] if debug else []) + ["solve", FLAGSHIP]
    done = subprocess.run([sys.executable, "-c", _PROCESS, *args], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 3
    assert done.stdout == ""
    if debug:
        assert done.stderr.startswith("Traceback (most recent call last):\n") and done.stderr.endswith(LINE)
    else:
        assert done.stderr == LINE
