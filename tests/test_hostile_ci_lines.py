"""No line ctdsl prints is a CI runner's command (issue 25, item 4).

GitHub Actions obeys a line of a step's output as a workflow command when, after leading white
space (.NET's char.IsWhiteSpace), it starts with `::` (`::error title=...::`, `::add-mask::`,
`::stop-commands::`), and a line that holds `##[` anywhere as one in the older form
(`##[error]...`); the runner splits the output at LF, CR LF and a lone CR. `runner_commands`
below reads output that way (written from the runner's parser, actions/runner
src/Runner.Common/ActionCommand.cs, not from ctdsl's encoder), and every text format of every
command that prints spec text must give it nothing: a spec file named `::error title=x::y.ct`,
excerpts of spec lines holding `##[error]`, labels and file names with a newline in them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner
from backstop import HANG

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
# .NET's char.IsWhiteSpace: U+0009..U+000D, space, U+0085, U+00A0, and Unicode's space,
# line and paragraph separators
DOTNET_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000"


def runner_commands(output: str) -> list[str]:
    """The lines of `output` GitHub's runner would take as commands."""
    return [line for line in re.split(r"\r\n|\r|\n", output) if line.lstrip(DOTNET_SPACE).startswith("::") or "##[" in line]


def visible(output: str) -> str:
    """The output as a reader sees it (zero-width characters do not show)."""
    return output.replace("\u2060", "")


NAMES = {
    "error-command": "::error title=pwned::x.ct",
    "stop-commands": "::stop-commands::tok.ct",
    "legacy": "##[error]legacy.ct",
    "ideographic-space": "\u3000::warning::wide.ct",
    "newline": "nl\n::error::b.ct",
}

BROKEN = """\
# ##[error]forged in a comment
param x = 1 ms  # ##[warning]anywhere on the line
param y = zz  # ##[add-mask]secret
"""

GOOD = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000; label = "##[error]a label" }
link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }  # ##[error] a finding's excerpt
wan east <-> west = eth100g_dci
param spare = 1 ms
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def run(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r.exit_code, r.stdout + r.stderr


@pytest.mark.parametrize("name", sorted(NAMES))
@pytest.mark.parametrize(
    "command",
    [
        ("check",),
        ("check", "-f", "concise"),
        ("lint",),
        ("lint", "-f", "concise"),
        ("lint", "--statistics"),
        ("solve",),
    ],
    ids=lambda c: "-".join(c),
)
def test_a_hostile_file_name_and_spec_lines_start_no_command(here, name, command):
    path = here / NAMES[name]
    path.write_text(BROKEN, encoding="utf-8")
    code, out = run(*command, NAMES[name])
    assert code in (1, 2), out
    assert runner_commands(out) == [], out
    if command[0] == "check" or command[:2] == ("lint", "-f") or command == ("lint",):
        # not vacuous: the name and the excerpt are there, reading as they were written
        assert "CT309" in out
        tail = NAMES[name].split("\n")[-1]
        assert tail in visible(out).replace("\u240a", "\n"), out
    if command in (("check",), ("lint",)):
        assert "# ##[add-mask]secret" in visible(out)


@pytest.mark.parametrize(
    "command",
    [("solve",), ("solve", "--explain", "dense"), ("lint",), ("lint", "-f", "concise"), ("simulate", "--steps", "2")],
    ids=lambda c: "-".join(c),
)
def test_labels_excerpts_and_notes_of_a_spec_that_runs_start_no_command(here, command):
    name = NAMES["error-command"]
    (here / name).write_text(GOOD, encoding="utf-8")
    code, out = run(*command, name)
    assert code in (0, 1), out
    assert runner_commands(out) == [], out
    assert name in visible(out)  # shown as written
    if command in (("solve",), ("solve", "--explain", "dense"), ("lint",)):  # the label, or the excerpt
        assert "##[error]" in visible(out)


def test_a_directory_walk_and_its_unreadable_files_start_no_command(here):
    folder = here / "specs"
    folder.mkdir()
    (folder / "::error::bad.ct").write_bytes(b"\xff\xfe")  # not UTF-8: CT001 on stderr, naming the file
    (folder / "##[error]x.ct").write_text(BROKEN, encoding="utf-8")
    os.symlink("/etc/hostname", folder / "::warning::link.ct")
    code, out = run("lint", "specs")
    assert code == 2
    assert runner_commands(out) == [], out
    assert "::error::bad.ct" in visible(out) and "not UTF-8" in out


def test_the_github_format_is_left_to_its_own_escaping(here):
    # the github format is made of commands: exactly one per finding, whatever the names hold
    (here / NAMES["error-command"]).write_text(BROKEN, encoding="utf-8")
    code, out = run("lint", "-f", "github", NAMES["error-command"])
    commands = runner_commands(out)
    assert len(commands) == 1 and commands[0].startswith("::error file=%3A%3Aerror title=pwned%3A%3Ax.ct,line=3")


def test_the_installed_command_writes_through_the_encoder(here):
    # the console script, not CliRunner: the real stdout and stderr
    name = NAMES["stop-commands"]
    (here / name).write_text(BROKEN, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", "check", name],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1
    assert runner_commands(done.stdout + done.stderr) == [], done.stdout
    assert name in visible(done.stdout)


def test_data_formats_are_written_byte_for_byte(here):
    # JSON, SARIF and a fixed spec on stdout are data: a program reads them, nothing is inserted
    (here / "s.ct").write_text(BROKEN, encoding="utf-8")
    _, out = run("lint", "-f", "json", "s.ct")
    assert "\u2060" not in out
    text = "param x = 1 ms  # ##[error] kept as written\n"
    r = CliRunner().invoke(app, ["lint", "-", "--fix"], input=text)
    assert r.stdout == text
