"""Output formats of `ctdsl lint`: snapshots of each on one sample spec, SARIF against
the official 2.1.0 schema, the JSON schema, GitHub workflow commands.

Update the snapshots, after checking the difference by eye, with
    CTDSL_UPDATE_SNAPSHOTS=1 python -m pytest tests/lint/test_lint_formats.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
from lintkit import ROOT
from typer.testing import CliRunner

from ctdsl import __version__
from ctdsl.cli import app
from ctdsl.lint import LintConfig, all_rules, lint_paths
from ctdsl.lint.formats import render

SNAPSHOTS = ROOT / "tests" / "lint" / "snapshots"
SAMPLE = "tests/lint/sample.ct"
BAD = "tests/lint/bad_everything.ct"
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
JSON_SCHEMA = json.loads((ROOT / "ctdsl" / "diagnostics" / "output.schema.json").read_text(encoding="utf-8"))
EXTENSIONS = {"text": "txt", "concise": "concise.txt", "json": "json", "sarif": "sarif", "github": "github.txt"}

runner = CliRunner()


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def lint(*args: str):
    return runner.invoke(app, ["lint", *args])


@pytest.mark.parametrize("fmt", list(EXTENSIONS))
def test_snapshot(fmt):
    r = lint(SAMPLE, "--format", fmt)
    assert r.exit_code == 1, r.stderr  # the sample has an error (CTL005)
    assert r.stderr == ""
    out = r.stdout.replace(f'"{__version__}"', '"VERSION"')
    path = SNAPSHOTS / f"sample.{EXTENSIONS[fmt]}"
    if os.environ.get("CTDSL_UPDATE_SNAPSHOTS"):
        path.write_text(out, encoding="utf-8")
    assert path.is_file(), f"no snapshot {path}; run with CTDSL_UPDATE_SNAPSHOTS=1"
    assert out == path.read_text(encoding="utf-8")


def test_text_has_excerpts_with_carets_and_no_colour_when_piped():
    out = lint(SAMPLE).stdout
    assert "\x1b[" not in out
    assert "13 | link dci { bandwidth = 12.5 GB/s; latency = 100 us; distance = 800 km }" in out
    assert "^^^^^^^^^^^^^^^^ below distance / c = 2.669 ms" in out
    # then ruff's line on fixes: CTL006's is unsafe, so hidden
    assert out.endswith("Found 1 error and 3 warnings.\nNo fixes available (1 hidden fix can be enabled with the --unsafe-fixes option).\n")


def test_concise_is_one_line_per_finding():
    lines = lint(SAMPLE, "-f", "concise").stdout.splitlines()
    assert lines == [
        "tests/lint/sample.ct:8:7: CTL001 param 'spare' is defined but never used",
        "tests/lint/sample.ct:12:12: CTL006 link 'wan': the comment '100 GbE' means 12.5 GB/s, but its "
        "bandwidth is 100 GB/s, 8x more: bits read as bytes?",
        "tests/lint/sample.ct:13:35: CTL005 link 'dci': latency 100 us over 800 km is faster than light "
        "(2.669 ms in vacuum)",
        "tests/lint/sample.ct:30:3: CTL003 scheme 'band': its transform needs 10 FLOP/B, but pluggable 'qsfp' "
        "affords 0.8 FLOP/B (20 GFLOP/s / 25 GB/s): it binds the module by 12.5x",
    ]


# ---- SARIF ----------------------------------------------------------------------------------


def sarif_of(*paths: str) -> dict:
    r = lint(*paths, "-f", "sarif")
    assert r.exit_code in (0, 1), r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize(
    "paths",
    [(SAMPLE,), (BAD, "specs/"), ("tests/lint/broken.ct",), ("tests/lint/fixtures/lib/extra.ct",)],
    ids=["sample", "bad-and-specs", "checker-errors", "clean"],
)
def test_sarif_validates_against_the_official_schema(paths):
    doc = sarif_of(*paths)
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    # with the schema's formats checked: helpUri is a "uri", which must be absolute
    formats = jsonschema.Draft4Validator.FORMAT_CHECKER
    assert "uri" in formats.checkers, "the uri format needs rfc3987 (the test extra)"
    errors = sorted(jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=formats).iter_errors(doc), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])


def test_sarif_rules_are_stable_and_documented():
    doc = sarif_of(BAD)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(ids)
    lint_rules = {r["id"]: r for r in rules if r["id"].startswith("CTL")}
    assert set(lint_rules) == {r.code for r in all_rules()}, "every rule is described, found or not"
    for r in all_rules():
        d = lint_rules[r.code]
        assert d["name"] == r.name
        assert d["shortDescription"]["text"] == r.summary
        assert r.bad in d["help"]["text"] and r.good in d["help"]["markdown"]
        assert d["defaultConfiguration"]["level"] == r.severity.value
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["partialFingerprints"]["ctdslFinding/v1"]
    prints = [res["partialFingerprints"]["ctdslFinding/v1"] for res in run["results"]]
    assert len(set(prints)) == len(prints)


def test_sarif_describes_checker_codes_it_reports():
    doc = sarif_of("tests/lint/broken.ct")
    run = doc["runs"][0]
    found = {r["ruleId"] for r in run["results"]}
    assert found and all(not c.startswith("CTL") for c in found)
    described = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    for code in found:
        assert described[code]["defaultConfiguration"]["level"] == "error"
        assert described[code]["shortDescription"]["text"]


def test_sarif_fingerprints_survive_lines_moving(tmp_path, monkeypatch):
    text = (ROOT / SAMPLE).read_text(encoding="utf-8")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "s.ct").write_text(text, encoding="utf-8")
    (tmp_path / "b" / "s.ct").write_text("# a new first line\n\n" + text, encoding="utf-8")

    def prints(folder):
        monkeypatch.chdir(tmp_path / folder)
        run = json.loads(render(lint_paths(["s.ct"], LintConfig()), "sarif"))["runs"][0]
        return [(r["ruleId"], r["partialFingerprints"]["ctdslFinding/v1"]) for r in run["results"]], [
            r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in run["results"]
        ]

    (pa, la), (pb, lb) = prints("a"), prints("b")
    assert pa == pb
    assert [x + 2 for x in la] == lb


# ---- JSON -----------------------------------------------------------------------------------


@pytest.mark.parametrize("paths", [(SAMPLE,), (BAD, "specs/"), ("tests/lint/broken.ct",)])
def test_json_validates_against_its_schema(paths):
    r = lint(*paths, "-f", "json")
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(JSON_SCHEMA)
    jsonschema.validate(doc, JSON_SCHEMA, cls=jsonschema.Draft202012Validator)
    s = doc["summary"]
    assert s["errors"] + s["warnings"] + s["info"] == len(doc["diagnostics"])


def test_json_summary_counts():
    doc = json.loads(lint(SAMPLE, "-f", "json").stdout)
    assert doc["summary"] == {"errors": 1, "warnings": 3, "info": 0, "suppressed": 0, "files": 1}
    assert [d["name"] for d in doc["diagnostics"]] == [
        "unused-definition",
        "bit-byte-slip",
        "faster-than-light",
        "charged-transform-over-budget",
    ]


# ---- GitHub ---------------------------------------------------------------------------------

_ANNOTATION = re.compile(
    r"^::(error|warning|notice) file=[^,:]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,"
    r"title=ctdsl \((CTL?\d{3})\)::[^\n]+$"
)


def test_github_prints_one_annotation_per_finding():
    findings = json.loads(lint(BAD, "specs/", "-f", "json").stdout)["diagnostics"]
    out = lint(BAD, "specs/", "-f", "github").stdout
    lines = out.splitlines()
    assert len(lines) == len(findings) > 10
    for line, d in zip(lines, findings):
        m = _ANNOTATION.match(line)
        assert m, line
        assert m.group(1) == {"error": "error", "warning": "warning", "info": "notice"}[d["severity"]]
        assert m.group(2) == d["code"]
        assert f"file={d['span']['file']},line={d['span']['line']},col={d['span']['col']}," in line


def test_github_escapes_what_would_end_a_command():
    from ctdsl.diagnostics import Diagnostic, Severity, Span
    from ctdsl.lint.runner import LintReport

    d = Diagnostic("CTL001", "50% off,\nsecond line", Span("dir,x/a:b.ct", 3, 2, 3, 5), Severity.WARNING)
    out = render(LintReport(diagnostics=[d], files=["x"]), "github")
    assert out == (
        "::warning file=dir%2Cx/a%3Ab.ct,line=3,col=2,endLine=3,endColumn=5,title=ctdsl (CTL001)::50%25 off,%0Asecond line\n"
    )


def test_github_multiline_span_has_no_columns():
    from ctdsl.diagnostics import Diagnostic, Severity, Span
    from ctdsl.lint.runner import LintReport

    d = Diagnostic("CT104", "x", Span("a.ct", 3, 2, 5, 1), Severity.ERROR)
    out = render(LintReport(diagnostics=[d], files=["a.ct"]), "github")
    assert out == "::error file=a.ct,line=3,endLine=5,title=ctdsl (CT104)::x\n"


# ---- all formats ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(EXTENSIONS))
def test_output_is_deterministic_and_order_independent(fmt):
    a = lint(BAD, "specs/", SAMPLE, "-f", fmt).stdout
    b = lint(BAD, "specs/", SAMPLE, "-f", fmt).stdout
    assert a == b
    if fmt not in ("json",):  # json also lists the files in the order given
        c = lint(SAMPLE, "specs/", BAD, "-f", fmt).stdout
        assert c == a


def test_snapshot_files_are_all_used():
    names = {p.name for p in Path(SNAPSHOTS).iterdir()}
    assert names == {f"sample.{e}" for e in EXTENSIONS.values()}


def test_a_finding_about_a_whole_spec_names_the_spec_in_every_format():
    # a diagnostic with no location (the checker may give one about a whole topology)
    from ctdsl.diagnostics import Diagnostic, Severity
    from ctdsl.lint.runner import LintReport

    d = Diagnostic("CT606", "the topology has 5000 workers; at most 4096 are modelled", None, Severity.ERROR)
    report = LintReport(diagnostics=[d], files=["big.ct"], origin={d: "big.ct"})
    assert render(report, "text").startswith("big.ct: CT606 the topology has 5000 workers")
    assert render(report, "concise") == "big.ct: CT606 the topology has 5000 workers; at most 4096 are modelled\n"
    assert render(report, "github") == (
        "::error file=big.ct,title=ctdsl (CT606)::the topology has 5000 workers; at most 4096 are modelled\n"
    )
    doc = json.loads(render(report, "sarif"))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(doc)
    (res,) = doc["runs"][0]["results"]
    assert res["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "big.ct", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1},
    }
    j = json.loads(render(report, "json"))
    jsonschema.validate(j, JSON_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert [(x["file"], x["span"]) for x in j["diagnostics"]] == [("big.ct", None)]
