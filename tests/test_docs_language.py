"""Every ```ct block in docs/*.md checks as its fence says, and the generated tables are current.

A block fenced ```ct must check clean; one fenced ```ct error=CT202 must give
that code and no other. A ```text block right after an error block, starting
with `spec.ct:`, is what `ctdsl check` prints for it, and must stay so. Each
block is checked as `spec.ct` in docs/ (imports of std presets work; the
blocks import no local file).
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctdsl import units as U
from ctdsl.api import check
from ctdsl.language import schema as S
from ctdsl.diagnostics import render_text

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
CT_INFO = re.compile(r"^ct(?:[ \t]+error=(CT\d{3}))?[ \t]*$")


@dataclass
class Block:
    doc: str
    line: int
    info: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


def _blocks() -> list[Block]:
    out = []
    for doc in sorted(DOCS.glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            out.append(Block(doc.name, text[: m.start()].count("\n") + 1, m.group(1).strip(), m.group(2)))
    return out


BLOCKS = _blocks()
CT_BLOCKS = [b for b in BLOCKS if b.info.split(" ")[0] == "ct"]


def _check(block: Block, monkeypatch):
    monkeypatch.chdir(DOCS)
    return check("spec.ct", text=block.text)


def test_docs_have_ct_examples():
    docs = {b.doc for b in CT_BLOCKS}
    assert {"language.md", "tutorial.md"} <= docs
    assert len(CT_BLOCKS) >= 20


@pytest.mark.parametrize("block", CT_BLOCKS, ids=lambda b: b.id)
def test_ct_block(block, monkeypatch):
    m = CT_INFO.match(block.info)
    assert m, f"{block.id}: unknown fence info '{block.info}' (write ```ct or ```ct error=CT202)"
    result = _check(block, monkeypatch)
    shown = "\n\n".join(render_text(d, result.sources) for d in result.diagnostics)
    want = m.group(1)
    if want is None:
        assert result.diagnostics == [], f"{block.id} should check clean:\n{shown}"
        assert result.spec is not None
    else:
        codes = {d.code for d in result.diagnostics}
        assert codes == {want}, f"{block.id} should give {want} only:\n{shown}"


def _followed_by_output() -> list[tuple[Block, Block]]:
    pairs = []
    for a, b in zip(BLOCKS, BLOCKS[1:]):
        if a.doc == b.doc and CT_INFO.match(a.info) and "error=" in a.info and b.info == "text":
            if b.text.startswith("spec.ct:"):
                pairs.append((a, b))
    return pairs


@pytest.mark.parametrize("pair", _followed_by_output(), ids=lambda p: p[1].id)
def test_shown_output_is_what_check_prints(pair, monkeypatch):
    spec_block, output = pair
    result = _check(spec_block, monkeypatch)
    printed = "\n\n".join(render_text(d, result.sources) for d in result.diagnostics) + "\n"
    assert output.text == printed


def test_tutorial_shows_its_mistakes():
    assert len([p for p in _followed_by_output() if p[0].doc == "tutorial.md"]) >= 3


def test_language_tables_are_current():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_language_tables.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_language_reference_covers_every_kind_stage_and_unit():
    text = (DOCS / "language.md").read_text(encoding="utf-8")
    for kind in S.KINDS:
        assert f"\n### {kind}\n" in text, kind
        assert f"<!-- BEGIN GENERATED fields:{kind} -->" in text
    for stage in S.STAGES:
        assert f"<!-- BEGIN GENERATED stage:{stage} -->" in text
    units = text.split("<!-- BEGIN GENERATED units -->", 1)[1].split("<!-- END GENERATED units -->", 1)[0]
    for unit in U.UNITS:
        assert f"| `{unit}` |" in units, unit
    for op in S.OPERATIONS:
        assert f"`{op}`" in text
    for word in S.PAYLOADS + S.COLLECTIVES:
        assert f"`{word}`" in text


def test_unit_table_values():
    # a few rows against the definitions in domain.md: GB = 10^9 bytes, Gb = 10^9 bits
    text = (DOCS / "language.md").read_text(encoding="utf-8")
    assert "| `GB` | data (B) | 10^9 B |" in text
    assert "| `Gb` | data (B) | 10^9/8 B |" in text
    assert "| `GiB` | data (B) | 2^30 B |" in text
    assert "| `us` | time (s) | 10^-6 s |" in text
    assert "| `%` | dimensionless | 10^-2 |" in text
