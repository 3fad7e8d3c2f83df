"""`ctdsl explore` without a browser: the JavaScript printer, the embedding, the page, the command.

The printer's expected strings are written out by hand from the rules in
ctdsl/report/explore/jsprint.py (full-precision numbers, exact p/q divisions,
the tolerant ceiling, params as a0, a1, ...). What the page computes is checked
in a real browser against the solver (tests/test_explore_browser.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.report.explore.jsprint import Unprintable, js_function, js_functions
from ctdsl.report.explore.page import script_json

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
runner = CliRunner()


def body(code: str) -> list[str]:
    return code.splitlines()[1:-1]


def test_printer_numbers_to_full_precision():
    x = sp.Symbol("wan_bw", positive=True)
    code = js_function("f", (x,), [sp.Float(0.1) * x, sp.Rational(1, 3) * x, sp.Integer(2**60 + 1), sp.Float(1 / 3), sp.Rational(10**400, 3)])
    assert body(code) == [
        "  const a0 = a[0];",
        "  out[0] = 0.1*a0;",
        "  out[1] = ((1/3))*a0;",  # an exact p/q as a division: JavaScript rounds it as Python does
        "  out[2] = 1.152921504606847e+18;",  # 2^60 + 1 has no double; the nearest is 2^60 = 1152921504606846976
        "  out[3] = 0.3333333333333333;",  # repr of the double nearest 1/3: 16 digits
        "  out[4] = Infinity;",  # 10^400 / 3 is beyond the largest double, as numpy's float would make it
    ]


def test_printer_regimes_exact_and_the_tolerant_ceiling():
    b, f = sp.symbols("b f", positive=True)
    code = js_function("f", (b, f), [sp.Max(2 / b, 3 / f), sp.Min(b, 10), sp.ceiling(b / 4), sp.Piecewise((b, b < 1), (f, True)), None])
    assert body(code) == [
        "  const a0 = a[0], a1 = a[1];",
        "  out[0] = Math.max(2/a0, 3/a1);",
        "  out[1] = Math.min(10, a0);",
        "  out[2] = ceilTol(((1/4))*a0);",
        "  out[3] = ((a0 < 1) ? (a0) : (a1));",
        "  out[4] = NaN;",
    ]


def test_common_subexpressions_are_computed_once_per_function():
    b = sp.Symbol("b", positive=True)
    shared = sp.Max(1, 5 / b)
    code = js_functions((b,), {"one": [shared + 2, 3 * shared], "two": [b + 1]})
    one, two = code.split("\n}\n")
    assert one.count("Math.max") == 1 and "const t0 = Math.max(1, 5/a0);" in one
    assert "Math.max" not in two  # a function computes only the temporaries its outputs use


def test_spec_names_never_become_identifiers():
    names = ["alert", "constructor", "__proto__", "t0"]
    syms = tuple(sp.Symbol(n, positive=True) for n in names)
    code = js_function("f", syms, [sum(s * (k + 2) for k, s in enumerate(syms))])
    for n in names[:3]:
        assert n not in code
    assert "a3" in code  # the param called t0 prints as a3, never as a temporary


def test_a_symbol_that_is_not_a_param_is_refused():
    b, c = sp.symbols("b c", positive=True)
    with pytest.raises(Unprintable):
        js_function("f", (b,), [b + c])
    with pytest.raises(Unprintable):
        js_function("f", (b,), [sp.Piecewise((b, b < 1))])  # no otherwise branch: undefined somewhere


def test_script_json_cannot_close_the_script():
    data = {"label": "</script><script>alert(1)</script><!-- & -->"}
    text = script_json(data)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == data


HOSTILE = "</script><script>alert(1)</script><!--"


def hostile_spec(tmp_path: Path) -> Path:
    text = (ROOT / "examples" / "14_breakeven.ct").read_text(encoding="utf-8")
    text = text.replace("scheme band {\n", 'scheme band {\n  label = "' + HOSTILE + '"\n')
    path = tmp_path / "hostile.ct"
    path.write_text(text, encoding="utf-8")
    return path


def test_spec_text_is_encoded_in_the_page(tmp_path):
    html = ctdsl.load(hostile_spec(tmp_path)).explore()
    assert html.count("<script") == 2  # the data and the page's own script, nothing more
    assert html.count("</script>") == 2
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--" in html  # the equations' heading
    data = re.search(r'<script type="application/json" id="ct-data">(.*?)</script>', html, re.S).group(1)
    label = json.loads(data)["schemes"][1]["label"]
    assert label == "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--"  # encoded once, for innerHTML


def test_flagship_page_is_small_self_contained_and_offline():
    html = ctdsl.load(FLAGSHIP).explore()
    assert len(html.encode("utf-8")) < 1_500_000
    assert "default-src 'none'" in html  # the page's policy forbids loading anything
    assert not re.search(r"https?://", html)
    assert not re.search(r"\s(src|href)=", html)
    assert "@" not in re.sub(r"@media", "", html)  # every template marker was filled


def _page_data(html: str) -> dict:
    return json.loads(re.search(r'id="ct-data">(.*?)</script>', html, re.S).group(1))


def test_cli_writes_the_page_and_set_is_the_start(tmp_path):
    out = tmp_path / "e.html"
    r = runner.invoke(app, ["explore", str(FLAGSHIP), "-o", str(out), "--set", "wan_bw=25 GB/s", "--set", "eff=0.5"])
    assert r.exit_code == 0, r.output
    starts = {p["name"]: p["start"] for p in _page_data(out.read_text(encoding="utf-8"))["params"]}
    assert starts == {"wan_bw": 25e9, "budget": 50e9, "eff": 0.5, "wan_load": 0.0}


def test_cli_exit_codes(tmp_path):
    assert runner.invoke(app, ["explore", str(tmp_path / "missing.ct")]).exit_code == 2
    bad = tmp_path / "bad.ct"
    bad.write_text("param x = 1 GB/s\nscheme s { payload = nonsense }\n", encoding="utf-8")
    assert runner.invoke(app, ["explore", str(bad)]).exit_code == 1
    assert runner.invoke(app, ["explore", str(FLAGSHIP), "-o", str(tmp_path / "no" / "dir" / "e.html")]).exit_code == 2


def test_same_page_under_any_hash_seed(tmp_path):
    outs = []
    for seed in ("0", "12345"):
        out = tmp_path / f"e{seed}.html"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", "from ctdsl.cli import main; main()", "explore", str(FLAGSHIP), "-o", str(out)], check=True, env=env)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_a_bounds_expression_prints_as_checked_operations():
    """The checker's expression of a bound, as the page evaluates it: each node once, children
    first, through the page's checked operations (X.*), params as a[K], numbers as doubles."""
    from fractions import Fraction

    from ctdsl.model import expr as E
    from ctdsl.report.explore.checks import js_check

    x, y = E.Sym("wan_bw"), E.Sym("eff")
    shared = E.Mul(E.Num(Fraction(1, 10)), x)
    expr = E.Div(E.Add(shared, shared), E.Sub(y, E.Num(Fraction(-3))))
    assert js_check(expr, {"eff": 2, "wan_bw": 0}) == (
        "function (a) { const v0 = 0.1; const v1 = X.fin(a[0]); const v2 = X.mul(v0, v1); const v3 = X.add(v2, v2); "
        "const v4 = X.fin(a[2]); const v5 = (-3.0); const v6 = X.sub(v4, v5); const v7 = X.div(v3, v6); return v7; }"
    )
    big = E.Call("ceil", (E.Pow(E.Num(Fraction(10**400)), Fraction(1, 2)),))
    assert js_check(big, {}) == "function (a) { const v0 = X.big(); const v1 = X.pow(v0, 0.5, false); const v2 = X.ceil(v1); return v2; }"


def test_the_page_carries_the_checkers_bounds_and_words():
    """The flagship's four params each have a bound (efficiency, bandwidth, load, the module's
    budget); the words and codes are ctdsl.language.bounds', the places the spec's."""
    from ctdsl.language.bounds import BOUNDS

    data = _page_data(ctdsl.load(FLAGSHIP).explore())["checks"]
    assert [(b["owner"], b["bound"], b["params"], b["ends"]) for b in data["list"]] == [
        ("accel.efficiency", "fraction", [2], [[2, 0.2, 0.6]]),
        ("wan.bandwidth", "positive", [0], [[0, 0.1e9, 1000e9]]),
        ("wan.load", "utilisation", [3], [[3, 0.0, 0.95]]),
        ("qsfp.compute.budget", "positive", [1], [[1, 10e9, 99e9]]),
    ]
    lines = FLAGSHIP.read_text(encoding="utf-8").splitlines()

    def place(written: str) -> str:  # where a field's value is written (`efficiency = eff`: at eff), counted here
        k = next(k for k, line in enumerate(lines) if written in line)
        return f"{FLAGSHIP}:{k + 1}:{lines[k].index(written) + written.index(' = ') + 4}"

    assert [b["at"] for b in data["list"]] == [place("efficiency = eff"), place("bandwidth = wan_bw"), place("load = wan_load"), place("budget = budget")]
    assert data["kinds"]["fraction"]["words"] == BOUNDS["fraction"].words == "must be a fraction in (0, 1]"
    assert data["kinds"]["utilisation"]["code"] == "CT302" and data["kinds"]["utilisation"]["highClosed"] is False


def test_display_names_as_mathml():
    from ctdsl.report.explore.mathml import display_mathml

    def body(tex: str) -> str:
        return re.search(r"<semantics><mrow>(.*)</mrow><annotation", display_mathml(tex)).group(1)

    assert body(r"b_{\mathrm{WAN}}") == "<msub><mi>b</mi><mi>WAN</mi></msub>"
    assert body(r"\eta") == "<mi>η</mi>"
    assert body(r"\Delta t_1^{2}") == '<mi mathvariant="normal">Δ</mi><msubsup><mi>t</mi><mn>1</mn><mn>2</mn></msubsup>'
    assert body(r"x_{ab}") == "<msub><mi>x</mi><mrow><mi>a</mi><mi>b</mi></mrow></msub>"
    assert body(r"\text{no. 2}") == "<mtext>no. 2</mtext>"
    assert body("n_{<b>&}") == "<msub><mi>n</mi><mrow><mi>&lt;</mi><mi>b</mi><mi>&gt;</mi><mi>&amp;</mi></mrow></msub>"  # escaped, whatever comes
    assert r"<annotation encoding=\"application/x-tex\">b_{\mathrm{WAN}}</annotation>".replace("\\\"", '"') in display_mathml(r"b_{\mathrm{WAN}}")


def test_the_palette_is_distinct_and_deterministic():
    from ctdsl.report.explore.palette import BASE, palette

    p = palette(40)
    assert p[:10] == list(BASE) and len(set(p)) == 40 and palette(40) == p and palette(12)[:12] == p[:12]


# two hand-offs over a 25 GbE link whose bandwidth is a param, compared on energy per output token and on
# TTFT (a cut-down specs/llama70b_disagg.ct)
HANDOFFS = """import std.devices
import std.links
import std.models
param rate = 4 req/s in 0.5 req/s .. 12 req/s log 24
param link_bw = 3.125 GB/s in 1 GB/s .. 50 GB/s log 24
model llama70b : llama3_70b {}
device accel : h100 { efficiency = 0.55 }
instance node { device = accel; model = llama70b; tp = 4; mem_efficiency = 0.8; overhead = 0.5 ms; kv_memory = 0.9; prefill_tokens = 8192; max_batch = 256 }
pool prefill { role = prefill; instance = node }
pool decode { role = decode; instance = node }
slo chat { ttft = 1 s; tpot = 25 ms; percentile = 0.99 }
workload disagg { pool = prefill; rate = rate; prompt = 2048 tokens; output = 256 tokens; prompt_cv = 0.5; output_cv = 0.5; slo = chat }
link e25g : eth25g { bandwidth = link_bw }
handoff e25 { from = prefill; to = decode; link = e25g }
handoff e25_fp8 { from = prefill; to = decode; link = e25g; payload = fp8 }
breakeven e25 vs e25_fp8 over link_bw on energy
breakeven e25 vs e25_fp8 over link_bw on ttft
"""


def test_a_handoff_breakeven_on_energy_is_the_serving_views(tmp_path):
    """`breakeven h1 vs h2 ... on energy` shares its word with the schemes' energy to target: the page took it for a
    break-even of schemes and stopped ('internal error: ValueError: 'e25' is not in list'). Now both hand-off break-evens
    are the serving view's, each with its paths, param, the term it compares and the range solve searches."""
    spec = tmp_path / "handoffs.ct"
    spec.write_text(HANDOFFS, encoding="utf-8")
    data = _page_data(ctdsl.load(spec).explore())
    assert data["breakevens"] == []
    paths = [p["name"] for p in data["serving"]["paths"]]
    got = [{k: hb[k] for k in ("k", "on", "term", "lo", "hi", "log")} | {"x": paths[hb["x"]], "y": paths[hb["y"]], "over": data["params"][hb["over"]]["name"]}
           for hb in data["serving"]["breakevens"]]
    assert got == [
        {"k": 0, "on": "energy", "term": "energy_per_token", "lo": 1e9, "hi": 50e9, "log": True, "x": "disagg/e25", "y": "disagg/e25_fp8", "over": "link_bw"},
        {"k": 1, "on": "ttft", "term": "ttft", "lo": 1e9, "hi": 50e9, "log": True, "x": "disagg/e25", "y": "disagg/e25_fp8", "over": "link_bw"},
    ]


def test_the_pages_handoff_breakevens_search_as_the_solver_does():
    """The page's copies of the solver's constants (the report may not import the solver): the term each measure
    compares, the scan that finds where the queues settle, the break-evens' scan."""
    from ctdsl.report.explore import model
    from ctdsl.symbolic import breakeven, serving_breakeven

    assert {on: term for on, (term, _) in model.HANDOFF_MEASURES.items()} == serving_breakeven.MEASURE_TERM
    assert model.SETTLE_STEPS == serving_breakeven.SETTLE_STEPS
    assert model.SCAN_STEPS == breakeven.SCAN_STEPS
