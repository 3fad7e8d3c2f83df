"""`ctdsl export latex` for papers: compiled by real pdflatex, forms checked against the exact results.

- The standalone document (one and two columns) and a two-column article that
  `\\input`s the fragment compile with no error, no undefined reference and zero
  overfull boxes (read from pdflatex's own log).
- Each printed form, rearranged and rounded to four figures, is the exact form:
  evaluated at random points of the params' ranges it agrees with the solver's
  expression to the rounding (an independent evaluation of the same quantity).
- Hand-derived pieces: the WAN queueing term of the flagship's adamw all-reduce,
  8e9 rho / (b (2 - 2 rho)) s with b in B/s, is 4 rho / (b (1 - rho)) s with b in
  GB/s (8e9 / (2 x 1e9) = 4).
- A max / min whose two arguments cross in the swept param's range gets a cases
  row: the flagship's adamw t_2 crosses at b = 100 GB/s, derived by hand from the
  model's shape and the port rate below; one that does not cross says which
  argument holds over the whole range (and still compiles in two columns); the
  exact, numeric and kept paths of `regime`; a form too large to split is kept.
"""

from __future__ import annotations

import math
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp
from typer.testing import CliRunner

import ctdsl
from ctdsl import units as U
from ctdsl.cli import app
from ctdsl.report.paper import paper_latex
from ctdsl.report.paper_cases import MAX_SPLIT_OPS, regime
from ctdsl.report.paper_forms import Printer
from ctdsl.results.quantity import Quantity
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
WORKERS = str(ROOT / "tests" / "data" / "llama70b_workers.ct")  # the single-GPU study, whose forms are derived below
PDFLATEX = shutil.which("pdflatex")


def _has_siunitx() -> bool:
    kpse = shutil.which("kpsewhich")
    return kpse is not None and subprocess.run([kpse, "siunitx.sty"], capture_output=True).returncode == 0


needs_tex = pytest.mark.skipif(
    PDFLATEX is None or not _has_siunitx(), reason="pdflatex with siunitx is not installed (.ci/run installs texlive-science)"
)


@pytest.fixture(scope="module")
def sol():
    return ctdsl.load(WORKERS).solve()


def compile_tex(folder: Path, name: str) -> str:
    """Run pdflatex twice (for the references); return the log."""
    for _ in range(2):
        proc = subprocess.run(
            [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=HANG,
        )
        assert proc.returncode == 0, proc.stdout[-3000:]
    return (folder / name.replace(".tex", ".log")).read_text(encoding="latin-1")


def clean(log: str) -> None:
    assert "Overfull" not in log, [line for line in log.splitlines() if "Overfull" in line]
    assert "There were undefined references" not in log and "LaTeX Warning: Reference" not in log


@needs_tex
@pytest.mark.parametrize("columns", [1, 2])
def test_standalone_compiles_without_overfull_boxes(tmp_path, columns):
    out = tmp_path / "study.tex"
    r = CliRunner().invoke(app, ["export", "latex", FLAGSHIP, "--standalone", "--columns", str(columns), "-o", str(out)])
    assert r.exit_code == 0, r.output
    clean(compile_tex(tmp_path, "study.tex"))


@needs_tex
@pytest.mark.parametrize("units", ["siunitx", "plain"])
def test_fragment_input_into_a_two_column_article(tmp_path, units):
    frag = tmp_path / "results.tex"
    r = CliRunner().invoke(app, ["export", "latex", FLAGSHIP, "--columns", "2", "--units", units, "-o", str(frag)])
    assert r.exit_code == 0, r.output
    head = frag.read_text().splitlines()[1]
    packages = re.findall(r"\\usepackage\{(\w+)\}", head)  # the header says what the fragment needs
    preamble = "".join(rf"\usepackage{{{p}}}" for p in packages)
    if units == "siunitx":
        assert "siunitx" in packages and r"\DeclareSIUnit\flop{FLOP}" in head
        preamble += r"\DeclareSIUnit\flop{FLOP}"
    else:
        assert "siunitx" not in packages
    (tmp_path / "paper.tex").write_text(
        "\\documentclass[10pt,twocolumn]{article}\n" + preamble + "\n\\begin{document}\nSome text.\n\n\\input{results}\n\n"
        "The step of AdamW is (\\ref{eq:ctdsl:adamw:step}), the break-even (\\ref{eq:ctdsl:be:band-switch-vs-adamw});"
        " Table~\\ref{tab:ctdsl:numbers}.\n\\end{document}\n"
    )
    log = compile_tex(tmp_path, "paper.tex")
    clean(log)
    assert "There were undefined references" not in log


def test_equations_are_numbered_and_labelled(sol):
    tex = paper_latex(sol)
    assert r"\begin{align}" in tex and "align*" not in tex
    for name in sol.schemes:
        key = name.replace("_", "-")
        for q in ("payload", "wan", "compute", "step", "target"):
            assert rf"\label{{eq:ctdsl:{key}:{q}}}" in tex, (name, q)
    assert r"\label{eq:ctdsl:be:band-switch-vs-adamw}" in tex and r"\label{tab:ctdsl:numbers}" in tex
    other = paper_latex(sol, prefix="llama")
    assert r"\label{eq:llama:adamw:step}" in other and "eq:ctdsl:" not in other


def test_units_are_upright_and_the_table_is_a_float(sol):
    tex = paper_latex(sol)
    assert r"$b_{\mathrm{WAN}} = \qty{12.5}{\giga\byte\per\second}$" in tex  # not $b = 12.5 GB/s$ in italics
    plain = paper_latex(sol, units="plain")
    assert r"$b_{\mathrm{WAN}} = 12.5\,\mathrm{GB/s}$" in plain and r"\qty" not in plain
    assert r"\begin{table}[tbp]" in tex and r"\caption{" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"\begin{table*}[tbp]" in paper_latex(sol, columns=2)  # spans both columns
    # numbers aligned on the decimal point: siunitx S columns, their format from the numbers, the values bare
    (spec,) = re.findall(r"\\begin\{tabular\}\{(.*)\}\n\\toprule\nscheme", tex)
    # 6 number columns: c, V_WAN, T, T_target, E_target and V_target (the bytes a worker sends to the target)
    assert spec.startswith("lS[table-format=") and spec.count("S[") == 6, spec
    assert r"\texttt{adamw} & " in tex and r"\texttt{adamw} & $" not in tex
    assert "S[" not in re.findall(r"\\begin\{tabular\}\{(.*)\}", plain)[0]  # plain units: right-aligned
    assert "B_{\\mathrm{WAN}}" not in tex and "V_{\\mathrm{WAN}}" in tex  # bytes are not bandwidth with a capital
    first = tex.splitlines()[:3]
    assert first[0].startswith("% ctdsl") and "amsmath" in first[1] and "booktabs" in first[1]


def test_table_format_counts_digits():
    from ctdsl.report.document_tex import table_format

    assert table_format(["141.1", "8.819", "23.22"]) == "3.3"  # 3 digits before the point (141), 3 after (819)
    assert table_format(["-0.4861", "0", "12"]) == "-2.4"
    assert table_format(["1.411e5", "2e-4", "7"]) == "1.3e-1"


def test_queueing_term_is_cancelled_by_hand(sol):
    t2 = sol.schemes["adamw"].phases[1].time
    form = Printer(sol.symbols, "wan_bw").form(t2)
    assert form.unit == "s"
    # its two WAN steps are a burst on a WAN shared fairly (queueing.py): one flow of 2 x that waits
    # 2 x rho / (1 - rho); x = the 4 flows of P / 4 B each over b, P / b = 70.55 / b (b in GB/s,
    # P_LLAMA70B below), so 141.1 rho / (b (1 - rho))
    tex = " ".join(form.terms)
    assert r"\frac{141.1 \rho_{\mathrm{WAN}}}{b_{\mathrm{WAN}} \left(1 - \rho_{\mathrm{WAN}}\right)}" in tex and "70.55" in tex
    assert not any("2 - 2" in t for t in form.terms)


def _check_form(sol, q, rng, points=25):
    printer = Printer(sol.symbols, "wan_bw")
    form = printer.form(q)
    if form.constant:
        return
    scale, _ = U.best_unit([q.value], q.dim)
    syms = sol.symbols.info
    for _ in range(points):
        base, declared = {}, {}
        for name, info in syms.items():
            p = info.param
            lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default, p.default)
            v = rng.uniform(lo, min(hi, 0.9) if name == "wan_load" else hi)
            base[info.symbol] = v
            declared[info.symbol] = v / p.unit_scale
        exact = float(q.expr.xreplace(base))
        shown = float(form.expr.xreplace(declared)) * scale
        assert shown == pytest.approx(exact, rel=5e-3), (q, form.terms)


def test_every_printed_form_is_the_exact_form(sol):
    rng = random.Random(14)
    for r in sol.schemes.values():
        for q in [r.payload, r.wan, r.step_time, *r.components.values(), *(p.time for p in r.phases)]:
            _check_form(sol, q, rng)
    for b in sol.breakevens:
        for root in b.result.roots:
            _check_form(sol, Quantity(root.expr, root.value, b.dim), rng)


def test_break_even_root_is_one_readable_fraction(sol):
    b = sol.breakevens[0]
    (root,) = b.result.roots
    form = Printer(sol.symbols, "wan_bw").form(Quantity(root.expr, root.value, b.dim))
    # one fraction: narrow, \frac{N}{D}; wider (the burst's waits put rho^2 in N), (N) / (D) in pieces
    assert (len(form.terms) == 1 and form.terms[0].startswith(r"\frac{")) or (form.terms[0].startswith(r"\bigl(") and any(r"\big/" in t for t in form.terms))
    n, d = sp.fraction(form.expr)
    assert len(sp.Mul.make_args(d)) == 2  # (1 - rho)(1 - k eta): the factors, not their expansion


# ---- the regime split of a max / min (paper_cases.py) ---------------------------------

# The flagship's adamw t_2 (all-reduce of each shard across dcs, 2 steps) is
# 2 max(s / r_port, 4 s / b) + ... with the shard s = c / (L N_dc) = c / 8 per worker:
# each worker's flow is bound by its 25 GB/s port (r_port, qsfp's `port.rate`), and the
# L = 4 flows of one dc share the WAN of bandwidth b. Llama-3-70B has
# P = 80 (2 8192^2 + 2 8192 8 8192 / 64 + 3 8192 28672) + 2 128256 8192 = 70552387584
# values of 2 B, so c = 2P and s = P / 4 B: max(P / 1e11, P / b) s with b in B/s, printed
# max(0.7055, 70.55 / b) with b in GB/s. They cross at P / 1e11 = P / b: b = 1e11 B/s =
# 100 GB/s (P cancels: 4 flows of a 25 GB/s port), below it the WAN term is the larger.
P_LLAMA70B = 80 * (2 * 8192**2 + 2 * 8192 * 8 * 8192 // 64 + 3 * 8192 * 28672) + 2 * 128256 * 8192
CROSSING_GBPS = 4 * 25.0  # the WAN's four flows of one dc each at a 25 GB/s port
NARROW = ROOT / "specs" / "llama70b_wan.ct"


def test_adamw_t2_crossing_derived_by_hand(sol):
    assert P_LLAMA70B == 70552387584 and 2 * P_LLAMA70B == pytest.approx(141.1e9, rel=1e-3)  # the payload c
    t2 = sol.schemes["adamw"].phases[1].time
    (rg,) = Printer(sol.symbols, "wan_bw").form(t2).regimes
    assert rg.cross == pytest.approx(CROSSING_GBPS, rel=1e-12)
    assert rg.head == r"\max\left(0.7055, \frac{70.55}{b_{\mathrm{WAN}}}\right)"
    assert rg.args[rg.low] == r"\frac{70.55}{b_{\mathrm{WAN}}}" and rg.args[1 - rg.low] == "0.7055"
    assert (rg.lo, rg.hi) == pytest.approx((0.1, 1000.0))  # the declared range, in GB/s


@pytest.mark.parametrize("columns", [1, 2])
def test_cases_row_is_printed_after_the_quantity(sol, columns):
    tex = paper_latex(sol, columns=columns)
    t2 = tex[tex.index(r"\label{eq:ctdsl:adamw:t2}") :].split(r"\label{", 2)[1]  # up to the next numbered row
    cases = (
        r"\begin{cases} \frac{70.55}{b_{\mathrm{WAN}}} & b_{\mathrm{WAN}} < \qty{100}{\giga\byte\per\second}"
        r" \\ 0.7055 & b_{\mathrm{WAN}} \geq \qty{100}{\giga\byte\per\second} \end{cases} \nonumber"
    )
    assert r"\max\left(0.7055, \frac{70.55}{b_{\mathrm{WAN}}}\right)" in t2 and cases in t2
    plain = paper_latex(sol, units="plain")
    assert r"b_{\mathrm{WAN}} < 100\,\mathrm{GB/s}" in plain
    assert r"\max\left(42.12, \frac{1.427}{\eta}\right) = \num{42.12}" in tex  # over eta, not the swept param: kept
    assert "cases" not in tex[tex.index(r"\label{eq:ctdsl:demo:transform}") :].split(r"\label{", 2)[1]


def _narrow(tmp_path) -> Path:
    """The flagship with wan_bw swept over 0.1 .. 50 GB/s only: below the 100 GB/s crossing throughout."""
    text = NARROW.read_text().replace("in 0.1 GB/s .. 1000 GB/s log 41", "in 0.1 GB/s .. 50 GB/s log 41")
    assert "in 0.1 GB/s .. 50 GB/s" in text
    (tmp_path / "narrow.ct").write_text(text)
    return tmp_path / "narrow.ct"


def test_max_that_does_not_cross_in_range_holds_throughout(tmp_path):
    sol = ctdsl.load(str(_narrow(tmp_path))).solve()
    (rg,) = Printer(sol.symbols, "wan_bw").form(sol.schemes["adamw"].phases[1].time).regimes
    assert rg.cross is None and rg.args[rg.low] == r"\frac{70.55}{b_{\mathrm{WAN}}}"  # 70.55/b > 0.7055 for b < 100
    tex = paper_latex(sol)
    t2 = tex[tex.index(r"\label{eq:ctdsl:adamw:t2}") :].split(r"\label{", 2)[1]
    form_row, *notes = t2.split("\n")[:-1]
    assert r"\max" not in form_row  # a max that never binds over the range is dropped from the form ...
    note = " ".join(notes)
    assert r"\text{with } \max\left(" in note and r"= \frac{70.55}{b_{\mathrm{WAN}}}" in note  # ... with a note that says why
    assert r"\text{ for } \qty{0.1}{\giga\byte\per\second} \leq b_{\mathrm{WAN}}" in note and r"\leq \qty{50}{\giga\byte\per\second}" in note
    assert r"\begin{cases}" not in tex


@needs_tex
def test_narrow_range_compiles_in_two_columns(tmp_path):
    out = tmp_path / "narrow.tex"
    r = CliRunner().invoke(app, ["export", "latex", str(_narrow(tmp_path)), "--standalone", "--columns", "2", "-o", str(out)])
    assert r.exit_code == 0, r.output
    clean(compile_tex(tmp_path, "narrow.tex"))


def _split(e, x, lo, hi):
    """regime() with each argument's text its sympy string, in sympy's order of the arguments."""
    return regime(e, "m", tuple(str(a) for a in e.args), x, lo, hi)


def test_regime_exact_and_numeric_paths():
    x = sp.Symbol("x", positive=True)
    # min(x, 2): x is the smaller below 2 (degree-1 numerator x - 2: exact)
    rg = _split(sp.Min(x, 2), x, 0.0, 10.0)
    assert rg.cross == 2.0 and rg.args[rg.low] == "x"
    # max(2, 1/x) on [1, 10]: 1/x <= 1 < 2 throughout, no root of 2x - 1 in range
    rg = _split(sp.Max(2, 1 / x), x, 1.0, 10.0)
    assert rg.cross is None and rg.args[rg.low] == "2"
    # max(log x, 1): not a polynomial; the scan brackets e and bisection finds it
    rg = _split(sp.Max(sp.log(x), 1), x, 1.0, 100.0)
    assert rg.cross == pytest.approx(math.e, rel=1e-12) and rg.args[rg.low] == "1"  # log x < 1 below e
    # max(x^2, 3x - 2) on [0, 3]: crossings at 1 and 2 (x^2 - 3x + 2 = (x-1)(x-2)): kept as it is
    assert _split(sp.Max(x**2, 3 * x - 2), x, 0.0, 3.0) is None
    # max(x - 4, 1/(x - 5)) on [0, 10]: a pole at 5 inside the range, so no exact claim; the scan
    # sees three sign changes (x^2 - 9x + 19 = 0 at (9 -+ sqrt 5) / 2 = 3.38, 5.62, and the pole): kept
    assert _split(sp.Max(x - 4, 1 / (x - 5)), x, 0.0, 10.0) is None
    # another param in an argument, or three arguments: kept
    y = sp.Symbol("y", positive=True)
    assert _split(sp.Max(x, y), x, 0.0, 3.0) is None
    assert _split(sp.Max(x, 1, 2 * x - 3), x, 0.0, 3.0) is None


def test_hostile_max_falls_back_bounded(sol):
    x = sol.symbols.info["wan_bw"].symbol
    big = sp.Add(*[x**i / sp.factorial(i) for i in range(300)])  # far over MAX_SPLIT_OPS: no solving, no scan
    assert sp.count_ops(big - 1 / x) > MAX_SPLIT_OPS
    assert _split(sp.Max(big, 1 / x, evaluate=False), x, 0.1, 1000.0) is None
    wavy = sp.sin(50 * x)  # small but crosses 0 many times: the scan sees more than one change
    assert _split(sp.Max(wavy, 0), x, 0.1, 1000.0) is None
    t2 = sol.schemes["adamw"].phases[1].time
    wide = sp.Add(*[(x / 10**9) ** i / (i + 1) for i in range(25)])  # over MAX_SPLIT_OPS, small enough for the printer
    assert sp.count_ops(wide - 1 / x) > MAX_SPLIT_OPS
    q = Quantity(t2.expr + sp.Max(wide, 1e9 / x, evaluate=False), t2.value, t2.dim)
    form = Printer(sol.symbols, "wan_bw").form(q)
    assert len(form.regimes) == 1  # the adamw max still split, the large one kept as it is
    assert sum(t.count(r"\max") for t in form.terms) >= 2


def test_max_argument_wider_than_a_line_is_broken_at_its_operators(sol):
    """A term of a max's argument wider than the line (a burst's wait over b, tests/data/tpxpp_step.ct)
    is broken as `(N) / (D)` like any other term (it ran 47-54 pt past a two-column article's column)."""
    info = sol.symbols.info
    b, r = info["wan_bw"].symbol, info["wan_load"].symbol
    t2 = sol.schemes["adamw"].phases[1].time
    wide = 3e-8 * r * (1e7 * r / (1 - r) + 6e7) / b
    q = Quantity(sp.Max(wide + 0.01, 2 / b + 0.03 * r / (b * (1 - r))), t2.value, t2.dim)
    narrow = Printer(sol.symbols, None, room=10.5).form(q)
    assert any(r"\big/" in t for t in narrow.terms) and max(narrow.widths) < 14
    assert not any(t.lstrip().startswith(",") for t in narrow.terms)
    whole = Printer(sol.symbols, None, room=1e9).form(q)  # room for it: the fraction kept whole
    assert not any(r"\big/" in t for t in whole.terms) and max(whole.widths) > 17
