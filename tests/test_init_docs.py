"""Starting from the package: `ctdsl init`, `ctdsl docs`, and `ctdsl graph` drawn without Graphviz.

The expected files are the checkout's own specs and docs, read here directly: `init`
must copy them byte for byte, and `docs CODE` must print the section of the doc page
that a reader of docs/diagnostics.md or docs/lint-rules.md would find under that code.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_init_writes_the_flagship_that_solves_as_the_original(tmp_path, monkeypatch):
    r = invoke("init", str(tmp_path))
    assert r.exit_code == 0, r.output
    written = tmp_path / "specs" / "llama70b_wan.ct"
    assert written.read_bytes() == FLAGSHIP.read_bytes()
    monkeypatch.chdir(tmp_path)
    ours = invoke("solve", "specs/llama70b_wan.ct", "--format", "json")
    monkeypatch.chdir(ROOT)
    theirs = invoke("solve", "specs/llama70b_wan.ct", "--format", "json")
    assert ours.exit_code == theirs.exit_code == 0
    assert json.loads(ours.stdout)["schemes"] == json.loads(theirs.stdout)["schemes"]


def test_init_refuses_to_overwrite_without_force(tmp_path):
    target = tmp_path / "specs" / "llama70b_wan.ct"
    target.parent.mkdir()
    target.write_text("# mine\n")
    r = invoke("init", str(tmp_path))
    assert r.exit_code == 2 and "--force" in r.output
    assert target.read_text() == "# mine\n"
    assert invoke("init", str(tmp_path), "--force").exit_code == 0
    assert target.read_bytes() == FLAGSHIP.read_bytes()


def test_init_example_brings_the_files_it_imports(tmp_path):
    r = invoke("init", str(tmp_path), "--example", "13_imports")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "13_imports.ct").read_bytes() == (ROOT / "examples" / "13_imports.ct").read_bytes()
    assert (tmp_path / "common" / "cluster.ct").read_bytes() == (ROOT / "examples" / "common" / "cluster.ct").read_bytes()
    assert invoke("check", str(tmp_path / "13_imports.ct")).exit_code == 0


def test_init_list_names_every_example_and_a_typo_gets_a_suggestion(tmp_path):
    listed = invoke("init", "--list").stdout.splitlines()
    assert [line.split()[0] for line in listed] == sorted(p.stem for p in (ROOT / "examples").glob("*.ct"))
    r = invoke("init", str(tmp_path), "--example", "07_plugable")
    assert r.exit_code == 2 and "07_pluggable" in r.output
    assert not any(tmp_path.iterdir())


def _section(doc: str, heading: str) -> str:
    """The doc's text from the heading to the next heading of its level or above, outside code fences."""
    lines = (ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines()
    start = lines.index(next(line for line in lines if line.startswith(heading)))
    level = len(heading.split(" ")[0])
    out, fenced = [lines[start]], False
    for line in lines[start + 1 :]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,%d} " % level, line):
            break
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


def test_docs_prints_a_codes_section():
    r = invoke("docs", "CT105")
    assert r.exit_code == 0
    assert r.stdout == _section("diagnostics.md", "### CT105 ")
    assert "help: extend the preset" in r.stdout  # the worked example is in it
    r = invoke("docs", "ctl003")
    assert r.exit_code == 0 and r.stdout == _section("lint-rules.md", "## CTL003 ")
    assert "Fixed:" in r.stdout


def test_docs_unknown_code_is_a_usage_error_with_a_suggestion():
    r = invoke("docs", "CT10")
    assert r.exit_code == 2 and "did you mean" in r.output


def test_lint_explain_of_a_checker_code_points_to_an_installed_command():
    r = invoke("lint", "--explain", "CT105")
    assert r.exit_code == 0 and "ctdsl docs CT105" in r.stdout
    # no path of the source tree (absent from an installed package); the docs' web address is fine
    from ctdsl.diagnostics.rules import DOCS_BASE

    assert "docs/diagnostics.md" not in r.stdout.replace(DOCS_BASE + "docs/diagnostics.md", "")


def test_graph_draws_svg_and_png_without_graphviz(tmp_path):
    svg, png = tmp_path / "t.svg", tmp_path / "t.png"
    assert invoke("graph", str(FLAGSHIP), "-f", "svg", "-o", str(svg)).exit_code == 0
    assert invoke("graph", str(FLAGSHIP), "-f", "png", "-o", str(png)).exit_code == 0
    text = svg.read_text(encoding="utf-8")
    ET.fromstring(text)  # well-formed
    # matplotlib writes each text's string as a comment beside its glyphs: the flagship has
    # two dcs of replicas, each drawn as one group of GPUs (gpu), the group of their NICs'
    # modules (qsfp) and a switch (tor)
    assert text.count("<!-- qsfp -->") == 2 and text.count("<!-- tor -->") == 2
    assert text.count("<!-- gpu -->") == 2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = tmp_path / "again.svg"
    invoke("graph", str(FLAGSHIP), "-f", "svg", "-o", str(again))
    assert again.read_bytes() == svg.read_bytes()


def test_graph_drawing_needs_a_file():
    r = invoke("graph", str(FLAGSHIP), "-f", "png")
    assert r.exit_code == 2 and "-o" in r.output


def test_init_e_writes_every_spec_and_example_and_refuses_both_flags(tmp_path):
    r = invoke("init", str(tmp_path), "-e")
    assert r.exit_code == 0, r.output
    for kind in ("specs", "examples"):
        want = sorted(p.relative_to(ROOT / kind) for p in (ROOT / kind).rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        assert sorted(p.relative_to(tmp_path / kind) for p in (tmp_path / kind).rglob("*") if p.is_file()) == want
        assert all((tmp_path / kind / rel).read_bytes() == (ROOT / kind / rel).read_bytes() for rel in want)
    r = invoke("init", str(tmp_path / "both"), "-e", "--example", "01_params")
    assert r.exit_code == 2 and not (tmp_path / "both").exists()


def test_a_missing_spec_points_at_init_e(tmp_path, monkeypatch):
    """The files --help's examples name are not there after a plain install: the error says how to get them."""
    monkeypatch.chdir(tmp_path)
    r = invoke("solve", "specs/llama70b_wan.ct")
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [
        "error: no such file: specs/llama70b_wan.ct",
        "  = help: give the path of a spec file; `ctdsl init -e` writes the specs/ and examples/ that --help and the docs use into this folder",
    ]
    r = invoke("check", "examples/16_variants.ct")
    assert r.exit_code == 2 and "`ctdsl init -e`" in r.output
