"""docs/serving.md quotes solve's output: each quoted block is what solve prints now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctdsl.api import load
from ctdsl.report.tables import render_markdown

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"<!-- BEGIN solve (\S+)[^>]*-->\n(.*?)<!-- END solve \1", re.S)
QUOTED = [(m.group(1), m.group(2)) for m in BLOCK.finditer(DOC)]


def test_the_page_quotes_the_study_and_the_example():
    assert {spec for spec, _ in QUOTED} == {"specs/llama70b_disagg.ct", "examples/22_serving.ct"}


@pytest.mark.parametrize("spec, block", QUOTED, ids=[f"{s}#{i}" for i, (s, _) in enumerate(QUOTED)])
def test_quoted_output_is_current(spec, block):
    out = render_markdown(load(ROOT / spec).solve())
    rows = [line for line in block.splitlines() if line.startswith("|")]
    assert len(rows) >= 3
    for line in rows:
        assert line + "\n" in out, line


def test_the_example_on_the_page_is_the_shipped_one():
    example = (ROOT / "examples" / "22_serving.ct").read_text(encoding="utf-8")
    body = example.split("import std.devices", 1)[1]
    assert "import std.devices" + body in DOC
