"""The sink oracles (tests/fuzz/sinks.py) find what they are meant to find, and nothing in ctdsl's own outputs.

Each rule is shown an output where spec text arrived active, written by hand as the
sink's consumer would receive it, and the same output with the text shown instead;
the first must be a leak of that rule, the second none. That the outputs ctdsl writes
for shipped specs pass every oracle is checked on the flagship in
test_harness_costs.py and on two examples here, through the harness.
"""

from __future__ import annotations

import json

import pytest

from fuzz import sinks
from fuzz.cases import LIMIT
from fuzz.harness import ROOT, Harness
from fuzz.payloads import MARKER


def rules(leaks) -> set[str]:
    return {leak.rule for leak in leaks}


@pytest.mark.parametrize("text, rule", [
    ("a\x1b[31mred", "escape sequence"),
    ("\x1b]8;;http://evil/\x1b\\x", "escape sequence"),
    ("a\x9b31m", "C1 control"),
    ("done\rOK", "carriage return"),
    ("x\u202egnp.exe", "BiDi control"),
    ("\u2066x\u2069", "BiDi control"),
    ("bell\x07", "control character"),
])
def test_terminal_controls_are_leaks(text, rule):
    assert rule in rules(sinks.terminal(text))


def test_terminal_text_shown_is_not_a_leak():
    assert sinks.terminal("a\tb\nc \u00e9 \u241b[31m \ufffd \u2192") == []


@pytest.mark.parametrize("text, rule", [
    ("::error::x", "workflow command (::)"),
    ("out\n  ::stop-commands::tok", "workflow command (::)"),
    ("x.ct:1:2: a\r::warning::y", "workflow command (::)"),  # a lone CR starts a line for the runner
    ("##[error]x", "log command (##[)"),
    ('  "label": "a ##[error]x",', "log command (##[)"),  # anywhere in the line
    ("msg ##vso[task.setvariable variable=x]1", "logging command (##vso[)"),
])
def test_ci_commands_are_leaks(text, rule):
    assert rule in rules(sinks.cilog(text))


def test_ctdsl_annotations_pass_only_in_the_github_format_and_only_well_formed():
    own = "::warning file=a.ct,line=4,col=20,endLine=4,endColumn=40,title=ctdsl (CTL006)::bits read as bytes?%0Ahelp: x"
    assert sinks.cilog(own, github=True) == []
    whole_file = "::error file=x%3A%3Aerror.ct,title=ctdsl (CT001)::x.ct is not UTF-8 text (byte 17)"
    assert sinks.cilog(whole_file, github=True) == []
    assert rules(sinks.cilog(own)) == {"workflow command (::)"}
    forged = "::warning file=::stop-commands::tok.ct,line=1::m"  # a file name that ends the properties early
    assert rules(sinks.cilog(forged, github=True)) == {"workflow command (::)"}
    assert rules(sinks.cilog("::stop-commands::tok", github=True)) == {"workflow command (::)"}
    assert sinks.cilog("x.ct:1:2: CT101 \u2060::error::shown", github=True) == []
    named = "::error file=##vso[task.complete]x.ct,line=1,title=ctdsl (CT101)::unknown base"  # GitHub's, whole
    assert sinks.cilog(named, github=True) == []
    assert rules(sinks.cilog("x.ct:1:2: see ##vso[task.complete]x.ct", github=True)) == {"logging command (##vso[)"}


@pytest.mark.parametrize("text, rule", [
    (f"> [{MARKER}]: javascript:alert(1)\n\nsee [{MARKER}]", "link reference definition"),
    (f"[{MARKER}]: http://evil.example/x.png\n\n![{MARKER}]", "link reference definition"),
    ("a ![x](http://evil.example/x.png)", "remote image"),
    ("<img src=x onerror=alert(1)>", "raw HTML"),
    ("text <b>bold</b>", "raw HTML"),
    ("[a](javascript:alert(1))", "rendered: javascript: or other non-web URL"),
    (f"# {MARKER} heading", "rendered: heading from spec text"),
    ("a paragraph\n{: onclick=alert(1) }", "rendered: event handler attribute"),
    (f"a **{MARKER} strong** b", "rendered: <strong> from spec text"),
    (f"a _{MARKER} em_ b", "rendered: <em> from spec text"),
    (f"a `{MARKER} code` b", "rendered: <code> from spec text"),
    (f"a ~~{MARKER} del~~ b", "rendered: <s> from spec text"),
])
def test_markdown_that_obeys_spec_text_is_a_leak(text, rule):
    assert rule in rules(sinks.markdown(text))


def test_markdown_that_shows_spec_text_is_not_a_leak():
    shown = (
        "# Report\n\nIntro \\> \\[x\\]: javascript:alert(1) and \\[x\\] &lt;img src=x&gt; \\# not a heading\n\n"
        "| a | b |\n|---|---|\n| x \\| y | ![plot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB) |\n\n"
        "```latex\nb^{*}\n```\n\n"
        f"**\\*\\*{MARKER} strong\\*\\* and \\_{MARKER} em\\_ and \\`{MARKER} code\\` and &#126;&#126;{MARKER} del~~**\n"
    )
    assert sinks.markdown(shown) == []


PAGE = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'\">"
        "<title>{title}</title></head><body><p>{body}</p>"
        "<script type=\"application/json\" id=\"ct-data\">{data}</script><script>start()</script></body></html>")


def _page(title="x", body="x", data='{"label": "x"}') -> str:
    return PAGE.format(title=title, body=body, data=data)


@pytest.mark.parametrize("html, rule", [
    (_page(body=f"<script>alert('{MARKER}')</script>"), "script from spec text"),
    (_page(body="<img src=x onerror=alert(1)>"), "event handler attribute"),
    (_page(body="<img src=http://evil.example/x.png>"), "remote image or source"),
    (_page(body="<a href=' javascript:alert(1)'>x</a>"), "javascript: or other non-web URL"),
    (_page(body="<iframe src=x></iframe>"), "<iframe> element"),
    (_page(body=f"<{MARKER}>"), "element from spec text"),
    (_page(body=f"<b {MARKER}=1>"), "attribute from spec text"),
    (_page(body="<meta http-equiv=refresh content=0;url=http://evil>"), "meta refresh"),
    (_page(data=f'{{"label": "</script><script>alert(\'{MARKER}\')</script>"}}'), "JSON data block broken"),
    (_page(data=f'{{"label": "</script><script>alert(\'{MARKER}\')</script>"}}'), "script from spec text"),
    (_page(data='{"label": "<!--<script>"}'), "JSON data could end its script"),
])
def test_html_that_obeys_spec_text_is_a_leak(html, rule):
    assert rule in rules(sinks.html(html, page=True))


def test_html_that_shows_spec_text_is_not_a_leak():
    shown = _page(title=f"&lt;script&gt;{MARKER}", body=f"&lt;img src=x onerror=alert(1)&gt; {MARKER}",
                  data=f'{{"label": "\\u003c/script\\u003e{MARKER}"}}')
    assert sinks.html(shown, page=True) == []


def test_the_explorers_policy_must_be_there_and_first():
    assert "Content-Security-Policy not intact" in rules(sinks.html(_page().replace("http-equiv", "name"), page=True))
    late = _page().replace("</body>", "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src *\"></body>")
    assert "Content-Security-Policy not intact" in rules(sinks.html(late, page=True))


@pytest.mark.parametrize("tex, rule", [
    (r"\paragraph{\input{x}}", r"\input"),
    (r"a \immediate\write18{id}", r"\write"),  # a control word is letters only: \write, then 18
    ("\\def\\x{}", r"\def"),
    ("% a comment\r\\input{x}", r"\input"),  # TeX ends a line at a CR too: the comment is over
    (r"b^^{*}", "^^ escape"),
    (r"\paragraph{a}}", "unbalanced braces"),
    (r"\paragraph{a", "unbalanced braces"),
    (r"\begin{align}x\end{aligned}", "environment closed out of order"),
    ("a\x1bb", "control character"),
])
def test_latex_that_obeys_spec_text_is_a_leak(tex, rule):
    assert rule in rules(sinks.latex(tex))


def test_latex_that_shows_spec_text_is_not_a_leak():
    shown = ("% ctdsl export latex of x.ct \\input{x}\n"
             r"\paragraph{\textbackslash{}input\{x\} b\textasciicircum{}\textasciicircum{}} \begin{align}a^{*}\end{align}")
    assert sinks.latex(shown) == []


def test_csv_formulas_are_leaks_and_numbers_and_guarded_cells_are_not():
    assert rules(sinks.csv_cells("a,=1+1\r\n")) == {"formula cell"}
    for cell in ("+cmd", "@SUM(1)", "-2+3", '"\t=1"'):
        assert rules(sinks.csv_cells(f"x,{cell}\n")) == {"formula cell"}, cell
    assert sinks.csv_cells("x,-1.5,-,1e-3,'=1+1,'-2+3\n") == []


def test_json_that_is_not_json_or_not_unicode_is_a_leak():
    assert rules(sinks.json_output(b'{"a": NaN}')) == {"not JSON"}
    assert rules(sinks.json_output(b'{"a": "\xff"}')) == {"not UTF-8"}
    assert rules(sinks.json_output(b'{"a": "\\ud800"}')) == {"lone surrogate"}
    assert sinks.json_output(b'{"a": "\\u0000 \\u2028 \\ud83d\\ude00"}') == []


def test_sarif_is_held_to_its_schema():
    ok = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ctdsl"}}, "results": []}]}
    assert sinks.json_output(json.dumps(ok).encode(), sarif=True) == []
    bad = {"version": "2.1.0", "runs": [{"results": []}]}  # a run must name its tool
    assert rules(sinks.json_output(json.dumps(bad).encode(), sarif=True)) == {"not valid SARIF 2.1.0"}


BEFORE = """import std.links
# a comment\x0cwith a form feed
link a : eth100g { bandwidth = 400 GB/s }
link b : eth100g { bandwidth = 100 GB/s }
"""
SARIF = json.dumps({"runs": [{"results": [{"ruleId": "CTL006", "message": {"text": (
    "link 'b': the name 'eth100g' means 12.5 GB/s, but its bandwidth is 100 GB/s, 8x more: bits read as bytes?\n"
    "help: write bandwidth = 12.5 GB/s (or 100 Gb/s)")}}]}]})


def test_a_fix_of_the_flagged_field_is_not_a_leak():
    after = BEFORE.replace("bandwidth = 100 GB/s", "bandwidth = 12.5 GB/s")
    assert sinks.fix(BEFORE, after, SARIF) == []
    assert sinks.fix(BEFORE, BEFORE, SARIF) == []


def test_a_fix_anywhere_else_is_a_leak():
    """Issue 25 item 2's corruption: the line above the flagged one rewritten (400 -> 12.5 GB/s)."""
    wrong = BEFORE.replace("bandwidth = 400 GB/s", "bandwidth = 12.5 GB/s")
    assert rules(sinks.fix(BEFORE, wrong, SARIF)) == {"changed text outside the flagged spans"}
    assert rules(sinks.fix(BEFORE, wrong, json.dumps({"runs": [{"results": []}]}))) == {
        "changed a file with nothing fixable"}


@pytest.mark.parametrize("example", ["examples/10_payloads.ct", "examples/08_switch.ct"])
def test_ctdsl_outputs_for_shipped_examples_pass_every_oracle(example):
    h = Harness(limit=LIMIT)
    try:
        res = h.run((ROOT / example).read_text(encoding="utf-8"))
    finally:
        h.close()
    assert res.clean
    assert [(o.command, o.leaks) for o in res.outcomes if o.leaks] == []


def test_removing_an_unused_suppression_with_its_blanks_is_not_a_leak():
    before = "param a = 1\nparam s = 1  # ctdsl: ignore[CTL006]\n"
    sarif = json.dumps({"runs": [{"results": [{"ruleId": "CTL011", "message": {"text": "unused suppression"}}]}]})
    assert sinks.fix(before, "param a = 1\nparam s = 1\n", sarif) == []
    assert rules(sinks.fix(before, "param a = 1\nparam s =\n", sarif)) == {"changed text outside the flagged spans"}
