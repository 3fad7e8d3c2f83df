"""Hostile input that does not crash but must still be handled: what reaches each sink, and files that are not specs.

- class 6 (output injection): markup from labels and the opening comment reaches the
  Markdown report escaped, rich markup in a label prints as text, no ESC from a spec
  reaches the terminal, a label starting with `=` is guarded in CSV;
- class 8: every diagnostic of 9,000 duplicate WAN statements has a code;
- class 11: a TeX `^^` escape in a display name does not reach the .tex; `ctdsl lint
  DIR` does not follow a symbolic link out of DIR into another file;
- class 5: an import through a symbolic-link loop, a FIFO in a linted directory and
  /dev/zero as an input end in a diagnostic (the last in a child process under a
  memory limit, so that a failure cannot exhaust the suite's memory).

Each command runs under a wall-clock limit at HANG (tests/backstop.py): a backstop for
a command that would never end, far above any command's time. A check that still fails is
xfail(strict=True) with the class of issue 18 it belongs to.
"""

from __future__ import annotations

import re

import csv
import io
import json
import os
import resource
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from backstop import HANG
from fuzz.cases import HOSTILE
from fuzz.harness import ROOT, Interrupted, time_limit
from fuzz.hostile_large import duplicate_wans

LIMIT = HANG
INJECTION = HOSTILE / "c06_injection.ct"
runner = CliRunner()


def run(*args: str, limit: float = LIMIT):
    from ctdsl.cli import app

    try:
        with time_limit(limit):
            r = runner.invoke(app, list(args))
    except Interrupted:
        pytest.fail(f"ctdsl {' '.join(args)} did not end within {limit:g} s")
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1, 2), (r.exit_code, r.stderr[-2000:])
    return r


def test_markdown_report_escapes_markup(tmp_path):
    out = tmp_path / "r.md"
    assert run("report", str(INJECTION), "-o", str(out)).exit_code == 0
    text = out.read_text(encoding="utf-8").lower()
    assert "<script" not in text and "<img" not in text
    # `[x](javascript:...)` is a link only when its `]` is not escaped: every one must be `\]`
    assert "javascript:" in text and not re.search(r"(?<!\\)\]\(javascript:", text)


def test_html_report_escapes_markup(tmp_path):
    out = tmp_path / "r.html"
    assert run("report", str(INJECTION), "-o", str(out)).exit_code == 0
    text = out.read_text(encoding="utf-8").lower()
    assert "<script>alert" not in text and "<img src=x" not in text and 'href="javascript:' not in text


def test_rich_markup_in_a_label_prints_as_text():
    r = run("solve", str(INJECTION))
    assert r.exit_code == 0
    assert "[/bold]" in r.stdout


def test_no_escape_character_from_a_spec_reaches_the_terminal():
    r = run("solve", str(INJECTION))
    assert r.exit_code == 0
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr


def test_csv_cells_are_guarded_against_formulas():
    r = run("solve", str(HOSTILE / "c06_csv_formula.ct"), "--format", "csv")
    assert r.exit_code == 0
    cells = [cell for row in csv.reader(io.StringIO(r.stdout)) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@")]
    # the solve CSV carries no label; the one CSV encoder guards any text that would start a formula
    from ctdsl.report.encode import csv_cell

    assert csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")" and csv_cell("@SUM(A1)") == "'@SUM(A1)"


def test_tex_caret_escapes_do_not_reach_latex():
    r = run("export", "latex", str(HOSTILE / "c11_tex_caret_input.ct"))
    assert "^^" not in r.stdout  # the checker may refuse the name (exit 1), or the LaTeX must escape it


def test_every_diagnostic_of_duplicate_wans_has_a_code(tmp_path):
    spec = tmp_path / "dups.ct"
    spec.write_text(duplicate_wans(9_000), encoding="utf-8")
    r = run("check", str(spec), "--format", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    diags = data["diagnostics"] if isinstance(data, dict) else data
    assert diags and all(str(d.get("code", "")).startswith("CT") for d in diags)


def test_lint_does_not_follow_a_symlink_out_of_the_directory(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-MARKER-4711 = root:x:0:0\n", encoding="utf-8")
    linted = tmp_path / "specs"
    linted.mkdir()
    (linted / "leak.ct").symlink_to(secret)
    r = run("lint", str(linted), "--format", "text")
    assert "SECRET-MARKER-4711" not in r.stdout + r.stderr


def test_an_import_through_a_symlink_loop_is_a_diagnostic(tmp_path):
    (tmp_path / "a.ct").symlink_to(tmp_path / "b.ct")
    (tmp_path / "b.ct").symlink_to(tmp_path / "a.ct")
    spec = tmp_path / "main.ct"
    spec.write_text('import "a.ct"\n', encoding="utf-8")
    r = run("check", str(spec))
    assert r.exit_code in (1, 2)


def test_a_fifo_in_a_linted_directory_does_not_hang_lint(tmp_path):
    os.mkfifo(tmp_path / "pipe.ct")
    (tmp_path / "ok.ct").write_text("param x = 1\n", encoding="utf-8")
    run("lint", str(tmp_path))  # opening the FIFO to read it would wait for a writer for ever: stopped at the backstop


def test_an_import_fan_out_is_bounded(tmp_path):
    """Six levels of ten files, each importing every file of the next level: 10^6 paths unless shared."""
    for level in range(6):
        for i in range(10):
            imports = "".join(f'import "l{level + 1}_{j}.ct"\n' for j in range(10)) if level < 5 else ""
            (tmp_path / f"l{level}_{i}.ct").write_text(imports + f"param p{level}_{i} = 1\n", encoding="utf-8")
    run("check", str(tmp_path / "l0_0.ct"))


def _limited_memory():  # pragma: no cover (runs in the child)
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("command", [["check"], ["solve"], ["lint"]])
def test_dev_zero_is_not_read_to_the_end(command):
    code = "import sys; from ctdsl.cli import main; sys.argv = ['ctdsl'] + sys.argv[1:]; main()"
    try:
        p = subprocess.run([sys.executable, "-c", code, *command, "/dev/zero"], capture_output=True, text=True,
                           timeout=LIMIT, preexec_fn=_limited_memory, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ctdsl {command[0]} /dev/zero did not end within {LIMIT:g} s")
    assert p.returncode in (1, 2), p.stderr[-2000:]
    assert "Traceback" not in p.stderr
