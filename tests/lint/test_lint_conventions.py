"""ruff's conventions in `ctdsl lint`: --statistics, --exit-zero, --quiet, --fix and
--diff, stdin, .gitignore, SARIF's helpUri and invocations, [tool.ctdsl] keys.

Every expected output is written out by hand from the spec in the test: which
rule fires on which line (see docs/lint-rules.md) and what its help says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lintkit import ROOT
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.diagnostics import Diagnostic, Span
from ctdsl.lint.fixes import apply_fixes, fix_for

runner = CliRunner()

HEAD = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
"""
# line 10: CTL006, the name says 100 GbE = 12.5 GB/s and the bandwidth is 8x that;
# its help is "write bandwidth = 12.5 GB/s (or 100 Gb/s)": an exact edit
SLIP = "link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }\nwan east <-> west = eth100g_dci\n"
FIXED_SLIP = "link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }\nwan east <-> west = eth100g_dci\n"
# two unused params (CTL001 twice): "remove it, or ..." is a choice, never fixed
UNUSED = "param spare = 1 ms\nparam other = 2 ms\n"
# CTL011: a suppression of a rule with no finding on its line; "remove it" is exact
STALE = "wan east <-> west = eth100g   # ctdsl: ignore[CTL003]\n"
CLEAN = HEAD + "wan east <-> west = eth100g\n"


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def lint(*args: str, input: str | None = None):
    return runner.invoke(app, ["lint", *args], input=input)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---- --statistics, --exit-zero, --quiet ---------------------------------------------------------


def test_statistics_counts_each_code_most_frequent_first_and_marks_the_fixable(here):
    write(here / "s.ct", HEAD + SLIP + UNUSED)
    r = lint("s.ct", "--statistics")
    # two CTL001 (spare, other), one CTL006, whose fix is unsafe: fixable ([*]) only with --unsafe-fixes, as in ruff
    assert r.stdout == "2\tCTL001\tunused-definition\n1\tCTL006\tbit-byte-slip\n"
    assert r.exit_code == 0  # warnings only, --fail-on error
    assert lint("s.ct", "--statistics", "--unsafe-fixes").stdout == "2\tCTL001\tunused-definition\n1\tCTL006\t[*] bit-byte-slip\n"
    doc = json.loads(lint("s.ct", "--statistics", "-f", "json", "--unsafe-fixes").stdout)
    assert doc == [
        {"code": "CTL001", "count": 2, "fixable": False, "name": "unused-definition"},
        {"code": "CTL006", "count": 1, "fixable": True, "name": "bit-byte-slip"},
    ]


def test_exit_zero_exits_0_on_findings_but_not_on_an_unreadable_file(here):
    write(here / "s.ct", HEAD + SLIP + UNUSED)
    assert lint("s.ct", "--fail-on", "warning").exit_code == 1
    assert lint("s.ct", "--fail-on", "warning", "--exit-zero").exit_code == 0
    (here / "bad.ct").write_bytes(b"\xff\n")
    assert lint("s.ct", "bad.ct", "--exit-zero").exit_code == 2


def test_quiet_prints_the_findings_and_no_summary(here):
    write(here / "s.ct", HEAD + SLIP)
    loud, quiet = lint("s.ct").stdout, lint("s.ct", "-q").stdout
    assert loud.endswith("Found 1 warning.\nNo fixes available (1 hidden fix can be enabled with the --unsafe-fixes option).\n")
    assert "Found" not in quiet and "CTL006" in quiet
    assert loud.startswith(quiet.rstrip("\n"))
    write(here / "c.ct", CLEAN)
    assert lint("c.ct").stdout == "All checks passed.\n"
    assert lint("c.ct", "-q").stdout == ""
    empty = here / "empty"
    empty.mkdir()
    assert "no spec files" in lint("empty").stderr
    assert lint("empty", "-q").stderr == ""


# ---- --fix and --diff -----------------------------------------------------------------------


def test_diff_previews_and_fix_applies_only_exact_edits(here):
    spec = write(here / "s.ct", HEAD + SLIP + UNUSED)
    # CTL006's fix changes what the spec means: plain --fix and --diff leave it alone
    r = lint("s.ct", "--fix")
    assert spec.read_text(encoding="utf-8") == HEAD + SLIP + UNUSED
    assert "Fixed" not in r.stderr
    assert r.stdout.endswith("Found 3 warnings.\nNo fixes available (1 hidden fix can be enabled with the --unsafe-fixes option).\n")
    assert lint("s.ct", "--diff").stdout == "" and lint("s.ct", "--diff").exit_code == 0
    r = lint("s.ct", "--diff", "--unsafe-fixes")
    assert r.exit_code == 1  # there is something to fix
    assert r.stdout.splitlines()[:2] == ["--- a/s.ct", "+++ b/s.ct"]
    assert "-link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }" in r.stdout.splitlines()
    assert "+link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }" in r.stdout.splitlines()
    assert spec.read_text(encoding="utf-8") == HEAD + SLIP + UNUSED, "--diff changes nothing"
    r = lint("s.ct", "--fix", "--unsafe-fixes", "-f", "concise")
    # the slip is fixed; the unused params are not (their help is a choice)
    assert spec.read_text(encoding="utf-8") == HEAD + FIXED_SLIP + UNUSED
    assert [line.split(": ")[1].split()[0] for line in r.stdout.splitlines()] == ["CTL001", "CTL001"]
    assert "Fixed 1 finding." in r.stderr
    assert lint("s.ct", "--diff", "--unsafe-fixes").exit_code == 0 and lint("s.ct", "--diff", "--unsafe-fixes").stdout == ""


def test_unsafe_fixes_can_be_set_in_pyproject(here):
    spec = write(here / "s.ct", HEAD + SLIP)
    write(here / "pyproject.toml", "[tool.ctdsl.lint]\nunsafe-fixes = true\n")
    assert "[*] 1 fixable with the --fix option." in lint("s.ct").stdout
    lint("s.ct", "--fix", "--no-unsafe-fixes")  # the command line wins
    assert spec.read_text(encoding="utf-8") == HEAD + SLIP
    lint("s.ct", "--fix")
    assert spec.read_text(encoding="utf-8") == HEAD + FIXED_SLIP


def test_a_safe_fix_is_counted_and_applied_by_plain_fix(here):
    spec = write(here / "s.ct", HEAD + STALE)
    r = lint("s.ct")
    assert r.stdout.endswith("Found 1 warning.\n[*] 1 fixable with the --fix option.\n")
    write(here / "t.ct", HEAD + STALE + SLIP.replace("wan east <-> west = eth100g_dci\n", ""))
    r = lint("t.ct")
    assert r.stdout.endswith("[*] 1 fixable with the --fix option (1 hidden fix can be enabled with the --unsafe-fixes option).\n")
    lint("s.ct", "--fix")
    assert spec.read_text(encoding="utf-8") == CLEAN


def test_fix_removes_a_stale_suppression(here):
    spec = write(here / "s.ct", HEAD + STALE)
    assert "CTL011" in lint("s.ct", "-f", "concise").stdout
    lint("s.ct", "--fix")
    assert spec.read_text(encoding="utf-8") == CLEAN


@pytest.mark.parametrize(
    "line, code_at, expected",
    [
        # (the source line, the column of the unused code, the line after the fix)
        ("x = 1   # ctdsl: ignore[CTL003]", 25, "x = 1"),
        ("x = 1   # ctdsl: ignore[CTL003, CTL006]", 25, "x = 1   # ctdsl: ignore[CTL006]"),
        ("x = 1   # ctdsl: ignore[CTL003, CTL006]", 33, "x = 1   # ctdsl: ignore[CTL003]"),
        ("x = 1   # on purpose  # ctdsl: ignore[CTL003]", 39, "x = 1   # on purpose"),
    ],
)
def test_suppression_fix_edits(line, code_at, expected):
    d = Diagnostic("CTL011", "unused suppression: no X finding on this line", Span("f.ct", 1, code_at, 1, code_at + 6))
    assert line[code_at - 1 : code_at + 5].startswith("CTL")
    fix = fix_for(d, line + "\n")
    assert fix is not None and fix.safe
    done = apply_fixes(line + "\n", [fix])
    assert (done.text, done.applied) == (expected + "\n", [fix])


def test_help_that_offers_a_choice_is_not_a_fix():
    d = Diagnostic("CTL001", "param 'x' is defined but never used", Span("f.ct", 1, 7, 1, 8), help="remove it, or name it")
    assert fix_for(d, "param x = 1\n") is None
    # "write K = V" whose span is not that field is not applied either
    d = Diagnostic("CTL006", "m", Span("f.ct", 1, 1, 1, 5), help="write bandwidth = 1 GB/s")
    assert fix_for(d, "link x { latency = 1 ms }\n") is None


# ---- standard input ------------------------------------------------------------------------------


def test_stdin_with_a_name_imports_relative_to_it_and_reports_under_it(here):
    write(here / "sub" / "links.ct", "link mine { bandwidth = 100 GB/s; latency = 1 ms }\n")
    text = HEAD + 'import "links.ct"\nwan east <-> west = mine\nparam spare = 1 ms\n'
    r = lint("-", "--stdin-filename", "sub/main.ct", "-f", "concise", input=text)
    assert r.stdout == "sub/main.ct:12:7: CTL001 param 'spare' is defined but never used\n"
    r = lint("-", "-f", "concise", input=HEAD + "wan east <-> west = eth100g\nparam spare = 1 ms\n")
    assert r.stdout == "-:11:7: CTL001 param 'spare' is defined but never used\n"


def test_stdin_fix_writes_the_fixed_spec_to_stdout(here):
    r = lint("-", "--fix", input=HEAD + SLIP)
    assert r.stdout == HEAD + SLIP  # an unsafe fix: not without --unsafe-fixes
    r = lint("-", "--fix", "--unsafe-fixes", input=HEAD + SLIP)
    assert r.stdout == HEAD + FIXED_SLIP
    assert r.exit_code == 0


def test_stdin_usage_errors(here):
    assert lint("-", "x.ct", input="").exit_code == 2
    r = lint("x.ct", "--stdin-filename", "y.ct")
    assert r.exit_code == 2 and "give - as the path" in r.stderr


# ---- .gitignore -------------------------------------------------------------------------------


def test_directory_walks_respect_gitignore(here):
    (here / ".git").mkdir()  # a repository's root
    write(here / ".gitignore", "# scratch\nbuild-out/\n*.tmp.ct\n!keep.tmp.ct\n")
    write(here / "specs" / ".gitignore", "/old.ct\n")
    for rel in ["specs/a.ct", "specs/old.ct", "specs/deep/old.ct", "specs/x.tmp.ct", "specs/keep.tmp.ct", "build-out/b.ct"]:
        write(here / rel, CLEAN)
    r = lint(".", "-f", "json")
    # build-out/ is a folder ignored; *.tmp.ct except keep.tmp.ct; /old.ct anchored to specs/
    # (a folder's files come before its subfolders')
    assert json.loads(r.stdout)["files"] == ["specs/a.ct", "specs/keep.tmp.ct", "specs/deep/old.ct"]
    r = lint(".", "-f", "json", "--no-respect-gitignore")
    assert json.loads(r.stdout)["files"] == [
        "build-out/b.ct",
        "specs/a.ct",
        "specs/keep.tmp.ct",
        "specs/old.ct",
        "specs/x.tmp.ct",
        "specs/deep/old.ct",
    ]
    # a file named on the command line is linted even if ignored
    assert json.loads(lint("specs/old.ct", "-f", "json").stdout)["files"] == ["specs/old.ct"]


# ---- SARIF -------------------------------------------------------------------------------


def _anchors(page: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, spaces to hyphens."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_sarif_rules_have_a_help_uri_that_names_their_section(here):
    write(here / "s.ct", HEAD + SLIP)
    write(here / "broken.ct", "param x = \n")
    doc = json.loads(lint("s.ct", "broken.ct", "-f", "sarif").stdout)
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    lint_anchors, check_anchors = _anchors("docs/lint-rules.md"), _anchors("docs/diagnostics.md")
    base = "https://github.com/ctdsl/ctdsl/blob/main/"  # the repository's docs/ on the web
    for r in rules:
        assert r["helpUri"].startswith(base), r["helpUri"]
        page, anchor = r["helpUri"][len(base) :].split("#")
        assert anchor in (lint_anchors if page == "docs/lint-rules.md" else check_anchors), r["helpUri"]
    by_id = {r["id"]: r["helpUri"] for r in rules}
    assert by_id["CTL006"] == base + "docs/lint-rules.md#ctl006-bit-byte-slip"
    assert any(u.startswith(base + "docs/diagnostics.md#ct0") for u in by_id.values())  # the syntax error


def test_the_docs_address_is_the_projects_own():
    # one base for every link to the docs, and pyproject.toml's [project.urls] say the same
    import tomllib

    from ctdsl.diagnostics.rules import DOCS_BASE

    urls = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]
    assert DOCS_BASE == urls["Documentation"].removesuffix("docs/").rstrip("/") + "/"
    assert urls["Documentation"].startswith(urls["Repository"])


def test_sarif_invocation_has_the_exit_state(here):
    write(here / "s.ct", HEAD + SLIP)
    inv = json.loads(lint("s.ct", "-f", "sarif").stdout)["runs"][0]["invocations"]
    assert inv == [{"executionSuccessful": True, "exitCode": 0}]
    inv = json.loads(lint("s.ct", "-f", "sarif", "--fail-on", "warning").stdout)["runs"][0]["invocations"]
    assert inv == [{"executionSuccessful": True, "exitCode": 1}]


def test_an_unreadable_file_is_a_notification_and_a_result_never_an_empty_run(here):
    (here / "bad.ct").write_bytes(b"ab\xff\n")
    r = lint("bad.ct", "-f", "sarif")
    assert r.exit_code == 2
    run = json.loads(r.stdout)["runs"][0]
    assert [x["ruleId"] for x in run["results"]] == ["CT001"]
    (inv,) = run["invocations"]
    assert inv["executionSuccessful"] is False and inv["exitCode"] == 2
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"].splitlines()[0] == "bad.ct is not UTF-8 text (byte 2)"  # bytes a, b, then 0xff
    assert note["associatedRule"]["id"] == "CT001"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.ct"


# ---- [tool.ctdsl] ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "toml, says",
    [
        ('[tool.ctdsl]\nselect = ["CTL001"]\n', "unknown key 'select' (did you mean [tool.ctdsl.lint] select = ...?)"),
        ("[tool.ctdsl.check]\nstrict = true\n", "unknown key 'check'"),
        ("[tool.ctdsl.lint]\nrespect-gitignore = 1\n", "respect-gitignore must be true or false"),
    ],
)
def test_tool_ctdsl_keys_outside_lint_are_diagnosed(here, toml, says):
    write(here / "pyproject.toml", toml)
    write(here / "c.ct", CLEAN)
    r = lint("c.ct")
    assert r.exit_code == 2, r.stdout
    assert says in r.stderr


def test_respect_gitignore_can_be_set_in_pyproject(here):
    (here / ".git").mkdir()
    write(here / ".gitignore", "ignored.ct\n")
    write(here / "ignored.ct", CLEAN)
    assert json.loads(lint(".", "-f", "json").stdout)["files"] == []
    write(here / "pyproject.toml", "[tool.ctdsl.lint]\nrespect-gitignore = false\n")
    assert json.loads(lint(".", "-f", "json").stdout)["files"] == ["ignored.ct"]


def test_fix_writes_through_a_symbolic_link(here):
    real = write(here / "real" / "s.ct", HEAD + SLIP)
    (here / "s.ct").symlink_to(real)  # into a folder below its own: the path policy follows it
    lint("s.ct", "--fix", "--unsafe-fixes")
    assert (here / "s.ct").is_symlink(), "the link is kept"
    assert real.read_text(encoding="utf-8") == HEAD + FIXED_SLIP


# ---- per-file-ignores, --output-format (ruff's names) ---------------------------------------------------


def test_per_file_ignores_drops_codes_in_the_files_a_glob_matches(here):
    for rel in ["examples/a.ct", "specs/b.ct", "specs/legacy_c.ct", "specs/deep/legacy_d.ct"]:
        write(here / rel, HEAD + SLIP + UNUSED)  # CTL006 once, CTL001 twice in each
    write(
        here / "pyproject.toml",
        "[tool.ctdsl.lint.per-file-ignores]\n"
        '"examples/*.ct" = ["CTL001"]\n'  # a path relative to pyproject.toml's folder
        '"legacy_*.ct" = ["CTL00"]\n'  # no '/': a file's name in any folder; a prefix of codes
        '"!specs/**" = ["CTL006"]\n',  # '!': every file the rest does not match (examples/a.ct)
    )
    r = lint(".", "-f", "concise")
    got = sorted((line.split(":")[0], line.split(": ")[1].split()[0]) for line in r.stdout.splitlines())
    assert got == [("specs/b.ct", "CTL001"), ("specs/b.ct", "CTL001"), ("specs/b.ct", "CTL006")]


@pytest.mark.parametrize(
    "toml, says",
    [
        ('[tool.ctdsl.lint]\nper-file-ignores = ["CTL001"]\n', "per-file-ignores must be a table"),
        ('[tool.ctdsl.lint.per-file-ignores]\n"x.ct" = "CTL001"\n', "'x.ct' must be a list of codes"),
        ('[tool.ctdsl.lint.per-file-ignores]\n"x.ct" = ["CT101"]\n', "CT101 is a checker code"),
        ('[tool.ctdsl.lint.per-file-ignores]\n"x.ct" = ["CTL999"]\n', "unknown lint code 'CTL999'"),
    ],
)
def test_per_file_ignores_mistakes_are_usage_errors(here, toml, says):
    write(here / "pyproject.toml", toml)
    write(here / "c.ct", CLEAN)
    r = lint("c.ct")
    assert r.exit_code == 2 and says in r.stderr, r.stderr


def test_output_format_is_the_option_and_format_its_older_name(here):
    write(here / "s.ct", HEAD + SLIP)
    new = lint("s.ct", "--output-format", "json").stdout
    assert json.loads(new)["diagnostics"][0]["code"] == "CTL006"
    assert lint("s.ct", "--format", "json").stdout == new == lint("s.ct", "-f", "json").stdout
    assert "--output-format" in lint("--help").stdout
