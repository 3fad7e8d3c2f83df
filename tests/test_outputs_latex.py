"""`ctdsl export latex` and `ctdsl report -o x.md` of every shipped spec, byte for byte against
their golden files (tests/outputkit.py)."""

from __future__ import annotations

import pytest

from outputkit import ROOT, SPECS, compare, run


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the outputs name the spec by the path it is given


@pytest.mark.parametrize("spec", SPECS)
def test_latex_and_markdown_report(spec, tmp_path):
    compare(spec, "export.tex", run(["export", "latex", spec]))
    compare(spec, "report.md", run(["report", spec], tmp_path, "report.md"))
