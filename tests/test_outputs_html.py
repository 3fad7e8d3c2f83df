"""`ctdsl report -o x.html` of every shipped spec, byte for byte against its golden file
(tests/outputkit.py)."""

from __future__ import annotations

import pytest

from outputkit import ROOT, SPECS, compare, run


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the outputs name the spec by the path it is given


@pytest.mark.parametrize("spec", SPECS)
def test_html_report(spec, tmp_path):
    compare(spec, "report.html", run(["report", spec], tmp_path, "report.html"))
