"""Every spec under specs/ and examples/ checks clean with `ctdsl check` (exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.api import check
from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(p.relative_to(ROOT) for folder in ("specs", "examples") for p in (ROOT / folder).rglob("*.ct"))


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_there_are_specs():
    assert Path("specs/llama70b_wan.ct") in SPECS
    assert len([p for p in SPECS if p.parts[0] == "examples"]) >= 10


@pytest.mark.parametrize("path", SPECS, ids=str)
def test_spec_checks_clean(path):
    result = CliRunner().invoke(app, ["check", str(path)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout == "All checks passed.\n"


def test_all_specs_at_once():
    result = CliRunner().invoke(app, ["check", *map(str, SPECS)])
    assert result.exit_code == 0, result.stdout


EXAMPLE_NAME = r"^\d\d_[a-z0-9_]+\.ct$"


def test_examples_are_numbered_and_say_what_they_show():
    import re

    for path in sorted((ROOT / "examples").glob("[0-9][0-9]_*.ct")):
        assert re.match(EXAMPLE_NAME, path.name), path.name
        text = path.read_text(encoding="utf-8")
        header = [line for line in text.splitlines()[:3] if line.startswith("#")]
        assert header, f"{path.name} has no header comment saying what it shows"
        result = check(str(path.relative_to(ROOT)))
        assert result.ok and result.spec is not None
        assert result.spec.schemes or result.spec.serving, f"{path.name} is not a complete spec: it has no scheme and serves nothing"
