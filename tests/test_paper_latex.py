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
"""

from __future__ import annotations

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
from ctdsl.report.paper_forms import Printer
from ctdsl.results.quantity import Quantity

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
PDFLATEX = shutil.which("pdflatex")


def _has_siunitx() -> bool:
    kpse = shutil.which("kpsewhich")
    return kpse is not None and subprocess.run([kpse, "siunitx.sty"], capture_output=True).returncode == 0


needs_tex = pytest.mark.skipif(
    PDFLATEX is None or not _has_siunitx(), reason="pdflatex with siunitx is not installed (.ci/run installs texlive-science)"
)


@pytest.fixture(scope="module")
def sol():
    return ctdsl.load(FLAGSHIP).solve()


def compile_tex(folder: Path, name: str) -> str:
    """Run pdflatex twice (for the references); return the log."""
    for _ in range(2):
        proc = subprocess.run(
            [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=180,
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
    assert "B_{\\mathrm{WAN}}" not in tex and "V_{\\mathrm{WAN}}" in tex  # bytes are not bandwidth with a capital
    first = tex.splitlines()[:3]
    assert first[0].startswith("% ctdsl") and "amsmath" in first[1] and "booktabs" in first[1]


def test_queueing_term_is_cancelled_by_hand(sol):
    t2 = sol.schemes["adamw"].phases[1].time
    form = Printer(sol.symbols, "wan_bw").form(t2)
    assert form.unit == "s"
    assert r"\frac{4 \rho_{\mathrm{WAN}}}{b_{\mathrm{WAN}} \left(1 - \rho_{\mathrm{WAN}}\right)}" in " ".join(form.terms)
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
    assert len(form.terms) == 1 and form.terms[0].startswith(r"\frac{")
    n, d = sp.fraction(form.expr)
    assert len(sp.Mul.make_args(d)) == 2  # (1 - rho)(1 - k eta): the factors, not their expansion
