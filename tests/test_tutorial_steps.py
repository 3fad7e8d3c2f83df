"""The tutorial's last step runs as written: its commands on the study of step 8.

The spec is the last complete ```ct block of step 8 in docs/tutorial.md, saved as
spec.ct; the commands are the ```sh block of step 11, each run through the CLI
in that folder. Each must exit 0 and write the file it names.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}.*?(?=^## |\Z)", TUTORIAL, flags=re.M | re.S)
    assert m, title
    return m.group(0)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def _commands() -> list[list[str]]:
    (block,) = _blocks(_section("11."), "sh")
    out = []
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words = shlex.split(line)
            assert words[0] == "ctdsl", line
            out.append(words[1:])
    return out


COMMANDS = _commands()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tutorial")
    spec = _blocks(_section("8."), "ct")[-1]
    (d / "spec.ct").write_text(spec, encoding="utf-8")
    return d


def test_the_step_has_the_commands_it_promises():
    assert [c[0] for c in COMMANDS] == ["sweep", "sweep", "report", "export", "lint", "explore"]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_command_runs_as_written(folder, monkeypatch, args):
    monkeypatch.chdir(folder)
    r = CliRunner().invoke(app, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    if "-o" in args or "--plot" in args:
        target = args[args.index("-o" if "-o" in args else "--plot") + 1]
        assert (folder / target).stat().st_size > 0
