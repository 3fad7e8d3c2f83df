"""Every bad input in tests/errors/*.ct gives exactly the diagnostics its chunk expects.

The chunk format (separators, `#! CODE:COL "text"` annotations) is described in
tools/chunkedfile.py. Each chunk is checked as `spec.ct` in tests/errors/, so
the import chunks find their fixtures in tests/errors/imports/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ctdsl.api import check_runnable
from ctdsl.codes import CODES
from ctdsl.diagnostics import render_concise, render_json, render_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from chunkedfile import SPEC_NAME, mismatches, read_chunks  # noqa: E402

ERRORS = ROOT / "tests" / "errors"
CHUNKS = [c for f in sorted(ERRORS.glob("*.ct")) for c in read_chunks(f)]

# Codes that no chunk can show: they need a file that cannot be read, or a
# generated input too large to keep in a chunk (tests/test_check_limits.py).
NOT_IN_CHUNKS = {"CT001", "CT311", "CT601", "CT621", "CT425", "CT317", "CT318", "CT490"}  # CT490 is sweep --plot's: tests/test_figures_fit.py; CT425 is solve's: tests/test_replicas.py;  # CT311 needs a --set: tests/test_check_overrides.py; CT317 a fit's solve, CT318 a spec too long for a chunk: tests/test_observed.py


@pytest.mark.parametrize("chunk", CHUNKS, ids=lambda c: c.id)
def test_chunk(chunk, monkeypatch):
    monkeypatch.chdir(chunk.file.parent)
    result = check_runnable(SPEC_NAME, text=chunk.text)  # as solve checks it: a library is CT410
    rendered = {id(d): render_text(d, result.sources) for d in result.diagnostics}
    problems = mismatches(chunk, result.diagnostics)  # quoted texts in the findings' own words (chunkedfile.finding_text)
    shown = "\n\n".join(rendered.values())
    assert not problems, f"{chunk.file.name}:{chunk.first_line}\n" + "\n".join(problems) + f"\n\n{shown}"
    # a spec with errors is never handed on
    assert result.spec is None and not result.ok
    # every way of printing them works
    assert json.loads(render_json(result.diagnostics))["diagnostics"]
    for d in result.diagnostics:
        assert render_concise(d).count("\n") == 0


def test_every_chunk_expects_something():
    empty = [c.id for c in CHUNKS if not c.expectations]
    assert not empty, f"chunks without a #! expectation: {empty}"


def test_only_registered_codes_are_expected():
    unknown = sorted({e.code for c in CHUNKS for e in c.expectations} - set(CODES))
    assert not unknown


def test_chunks_cover_every_code():
    covered = {e.code for c in CHUNKS for e in c.expectations}
    solving = {c for c in CODES if c.startswith("CT7")}  # after a clean check: tests/test_solve_errors.py
    solving |= {c for c in CODES if c.startswith("CT8")}  # while simulating: tests/test_simulate_parallel.py, _dask.py
    missing = sorted(set(CODES) - covered - NOT_IN_CHUNKS - solving)
    assert not missing, f"codes no chunk produces: {missing}"


def test_there_are_many_distinct_bad_inputs():
    texts = {c.text for c in CHUNKS}
    assert len(texts) == len(CHUNKS), "two chunks are the same input"
    assert len(CHUNKS) >= 40
