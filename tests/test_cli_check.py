"""`ctdsl check`, `ctdsl graph`, --version and --help, through typer's CliRunner.

Exit codes: 0 clean, 1 findings, 2 usage errors and files that cannot be read.
Diagnostics of `check` go to stdout (they are its output); a file that cannot
be read is an `error:` line on stderr in the text format, and a CT001 in the
machine formats (concise, json, sarif, github), which are those of `ctdsl lint`.
No command ever prints a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ctdsl import __version__
from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
FLAGSHIP = "tests/data/llama70b_workers.ct"  # the study with single-GPU workers, unrolled into nodes
TWO = "tests/data/two_errors.ct"
MISSING = "tests/data/no_such_file.ct"
SARIF_SCHEMA = json.loads((DATA / "sarif-2.1.0-rtm.5.json").read_text(encoding="utf-8"))
JSON_SCHEMA = json.loads((ROOT / "ctdsl" / "diagnostics" / "output.schema.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("NO_COLOR", "1")


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


# ---- check -----------------------------------------------------------------------


def test_check_clean_spec():
    r = run("check", FLAGSHIP)
    assert r.exit_code == 0
    assert r.stdout == "All checks passed.\n"
    assert r.stderr == ""


def test_check_reports_a_dimension_error_at_its_line_and_column():
    r = run("check", "tests/data/bad_bandwidth.ct")
    assert r.exit_code == 1
    assert r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "tests/data/bad_bandwidth.ct:6:15: CT202 link 'l' bandwidth must be data rate (B/s), but this is time (s)"
    # the excerpt: the numbered source line and a caret under `5 ms`
    assert "6 |   bandwidth = 5 ms" in lines
    assert "  |               ^^^^ this is time (s)" in lines
    assert "  = help: e.g. bandwidth = 50 GB/s" in lines
    assert lines[-1] == "Found 1 error."


def test_check_concise_is_one_line_per_diagnostic():
    r = run("check", "tests/data/two_errors.ct", "--format", "concise")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        "tests/data/two_errors.ct:2:24: CT205 unknown unit 'GBps'",
        "tests/data/two_errors.ct:3:40: CT304 b.latency must not be negative, but it is -1 us",
    ]


def test_check_json():
    r = run("check", "tests/data/two_errors.ct", "-f", "json")
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert data["version"] == 1
    got = [(d["code"], d["span"]["line"], d["span"]["col"], d["severity"]) for d in data["diagnostics"]]
    assert got == [("CT205", 2, 24, "error"), ("CT304", 3, 40, "error")]
    assert data["diagnostics"][0]["help"] == "write GB/s"


def test_check_json_clean():
    r = run("check", FLAGSHIP, "--format", "json")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {
        "version": 1,
        "files": [FLAGSHIP],
        "summary": {"errors": 0, "warnings": 0, "info": 0, "suppressed": 0, "files": 1},
        "diagnostics": [],
    }


def test_check_several_files_one_bad():
    r = run("check", FLAGSHIP, "examples/01_params.ct", "tests/data/bad_bandwidth.ct", "-f", "concise")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        "tests/data/bad_bandwidth.ct:6:15: CT202 link 'l' bandwidth must be data rate (B/s), but this is time (s)"
    ]


def test_check_output_is_deterministic():
    outputs = {run("check", "tests/data/two_errors.ct", FLAGSHIP).stdout for _ in range(3)}
    assert len(outputs) == 1


def test_check_text_has_no_colour_when_not_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR")
    r = run("check", "tests/data/bad_bandwidth.ct")
    assert "\x1b[" not in r.stdout


@pytest.mark.parametrize(
    "path, message",
    [
        ("tests/data/no_such_file.ct", "error: no such file: tests/data/no_such_file.ct"),
        ("tests/data", "error: tests/data is a directory, not a spec file"),
        ("tests/data/latin1.ct", "error: tests/data/latin1.ct is not UTF-8 text (byte 13)"),
    ],
)
def test_check_unreadable_file_is_a_usage_error(path, message):
    r = run("check", path)
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [message]


def test_check_unreadable_wins_over_findings():
    r = run("check", "tests/data/bad_bandwidth.ct", "tests/data/no_such_file.ct", "-f", "concise")
    assert r.exit_code == 2
    assert "CT202" in r.stdout  # the readable file is still checked
    # a machine format lists the unreadable file too, as CT001 without a location
    assert "CT001 no such file: tests/data/no_such_file.ct" in r.stdout
    r = run("check", "tests/data/bad_bandwidth.ct", "tests/data/no_such_file.ct")
    assert r.exit_code == 2
    assert r.stderr == "error: no such file: tests/data/no_such_file.ct\n"
    assert r.stdout.rstrip().endswith("Found 2 errors.")


def test_check_without_files_is_a_usage_error():
    r = run("check")
    assert r.exit_code == 2
    assert "Missing argument" in r.stderr
    assert r.stdout == ""


def test_check_unknown_format_is_a_usage_error():
    r = run("check", FLAGSHIP, "--format", "xml")
    assert r.exit_code == 2
    assert "xml" in r.stderr


def test_check_spec_that_imports_a_missing_file(tmp_path):
    spec = tmp_path / "a.ct"
    spec.write_text('import "b.ct"\n', encoding="utf-8")
    r = run("check", str(spec), "-f", "concise")
    assert r.exit_code == 1  # a bad import is a finding in a readable file, not a usage error
    assert "CT501 imported file 'b.ct' does not exist" in r.stdout


# ---- check: the formats it shares with lint ------------------------------------------


def sarif_errors(doc: dict) -> list[str]:
    jsonschema.Draft4Validator.check_schema(SARIF_SCHEMA)
    formats = jsonschema.Draft4Validator.FORMAT_CHECKER  # helpUri must be an absolute "uri"
    assert "uri" in formats.checkers, "the uri format needs rfc3987 (the test extra)"
    return [e.message for e in sorted(jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=formats).iter_errors(doc), key=str)]


@pytest.mark.parametrize(
    "files, code",
    [([TWO], 1), ([FLAGSHIP], 0), ([TWO, MISSING], 2), (["tests/data/bad_bandwidth.ct", FLAGSHIP], 1)],
    ids=["two-errors", "clean", "unreadable", "two-files"],
)
def test_check_sarif_validates_against_the_official_schema(files, code):
    r = run("check", *files, "--format", "sarif")
    assert r.exit_code == code
    assert r.stderr == ""
    doc = json.loads(r.stdout)
    assert not sarif_errors(doc)
    assert doc["runs"][0]["tool"]["driver"]["fullName"] == "ctdsl check"


def test_check_sarif_results_and_their_rules():
    doc = json.loads(run("check", TWO, "-f", "sarif").stdout)
    (run_,) = doc["runs"]
    results = run_["results"]
    got = [
        (x["ruleId"], x["level"], x["locations"][0]["physicalLocation"]["region"]) for x in results
    ]
    # the columns of the concise test above; the spans are 'GBps' (4) and '-1 us' (5)
    assert got == [
        ("CT205", "error", {"startLine": 2, "startColumn": 24, "endLine": 2, "endColumn": 28}),
        ("CT304", "error", {"startLine": 3, "startColumn": 40, "endLine": 3, "endColumn": 45}),
    ]
    assert results[0]["message"]["text"] == "unknown unit 'GBps'\nhelp: write GB/s"
    rules = run_["tool"]["driver"]["rules"]
    assert [x["id"] for x in rules] == ["CT205", "CT304"]  # the codes found, in order
    assert [rules[x["ruleIndex"]]["id"] for x in results] == ["CT205", "CT304"]
    # names and summaries from the table of checker codes (docs/diagnostics.md lists the same)
    assert [x["name"] for x in rules] == ["unknown-unit", "negative"]
    assert rules[1]["shortDescription"]["text"] == "A latency, power or energy below zero."
    assert all(x["defaultConfiguration"]["level"] == "error" for x in rules)
    assert all(x["properties"]["tags"] == ["ctdsl", "check"] for x in rules)


def test_check_sarif_lists_an_unreadable_file_as_ct001():
    r = run("check", TWO, MISSING, "-f", "sarif")
    assert r.exit_code == 2
    results = json.loads(r.stdout)["runs"][0]["results"]
    assert [x["ruleId"] for x in results] == ["CT205", "CT304", "CT001"]
    assert results[2]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": MISSING, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1},
    }
    assert results[2]["message"]["text"].startswith(f"no such file: {MISSING}\n")


def test_check_github_prints_one_workflow_command_per_finding():
    r = run("check", TWO, "--format", "github")
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        f"::error file={TWO},line=2,col=24,endLine=2,endColumn=28,title=ctdsl (CT205)::unknown unit 'GBps'"
        "%0Ahelp: write GB/s",
        f"::error file={TWO},line=3,col=40,endLine=3,endColumn=45,title=ctdsl (CT304)::b.latency must not be "
        "negative, but it is -1 us%0Ahelp: a latency is a time of zero or more, e.g. 10 us",
    ]


def test_check_github_lists_an_unreadable_file_and_a_clean_one_prints_nothing():
    r = run("check", FLAGSHIP, MISSING, "-f", "github")
    assert r.exit_code == 2
    assert r.stdout == (
        f"::error file={MISSING},title=ctdsl (CT001)::no such file: {MISSING}"
        "%0Ahelp: give the path of a UTF-8 text file, e.g. specs/llama70b_wan.ct\n"
    )
    r = run("check", FLAGSHIP, "-f", "github")
    assert (r.exit_code, r.stdout) == (0, "")


@pytest.mark.parametrize("files", [[TWO], [FLAGSHIP], [TWO, MISSING, "tests/data"]], ids=["errors", "clean", "unreadable"])
def test_check_json_validates_against_the_schema_lint_uses(files):
    doc = json.loads(run("check", *files, "-f", "json").stdout)
    jsonschema.Draft202012Validator.check_schema(JSON_SCHEMA)
    jsonschema.validate(doc, JSON_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["files"] == files
    assert doc["summary"]["errors"] == len(doc["diagnostics"])


def test_check_json_lists_an_unreadable_file_as_ct001_with_its_file():
    doc = json.loads(run("check", TWO, MISSING, "-f", "json").stdout)
    last = doc["diagnostics"][-1]
    assert (last["code"], last["name"], last["source"], last["file"], last["span"]) == (
        "CT001",
        "unreadable-file",
        "check",
        MISSING,
        None,
    )
    assert doc["summary"] == {"errors": 3, "warnings": 0, "info": 0, "suppressed": 0, "files": 2}


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "sarif", "github"])
def test_check_exit_codes_are_the_same_in_every_format(fmt):
    assert run("check", FLAGSHIP, "-f", fmt).exit_code == 0
    assert run("check", TWO, "-f", fmt).exit_code == 1
    assert run("check", TWO, MISSING, "-f", fmt).exit_code == 2


# ---- graph -----------------------------------------------------------------------


def test_graph_json():
    r = run("graph", FLAGSHIP)
    assert r.exit_code == 0
    assert r.stderr == ""
    g = json.loads(r.stdout)
    assert g["directed"] is True
    assert len(g["nodes"]) == 18 and len(g["edges"]) == 34
    assert {n["id"] for n in g["nodes"] if n["kind"] == "switch"} == {"east.tor", "west.tor"}


def test_graph_dot():
    r = run("graph", FLAGSHIP, "--format", "dot")
    assert r.exit_code == 0
    text = r.stdout
    assert text.startswith("digraph ctdsl {\n") and text.endswith("}\n")
    assert 'subgraph "cluster_east"' in text and 'subgraph "cluster_west"' in text
    assert '"east.w0" [shape=box];' in text
    assert '"east.tor" [shape=diamond];' in text
    assert '"east.w0.qsfp" [shape=component];' in text
    # the WAN is one edge each way, labelled with its link and bandwidth
    assert '"east.tor" -> "west.tor" [dir=both, label="wan 12.5 GB/s"];' in text


def test_graph_dot_keeps_asymmetric_links_apart():
    r = run("graph", "examples/09_three_dcs.ct", "-f", "dot")
    assert r.exit_code == 0
    assert '"north.tor" -> "hub.tor" [label="up_fast 25 GB/s"];' in r.stdout
    assert '"hub.tor" -> "north.tor" [label="down_slow 5 GB/s"];' in r.stdout


def test_graph_of_a_bad_spec():
    r = run("graph", "tests/data/bad_bandwidth.ct")
    assert r.exit_code == 1
    assert r.stdout == ""
    assert "CT202" in r.stderr and "Found 1 error." in r.stderr


def test_graph_of_a_missing_file():
    r = run("graph", "nowhere.ct")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == "error: no such file: nowhere.ct\n"


# ---- version and help ------------------------------------------------------------------


def test_version():
    r = run("--version")
    assert r.exit_code == 0
    assert r.stdout == f"ctdsl {__version__}\n"


def test_help_shows_example_invocations():
    r = run("--help")
    assert r.exit_code == 0
    assert "Examples:" in r.stdout
    assert "ctdsl check specs/llama70b_wan.ct" in r.stdout
    assert "ctdsl graph specs/llama70b_wan.ct -f svg -o topology.svg" in r.stdout
    for command in ("check", "graph"):
        assert command in r.stdout


@pytest.mark.parametrize("command", ["check", "graph"])
def test_command_help_shows_examples(command):
    r = run(command, "--help")
    assert r.exit_code == 0
    assert "Examples:" in r.stdout
    assert f"ctdsl {command} specs/llama70b_wan.ct" in r.stdout


def test_no_arguments_shows_help():
    r = run()
    assert r.exit_code in (0, 2)  # click >= 8.2 exits 2 for no_args_is_help
    assert "Usage" in r.stdout + r.stderr
