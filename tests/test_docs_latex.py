"""docs/latex.md quotes what `ctdsl export latex` writes: every ```latex block after a
`<!-- from: ctdsl export latex SPEC -->` line is, line for line, in that command's output (issue 30:
the page quoted formulas the export no longer wrote)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ctdsl
from ctdsl.report.paper import paper_latex

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "latex.md"
QUOTE = re.compile(r"<!-- from: ctdsl export latex (\S+) -->\n\s*```latex\n(.*?)\n\s*```", re.S)


def _quotes() -> list[tuple[str, list[str]]]:
    return [(spec, [line.strip() for line in body.splitlines()]) for spec, body in QUOTE.findall(PAGE.read_text(encoding="utf-8"))]


def test_the_page_quotes_the_export():
    assert len(_quotes()) >= 3  # the break-even, the regime split, the dropped max


@pytest.mark.parametrize("spec", sorted({spec for spec, _ in _quotes()}))
def test_each_quoted_line_is_what_export_writes(spec):
    out = [line.strip() for line in paper_latex(ctdsl.load(str(ROOT / spec)).solve()).splitlines()]
    for quoted, lines in _quotes():
        if quoted != spec:
            continue
        start = out.index(lines[0])  # the quoted rows, in order, with nothing between them
        assert out[start : start + len(lines)] == lines
