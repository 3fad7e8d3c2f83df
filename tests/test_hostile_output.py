"""Issue 18, classes 6, 7 and 11 (second item): spec text is shown in every sink, never obeyed; degenerate data plots.

Hostile specs are written in tmp_path: labels and an opening comment with HTML,
a javascript: link, rich markup, an ESC sequence (the lexer accepts any
character but `"` and newline in a string), a CSV formula and invalid
mathtext, and a display name made of TeX `^^` escapes. Each is run through
solve (table, markdown, csv, json, --explain), export latex (compiled when
pdflatex is installed), report (html, md), sweep (csv, --plot) and simulate
(table, csv); each test states the exact escaped form it expects.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.diagnostics.terminal import printable
from ctdsl.language.texname import safe_display
from ctdsl.report.encode import clip, csv_cell, html_text, md_cell, md_item, md_text, mpl_text, rich_text, safe_href, tex_display, tex_text
from backstop import HANG

runner = CliRunner()

HTML = "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))"
MATH = r"$\frac{$"
FORMULA = "=cmd|' /C calc'!A0"
ESC = "\x1b[31mred"
DISPLAY = "^^5cinput{^^2fetc^^2fpasswd}"

BODY = """
import std.devices
import std.links
import std.models

param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 9{display}

model job : llama3_8b {{ tokens = 8192 }}
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{ }}
dc east {{
  workers = 4
  device = gpu0
  link = ib_ndr
  switch = tor
}}
dc west : east {{}}
link wan {{ bandwidth = wan_bw; latency = 30 ms }}
wan east <-> west = wan
"""

SCHEMES = f"""
scheme ring {{
  label = "{HTML} {MATH}"
  payload = dense
  collective = ring_allreduce
  steps = 10000
}}
scheme gather {{
  label = "{FORMULA} [/bold] {ESC}"
  payload = topk
  fraction = 1/16
  chunk = 65536
  collective = allgather
  steps = 11500
}}
"""


def run(*args):
    r = runner.invoke(app, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return r


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    p = tmp_path_factory.mktemp("hostile") / "hostile.ct"
    p.write_text(f"# {HTML} [/bold] {ESC}\n" + BODY.format(display="") + SCHEMES, encoding="utf-8")
    return p


# ---- the encoders, one per sink ---------------------------------------------------------------


def test_encoders_give_the_exact_escaped_forms():
    assert html_text(HTML).startswith("&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;")
    assert md_text(HTML) == "&lt;script>alert(1)&lt;/script> &lt;img src=x onerror=alert(1)> \\[x\\](javascript:alert(1))"
    # every bracket escaped (a shortcut reference [b] is a link once [b]: url is defined anywhere)
    assert md_text("[x]: javascript:y [a][b] E[max] a -> b &lt;") == "\\[x\\]: javascript:y \\[a\\]\\[b\\] E\\[max\\] a -> b &amp;lt;"
    assert md_text("> [d]: javascript:y") == "\\> \\[d\\]: javascript:y"  # no quote, no definition inside one
    assert md_text("{: onclick=x } $x$") == "\\{: onclick=x \\} &#36;x&#36;"  # no attribute list, no math
    assert md_cell("a|b") == "a\\|b" and md_cell("- x") == "- x"  # a cell opens no block
    # a list item's leading number is text, not a nested ordered list; inside, markup is escaped as md_text does
    assert md_item("1. adamw <b>") == "1\\. adamw &lt;b>" and md_item("12) x") == "12\\) x" and md_item("a 1. b") == "a 1. b"
    assert md_item("[x](javascript:y)") == "\\[x\\](javascript:y)"
    assert safe_href("javascript:alert(1)") == "#" and safe_href("JaVa\tScRiPt:x") == "#" and safe_href("data:text/html,x") == "#"
    assert safe_href("https://example.org/a") == "https://example.org/a"
    assert tex_text("^^5c%#&~_$\\{}") == (
        r"\textasciicircum{}\textasciicircum{}5c\%\#\&\textasciitilde{}\_\$\textbackslash{}\{\}"
    )
    assert tex_text("\x1b") == r"\textbackslash{}x1b"
    assert rich_text("[/bold] " + ESC) == "\\[/bold] \u241b[31mred"
    assert printable("\x1b[2J\x07\x9b\u202e") == "\u241b[2J\u2407\ufffd\ufffd"
    assert csv_cell(FORMULA) == "'" + FORMULA and csv_cell("+1") == "'+1" and csv_cell("@x") == "'@x"
    assert csv_cell("-") == "'-" and csv_cell("\tx") == "'\tx" and csv_cell(-1.5) == -1.5 and csv_cell("ring") == "ring"
    assert mpl_text(MATH) == r"\$\frac{\$" and mpl_text("\x1b") == "\\x1b"


def test_figure_texts_are_clipped():
    """A text in a figure is cut to 100 characters (99 of its own and an ellipsis), a tick label to 40,
    so no label makes matplotlib lay out 240,000 glyphs; a short one passes whole."""
    long = "a label " * 30_000
    assert mpl_text(long) == long[:99] + "\u2026" and len(mpl_text(long)) == 100
    assert mpl_text("$" * 150) == r"\$" * 99 + "\u2026"  # clipped first, then escaped: 99 dollars shown
    assert clip("s" * 128, 40) == "s" * 39 + "\u2026" and clip("band", 40) == "band"


def test_display_name_rule_agrees_with_the_printer():
    assert safe_display(r"b_{\mathrm{WAN}}") and safe_display(r"\eta") and safe_display(r"\rho_{\mathrm{WAN}}")
    for bad in (DISPLAY, r"\input{x}", "a}{", "{a", r"\\", r"\{", "x" * 65):
        assert not safe_display(bad), bad
        assert "^^" not in tex_display(bad) and tex_display(bad).startswith(r"\text{")
    assert tex_display(DISPLAY) == (
        r"\text{\textasciicircum{}\textasciicircum{}5cinput\{\textasciicircum{}\textasciicircum{}2fetc"
        r"\textasciicircum{}\textasciicircum{}2fpasswd\}}"
    )
    assert tex_display(r"b_{\mathrm{WAN}}") == r"b_{\mathrm{WAN}}"


# ---- solve ----------------------------------------------------------------------------------


def test_solve_table_shows_markup_and_escapes_as_text(spec):
    r = run("solve", spec)
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.stdout
    assert f"{FORMULA} [/bold] \u241b[31mred" in r.stdout  # rich markup printed as itself, ESC as its picture


def test_solve_explain_shows_escape(spec):
    r = run("solve", spec, "--explain", "gather")
    assert r.exit_code == 0 and "\x1b" not in r.stdout and "\u241b[31mred" in r.stdout


def test_solve_markdown_is_inert(spec):
    r = run("solve", spec, "-f", "markdown")
    assert r.exit_code == 0
    assert "\x1b" not in r.stdout and "<" not in r.stdout
    assert "_first to the target: gather (=cmd|' /C calc'!A0 \\[/bold\\] \u241b\\[31mred)_" in r.stdout


def test_solve_csv_and_json(spec):
    r = run("solve", spec, "-f", "csv")
    assert r.exit_code == 0
    for row in csv.reader(io.StringIO(r.stdout)):
        assert not any(c.startswith(("=", "+", "@")) for c in row), row
    j = run("solve", spec, "-f", "json")
    assert j.exit_code == 0
    assert "\x1b" not in j.stdout and "=cmd|' /C calc'!A0 [/bold] \\u001b[31mred" in j.stdout  # json.dumps escapes it
    assert f"{FORMULA} [/bold] {ESC}" in {s["label"] for s in json.loads(j.stdout)["schemes"]}  # the data keeps the text


# ---- export latex ---------------------------------------------------------------------------


def test_latex_escapes_labels(spec, tmp_path):
    out = tmp_path / "h.tex"
    assert run("export", "latex", spec, "--standalone", "-o", out).exit_code == 0
    tex = out.read_text(encoding="utf-8")
    assert r"\paragraph{\textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in tex
    assert r"\$\textbackslash{}frac\{\$}" in tex
    assert r"=cmd\textbar{}' /C calc'!A0 [/bold] \textbackslash{}x1b[31mred}" in tex
    assert "\x1b" not in tex and "^^" not in tex
    _compiles(tmp_path, "h.tex")


def _compiles(where, name):
    if shutil.which("pdflatex") is None or subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True).returncode != 0:
        return
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_tex_caret_display_never_reaches_the_tex(tmp_path):
    p = tmp_path / "caret.ct"
    p.write_text(BODY.format(display=f' "{DISPLAY}"') + SCHEMES, encoding="utf-8")
    out = tmp_path / "caret.tex"
    r = run("export", "latex", p, "--standalone", "-o", out)
    if r.exit_code == 1:  # the checker refuses it (CT310), so nothing is written
        assert "CT310" in r.output and not out.exists()
        return
    assert r.exit_code == 0
    tex = out.read_text(encoding="utf-8")
    assert "^^" not in tex and r"\input" not in tex
    assert r"\text{\textasciicircum{}\textasciicircum{}5cinput\{" in tex
    _compiles(tmp_path, "caret.tex")


# ---- report ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_report_is_inert(spec, tmp_path, fmt):
    out = tmp_path / f"r.{fmt}"
    r = run("report", spec, "-o", out, "--format", fmt)
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "<script>" not in text and "<img src=x" not in text and "\x1b" not in text
    if fmt == "md":  # a link needs an unescaped ']('; in HTML the brackets are only text
        assert not re.search(r"(?<!\\)\]\(javascript:", text)
    else:
        assert 'href="javascript' not in text
    if fmt == "md":
        assert "&lt;script>alert(1)&lt;/script> &lt;img src=x onerror=alert(1)> \\[x\\](javascript:alert(1))" in text
        assert "\\[/bold\\] \u241b\\[31mred" in text
    else:
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "&lt;img src=x onerror=alert(1)&gt; [x](javascript:alert(1))" in text
        assert "=cmd|&#x27; /C calc&#x27;!A0 [/bold] \u241b[31mred" in text


# ---- sweep and simulate -------------------------------------------------------------------


def test_sweep_csv_and_plot(spec, tmp_path):
    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    r = run("sweep", spec, "-o", out, "--plot", png)  # ring's label is invalid mathtext: drawn as text
    assert r.exit_code == 0, r.output
    assert png.stat().st_size > 1000
    for row in csv.reader(io.StringIO(out.read_text())):
        assert not any(c.startswith(("=", "+", "@")) for c in row), row


def test_simulate_table_and_csv(spec):
    r = run("simulate", spec, "--steps", "3", "--seeds", "2", "--warmup", "0")
    assert r.exit_code == 0 and "\x1b" not in r.stdout
    c = run("simulate", spec, "--steps", "3", "--seeds", "2", "--warmup", "0", "-f", "csv")
    assert c.exit_code == 0
    for row in csv.reader(io.StringIO(c.stdout)):
        assert not any(x.startswith(("=", "+", "@")) for x in row), row


def test_diagnostic_excerpt_shows_escape(tmp_path):
    p = tmp_path / "bad.ct"
    p.write_text('scheme s { label = "\x1b]0;title\x07\x1b[2J"; bogus = 1 }\n', encoding="utf-8")
    r = run("check", p)
    assert r.exit_code == 1
    assert "\x1b" not in r.output and "\x07" not in r.output
    assert '"\u241b]0;title\u2407\u241b[2J"' in r.output


# ---- degenerate data ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def degenerate(tmp_path_factory):
    d = tmp_path_factory.mktemp("degenerate")
    (d / "empty.ct").write_text("", encoding="utf-8")
    (d / "noschemes.ct").write_text(BODY.format(display=""), encoding="utf-8")
    inf = BODY.format(display="").replace("12.5 GB/s in 0.1 GB/s", "1e-300 B/s in 1e-300 B/s")  # steps take 1e310 s
    (d / "inf.ct").write_text(inf + SCHEMES, encoding="utf-8")
    return d


@pytest.mark.parametrize("name", ["empty", "noschemes", "inf"])
def test_degenerate_specs_render_a_placeholder(degenerate, tmp_path, name):
    spec = degenerate / f"{name}.ct"
    for fmt in ("html", "md"):
        out = tmp_path / f"r.{fmt}"
        r = run("report", spec, "-o", out, "--format", fmt)
        assert r.exit_code in (0, 1), r.output
        assert "Traceback" not in r.output
        if r.exit_code == 0 and name != "inf":
            assert "No schemes to plot: the spec declares no scheme." in out.read_text(encoding="utf-8")
    png = tmp_path / "p.png"
    r = run("sweep", spec, "--plot", png)
    assert r.exit_code in (0, 1) and "Traceback" not in r.output
    if r.exit_code == 0:
        assert png.stat().st_size > 1000


def test_infinite_step_is_labelled_not_finite(degenerate):
    from ctdsl.api import load
    from ctdsl.report.plots import sweep_figure

    sol = load(str(degenerate / "inf.ct")).solve()
    assert all(r.step_time.value == float("inf") for r in sol.schemes.values())
    fig = sweep_figure(sol, None)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts.count("not finite") == 2


def test_longest_label_and_names_are_clipped_in_the_figure(tmp_path):
    """The longest label (256 characters) and scheme name (128) a spec may hold: the legend shows
    'adamw: ' and the label cut to 100 characters in all (99 and an ellipsis); the bar chart's tick
    label of the 128-character scheme is its first 39 characters and an ellipsis."""
    from fuzz.hostile_large import texts_at_limit

    from ctdsl.api import load
    from ctdsl.numeric import CompiledForms
    from ctdsl.numeric.crossings import sweep_curves
    from ctdsl.report.plots import sweep_figure

    path = tmp_path / "long.ct"
    path.write_text(texts_at_limit(), encoding="utf-8")
    sol = load(str(path)).solve()
    fig = sweep_figure(sol, sweep_curves(sol, CompiledForms(sol)))
    legend = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    full = "adamw: " + ("a label " * 32)[:256]
    assert full[:99] + "\u2026" in legend
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert "s" * 39 + "\u2026" in ticks and not any(len(t) > 40 for t in ticks)


KEYWORDS = """import std.devices
import std.links
import std.models

model job : llama3_8b { tokens = 8192 }
device gpu0 : h100 { efficiency = 0.4 }
switch graph {}
link subgraph : eth100g { bandwidth = 12.5 GB/s }
dc node { workers = 2; device = gpu0; link = ib_ndr; switch = graph }
dc edge : node {}
wan node <-> edge = subgraph
scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
"""


def _dot_nodes_and_edges(text: str):
    """Node and edge statements of a DOT text, read by pydot's own parser, subgraphs included."""
    import pydot

    (g,) = pydot.graph_from_dot_data(text)
    nodes, edges, todo = [], [], [g]
    while todo:
        sub = todo.pop()
        nodes += [n.get_name() for n in sub.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
        edges += [(e.get_source(), e.get_destination(), e.get_label()) for e in sub.get_edges()]
        todo += sub.get_subgraphs()
    return sorted(nodes), sorted(edges)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_dot_quote_keeps_a_hostile_text_one_string():
    """An id that closes its string and starts an edge stays one node; the same id pasted between
    plain quotes (what an unescaped writer does) makes pydot read an edge out of it."""
    from ctdsl.model.graph import dot_quote

    hostile = 'x" -> "evil'
    label = 'a\\nb"c\x1b[2J'
    assert dot_quote(hostile) == r'"x\" -> \"evil"'
    assert dot_quote(label) == '"a\\\\nb\\"c\u241b[2J"'  # backslash doubled, quote escaped, ESC shown
    nodes, edges = _dot_nodes_and_edges(f"digraph g {{ {dot_quote(hostile)} [label={dot_quote(label)}]; }}")
    assert nodes == [dot_quote(hostile)] and edges == []
    _, naive_edges = _dot_nodes_and_edges(f'digraph g {{ "{hostile}"; }}')
    assert len(naive_edges) == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_graph_dot_with_dot_keywords_as_names(tmp_path):
    """DCs named node and edge, a switch named graph, a WAN link named subgraph (DOT's keywords): the
    output parses to 2 DCs x (2 workers + 1 switch) = 6 nodes and 5 two-way edges, 4 worker ports and
    the WAN, each with its label."""
    path = tmp_path / "kw.ct"
    path.write_text(KEYWORDS, encoding="utf-8")
    r = runner.invoke(app, ["graph", str(path), "--format", "dot"])
    assert r.exit_code == 0, r.output
    nodes, edges = _dot_nodes_and_edges(r.stdout)
    assert nodes == sorted(f'"{dc}.{n}"' for dc in ("node", "edge") for n in ("graph", "w0", "w1"))
    assert len(edges) == 5 and ('"node.graph"', '"edge.graph"', '"subgraph 12.5 GB/s"') in edges


def test_github_annotations_show_control_characters(tmp_path):
    """A file named with ESC [2J and holding an ESC: the annotation names the file and the character
    with visible ones (ESC as U+241B), at line 1, column 13 (after the 12 characters of 'param x = 1 ')."""
    path = tmp_path / "a\x1b[2Jb.ct"
    path.write_bytes(b"param x = 1 \x1b[31m\n")
    r = runner.invoke(app, ["check", str(path), "--format", "github"])
    assert r.exit_code == 1
    assert "\x1b" not in r.stdout and "a\u241b[2Jb.ct,line=1,col=13," in r.stdout
    from ctdsl.diagnostics import Diagnostic, Severity
    from ctdsl.diagnostics.github import annotation

    d = Diagnostic(code="CT003", severity=Severity.ERROR, message="bell\x07 and OSC \x1b]0;x\x07 and \x9b2J", span=None)
    assert annotation(d, "f.ct") == "::error file=f.ct,title=ctdsl (CT003)::bell\u2407 and OSC \u241b]0;x\u2407 and \ufffd2J"
