"""`ctdsl solve` of every shipped spec, byte for byte against its golden files (tests/outputkit.py):
the table, JSON, Markdown and CSV."""

from __future__ import annotations

import pytest

from outputkit import ROOT, SOLVE, SPECS, compare, run


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the outputs name the spec by the path it is given


@pytest.mark.parametrize("spec", SPECS)
def test_solve_outputs(spec):
    for name, args in SOLVE.items():
        compare(spec, name, run(["solve", spec, *args]))
