"""No output depends on where the spec lives or on the terminal's width.

The representative commands (solve and simulate tables, lint and check text) run
on a copy of a spec under a 200-character directory path and under a short one
in /tmp, named by its absolute path and by a path relative to the current
directory, at COLUMNS=40, 80 and 300: once the path text itself is replaced,
every output is the same, byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {
    "solve": ("specs/llama70b_wan.ct", ["solve", "SPEC"]),
    "simulate": ("specs/llama70b_wan.ct", ["simulate", "SPEC", "--steps", "5", "--seeds", "2", "--warmup", "1"]),
    "lint": ("tests/lint/sample.ct", ["lint", "SPEC"]),
    "check": ("tests/data/two_errors.ct", ["check", "SPEC"]),
}
WIDTHS = ("40", "80", "300")
runner = CliRunner()


def _long_dir(base: Path, length: int = 200) -> Path:
    """A directory under `base` whose path is exactly `length` characters long."""
    path = base
    while len(str(path)) < length:
        room = length - len(str(path)) - 1
        path = path / ("d" * min(room, 60))
    assert len(str(path)) == length
    path.mkdir(parents=True)
    return path


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    long = _long_dir(tmp_path_factory.mktemp("long"))
    short = Path(tempfile.mkdtemp(prefix="x", dir="/tmp"))
    yield {"long": long, "short": short}
    shutil.rmtree(short, ignore_errors=True)


def _copy(rel: str, where: Path) -> Path:
    target = where / Path(rel).name
    if not target.exists():
        shutil.copyfile(ROOT / rel, target)
    return target


def _run(args: list[str], spec: str, columns: str, cwd: Path) -> tuple[int, str]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        r = runner.invoke(app, [spec if a == "SPEC" else a for a in args], env={"COLUMNS": columns})
    finally:
        os.chdir(before)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.exit_code, (r.stdout + "\n--- stderr ---\n" + r.stderr).replace(spec, "SPEC")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_same_output_at_any_path_and_width(name, places, tmp_path):
    rel, args = COMMANDS[name]
    outputs = {}
    for where, directory in places.items():
        spec = _copy(rel, directory)
        for columns in WIDTHS:
            outputs[(where, "absolute", columns)] = _run(args, str(spec), columns, tmp_path)
        outputs[(where, "relative", "80")] = _run(args, spec.name, "80", directory)
    first = next(iter(outputs.values()))
    assert "SPEC" in first[1]
    for key, out in outputs.items():
        assert out == first, f"{name}: output differs at {key}"


def test_a_real_process_at_two_widths_and_a_dumb_terminal(places):
    spec_long = _copy("specs/llama70b_wan.ct", places["long"])
    spec_short = _copy("specs/llama70b_wan.ct", places["short"])
    outs = []
    for spec, extra in ((spec_long, {"COLUMNS": "40"}), (spec_short, {"COLUMNS": "300", "TERM": "dumb"})):
        env = {**os.environ, **extra}
        env.pop("FORCE_COLOR", None)
        done = subprocess.run(
            [sys.executable, "-c", "from ctdsl.cli import main; main()", "solve", str(spec)],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.replace(str(spec), "SPEC"))
    assert outs[0] == outs[1]
    assert max(len(line) for line in outs[0].splitlines()) > 100  # the tables keep their width at COLUMNS=40
