"""--help at 80 columns: flags take no value, and no example breaks inside its arguments.

Each command's docstring lists examples under `Examples:`; at 80 columns (the
terminal most people have), every such line must appear whole in the help, so
that it can be copied. The expected lines are read from the commands'
docstrings, the help text from the CLI.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from backstop import HANG
from ctdsl.cli import app


def commands():
    root = get_command(app)
    out = [((), root)]
    todo = [((), root)]
    while todo:
        path, group = todo.pop()
        for name in sorted(getattr(group, "commands", {})):
            cmd = group.commands[name]
            out.append((path + (name,), cmd))
            if getattr(cmd, "commands", None):
                todo.append((path + (name,), cmd))
    return out


def examples(cmd) -> list[str]:
    text = (cmd.help or "") + "\n" + (cmd.epilog or "")
    lines = text.splitlines()
    if not any(line.strip() == "Examples:" for line in lines):
        return []
    start = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    return [line.strip() for line in lines[start + 1 :] if line.strip().startswith("ctdsl")]


CASES = [(" ".join(p) or "ctdsl", p, c) for p, c in commands()]


@pytest.mark.parametrize("name, path, cmd", CASES, ids=[c[0] for c in CASES])
def test_help_at_80_columns(name, path, cmd):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERM": "dumb"}, catch_exceptions=False)
    assert result.exit_code == 0
    out = result.stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "<bool>" not in out and "<str>" not in out
    shown = [" ".join(line.split()) for line in out.splitlines()]
    for ex in examples(cmd):
        assert any(" ".join(ex.split()) == s for s in shown), f"{name}: example broken at 80 columns: {ex}"


def test_every_command_has_examples():
    missing = [name for name, _, cmd in CASES if not getattr(cmd, "commands", None) and not examples(cmd)]
    assert missing == []


def test_solve_tables_at_80_columns_keep_names_whole():
    """On an 80-column terminal the tables shrink, but no scheme name is broken across lines."""
    from io import StringIO

    from rich.console import Console

    import ctdsl
    from ctdsl.report.tables import render_rich

    sol = ctdsl.load(str(Path(__file__).resolve().parents[1] / "specs" / "llama70b_wan.ct")).solve()
    buf = StringIO()
    render_rich(sol, Console(file=buf, width=80, force_terminal=True, color_system=None, legacy_windows=False))
    rows = [line for line in buf.getvalue().splitlines() if line.startswith("│")]
    firsts = {line.split("│")[1].strip() for line in rows}
    # a first cell is a whole name (a scheme, the model, a break-even's pair), or empty on a
    # row's continuation lines; a fragment such as "band_modu" / "le" is a broken name
    # ("all": the job-size table's row for schemes that share their sites)
    whole = set(sol.schemes) | set(sol.spec.models) | {f"{b.x} vs {b.y}" for b in sol.spec.breakevens} | {"", "all"}
    assert firsts - whole == set()
    assert set(sol.schemes) <= firsts


def test_completion_is_installable():
    """As a user's bash runs it: the shell is found from the process's parents (shellingham), so
    the command runs under bash (`; exit` keeps bash from replacing itself with it); in-process,
    a test run started without a terminal has no shell to find ("Shell  not supported")."""
    code = "import sys; from ctdsl.cli import main; sys.argv = ['ctdsl', '--show-completion']; main()"
    done = subprocess.run(["bash", "-c", f'{shlex.quote(sys.executable)} -c "{code}"; exit $?'], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0 and "_CTDSL_COMPLETE=complete_bash" in done.stdout, done.stdout + done.stderr


def test_python_dash_m_runs_the_command_line(tmp_path):
    """`python -m ctdsl` is the command line: its exit code and output are the installed script's."""
    spec = tmp_path / "bad.ct"
    spec.write_text("param x = 1 GB/s\nlink l { bandwidth = y }\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "ctdsl", "check", str(spec)], capture_output=True, text=True,
                          timeout=HANG, cwd=tmp_path)
    inproc = CliRunner().invoke(app, ["check", str(spec)])
    assert done.returncode == inproc.exit_code == 1
    assert "CT" in done.stdout + done.stderr and "Traceback" not in done.stderr
    usage = subprocess.run([sys.executable, "-m", "ctdsl", "--help"], capture_output=True, text=True, timeout=HANG,
                           env={"COLUMNS": "80", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert usage.returncode == 0 and "python -m ctdsl" in usage.stdout
