"""Every lint rule: its fixture's chunks, its documentation, and the spec that trips them all.

Expected findings are written in the fixtures by hand (`#! CTL003:3 "by 5x"`),
with figures worked out from domain.md, not from the code under test.
"""

from __future__ import annotations

import re

import pytest
from lintkit import FIXTURES, ROOT, Chunk, all_fixture_chunks, chunk_problems, lint_chunks, parse_expectations

from ctdsl.diagnostics import Severity
from ctdsl.lint import LintConfig, all_rules, lint_paths
from ctdsl.lint.docs import render_rules_markdown

CHUNKS = all_fixture_chunks()
RULES = all_rules()


@pytest.mark.parametrize("chunk", CHUNKS, ids=lambda c: c.id)
def test_fixture_chunk(chunk, monkeypatch):
    monkeypatch.chdir(chunk.file.parent)
    problems, shown = chunk_problems(chunk)
    assert not problems, f"{chunk.file.name}:{chunk.first_line}\n" + "\n".join(problems) + f"\n\n{shown}"


def test_a_quoted_text_is_looked_for_in_the_finding_not_in_the_printed_source(monkeypatch):
    """A mark's text that the finding does not say fails, though the printed excerpt (which shows the
    line, mark and all) holds it: the check reads the findings' own words."""
    chunk = next(c for c in CHUNKS if c.file.name == "CTL001.ct")
    monkeypatch.chdir(chunk.file.parent)
    assert chunk_problems(chunk)[0] == []
    wrong = chunk.text.replace("#! CTL001:8 \"device 'old'\"", "#! CTL001:8 \"device 'old' is read by nothing\"")
    assert wrong != chunk.text
    problems, shown = chunk_problems(Chunk(chunk.file, chunk.index, chunk.first_line, wrong, parse_expectations(wrong)))
    assert "device 'old' is read by nothing" in shown  # in the excerpt...
    assert len(problems) == 1 and problems[0].startswith('expected CTL001 at line 9:8 with "device \'old\' is read by nothing"')
    assert "CTL001 at spec.ct:9:8" in problems[0]  # the finding is there, at its place: its words are not


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_has_a_fixture_with_failing_and_passing_cases(rule):
    path = ROOT / rule.fixture
    assert path.is_file(), f"{rule.code} has no fixture {rule.fixture}"
    chunks = lint_chunks(path)
    failing = [c for c in chunks if rule.code in c.codes]
    passing = [c for c in chunks if not c.expectations]
    assert failing, f"{rule.fixture}: no chunk expects {rule.code}"
    assert passing, f"{rule.fixture}: no chunk that must lint clean"
    # a rule's fixture is about that rule
    others = {code for c in chunks for code in c.codes} - {rule.code}
    assert not others, f"{rule.fixture} expects other codes: {others}"


def test_fixtures_are_only_for_registered_rules():
    names = {p.stem for p in FIXTURES.glob("CTL*.ct")}
    assert names == {r.code for r in RULES}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_metadata(rule):
    assert re.fullmatch(r"CTL\d{3}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.name)
    assert rule.severity in (Severity.WARNING, Severity.ERROR)
    assert rule.summary.endswith(".") and "\n" not in rule.summary and len(rule.summary) <= 140
    assert len(rule.explanation) > 200, "the explanation says what is flagged and why"
    assert rule.bad.strip() and rule.good.strip() and rule.bad != rule.good


def test_codes_and_names_are_unique_and_dense():
    codes = [r.code for r in RULES]
    assert codes == [f"CTL{i:03d}" for i in range(1, len(codes) + 1)]
    assert len({r.name for r in RULES}) == len(RULES)


def test_only_faster_than_light_is_an_error():
    # the issue: warnings unless clearly an error; a latency below distance / c is impossible
    assert [r.code for r in RULES if r.severity is Severity.ERROR] == ["CTL005"]


def test_bad_everything_trips_every_rule(monkeypatch):
    monkeypatch.chdir(ROOT)
    report = lint_paths(["tests/lint/bad_everything.ct"], LintConfig())
    codes = {d.code for d in report.diagnostics}
    assert not {c for c in codes if not c.startswith("CTL")}, "the bad spec must check: only lint findings"
    assert codes == {r.code for r in RULES}


def test_docs_are_generated_from_the_registry():
    page = (ROOT / "docs" / "lint-rules.md").read_text(encoding="utf-8")
    assert page == render_rules_markdown(), "regenerate: python -m ctdsl.lint.docs > docs/lint-rules.md"
    for r in RULES:
        assert f"## {r.code} {r.name}" in page


def test_library_presets_are_never_reported(monkeypatch, tmp_path):
    # a spec using every preset, with nothing of its own to report
    (tmp_path / "s.ct").write_text(
        "import std.devices\nimport std.links\nimport std.models\n"
        "model m : llama3_70b { tokens = 16384 }\ndevice accel : h200 { efficiency = 0.4 }\n"
        "switch tor { sum = true }\n"
        "dc east { workers = 8; device = accel; link = nvlink5; switch = tor }\n"
        "dc west : east {}\nwan east <-> west = eth25g\n"
        "scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    report = lint_paths(["s.ct"], LintConfig())
    assert report.diagnostics == []
