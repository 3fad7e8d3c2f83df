"""Helpers for the lint tests: lint a chunk of a fixture file, compare with its `#!` marks.

Fixtures use the chunked format of tools/chunkedfile.py (chunks separated by lines
of `---`, expectations `#! CODE:COL "text"` at the end of the line where a finding
must start), with lint codes (CTL001) as well as checker codes. A chunk without
marks must lint clean. Each chunk is linted as `spec.ct` in the fixture's folder. A mark's
quoted texts are looked for in the findings' own words (`chunkedfile.finding_text`: message,
labels, notes, help), not in the printed diagnostic, whose excerpt holds the spec's source.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_TESTS = ROOT / "tests" / "lint"
FIXTURES = LINT_TESTS / "fixtures"
sys.path.insert(0, str(ROOT / "tools"))

from chunkedfile import SPEC_NAME, Chunk, finding_text, mismatches, parse_expectations, read_chunks  # noqa: E402, F401

from ctdsl.diagnostics import render_text  # noqa: E402
from ctdsl.lint.config import LintConfig  # noqa: E402
from ctdsl.lint.runner import lint_files  # noqa: E402

def lint_chunks(path: Path) -> list[Chunk]:
    return read_chunks(path)


def all_fixture_chunks() -> list[Chunk]:
    return [c for f in sorted(FIXTURES.glob("CTL*.ct")) for c in lint_chunks(f)]


def lint_text(text: str, config: LintConfig | None = None):
    """Lint `text` as spec.ct in the current directory."""
    return lint_files([SPEC_NAME], config or LintConfig(), texts={SPEC_NAME: text})


def chunk_problems(chunk: Chunk, config: LintConfig | None = None) -> tuple[list[str], str]:
    report = lint_text(chunk.text, config)
    rendered = {id(d): render_text(d, report.sources) for d in report.diagnostics}
    problems = mismatches(chunk, report.diagnostics, finding_text)  # the findings' words, not the printed excerpt
    return problems, "\n\n".join(rendered.values())
