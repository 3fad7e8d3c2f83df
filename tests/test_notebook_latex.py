"""The LaTeX a notebook shows (`_repr_latex_`) is what Jupyter typesets with MathJax: math blocks, upright units.

Jupyter renders text/latex with MathJax, which reads `$...$` and `$$...$$` and
nothing else: a sectioning command, a tabular or booktabs rule would show as raw
text. So a Solution's, a scheme's and a break-even's LaTeX is a sequence of
display blocks, with nothing outside them; tables are `array`s; a unit is set
upright after a thin space (`12.5\\,\\mathrm{GB/s}`), never in math italic; and a
name with an underscore is `\\_` in math mode, outside `\\text{...}` (which MathJax
reads verbatim unless its textmacros extension is loaded). A kernel run by
nbclient displays the same text as the objects give in-process.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ctdsl
from backstop import HANG
from ctdsl import units as U

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
DOCUMENT = (r"\documentclass", r"\begin{document}", r"\section", r"\subsection", r"\paragraph", r"\begin{tabular}",
            r"\toprule", r"\midrule", r"\bottomrule", r"\usepackage", r"align*")  # fmt: skip


@pytest.fixture(scope="module")
def sol():
    return ctdsl.load(str(FLAGSHIP)).solve()


def blocks(tex: str) -> list[str]:
    """The $$...$$ blocks of `tex`; asserts there is nothing but blank space between them."""
    parts = tex.split("$$")
    assert len(parts) % 2 == 1, "unbalanced $$"
    assert all(not p.strip() for p in parts[0::2]), [p for p in parts[0::2] if p.strip()][:1]
    return parts[1::2]


def balanced(math: str) -> bool:
    depth = 0
    for m in re.finditer(r"\\.|[{}]", math):
        depth += {"{": 1, "}": -1}.get(m.group(), 0)
        if depth < 0:
            return False
    return depth == 0


def check_mathjax(tex: str) -> list[str]:
    out = blocks(tex)
    assert out
    for b in out:
        assert not any(d in b for d in DOCUMENT), b[:200]
        assert balanced(b), b[:200]
        assert b.count(r"\begin{") == b.count(r"\end{")
        for m in re.finditer(r"\\text(?:bf)?\{((?:[^{}\\]|\\.)*)\}", b):
            assert "\\" not in m.group(1), f"an escape inside \\text, shown raw by MathJax: {m.group(0)}"
    return out


def test_a_solution_is_display_blocks_with_no_document_commands(sol):
    tex = sol._repr_latex_()
    out = check_mathjax(tex)
    assert len(out) >= 2 * len(sol.schemes) + 2
    assert any(r"\begin{array}" in b for b in out)  # the numbers table
    assert r"\text{band}\_\text{switch}" in tex  # a name with an underscore: \_ in math mode


def test_units_are_upright_after_a_thin_space(sol):
    """Each default and each number of the table: its unit in \\mathrm after \\, (the defaults' line was $12.5 GB/s$)."""
    tex = sol._repr_latex_()
    for info in sol.symbols.info.values():
        number, _, unit = U.format_quantity(info.param.default, info.param.dim).partition(" ")
        if unit:
            assert f"{number}\\,\\mathrm{{{unit}}}" in tex
    for r in sol.schemes.values():
        number, _, unit = str(r.step_time).partition(" ")
        assert f"{number}\\,\\mathrm{{{unit}}}" in tex
    # no unit stands bare after a number (math italic): "12.5 GB/s", "23.22 s" as text in math
    assert not re.search(r"\d (?:GB/s|GFLOP/s|GB|GJ|ms|s|h)\b", "".join(blocks(tex)))


def test_scheme_break_even_and_quantity_reprs(sol):
    check_mathjax(sol.schemes["band_switch"]._repr_latex_())
    be = check_mathjax(sol.breakevens[0]._repr_latex_())
    assert be[0] == r"\textbf{Break-even}"  # the blocks of export latex (report.paper), in MathJax
    assert r"\text{band}\_\text{switch}\text{ is faster below it, }\text{adamw}\text{ above}" in be[1]
    q = sol.schemes["band_gpu"].step_time._repr_latex_()
    assert q == r"$14.66\,\mathrm{s}$"


def test_a_hostile_label_stays_math(tmp_path):
    """Spec text with every TeX special character reaches the repr as math commands between \\text runs."""
    text = FLAGSHIP.read_text(encoding="utf-8").replace('"AdamW, dense all-reduce"', '"a$b_c {d} \\\\ 100% ~e^2 <f> #&"', 1)
    assert text != FLAGSHIP.read_text(encoding="utf-8")
    path = tmp_path / "hostile.ct"
    path.write_text(text, encoding="utf-8")
    tex = ctdsl.load(str(path)).solve()._repr_latex_()
    check_mathjax(tex)
    assert r"\textbf{adamw: a}\$\textbf{b}\_\textbf{c }\{\textbf{d}\}" in tex


def test_a_kernel_shows_the_same_latex(sol, tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    nbclient = pytest.importorskip("nbclient", reason="the test extra installs nbclient")
    pytest.importorskip("ipykernel", reason="the test extra installs ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"import ctdsl\nresult = ctdsl.load({str(FLAGSHIP)!r}).solve()\nresult"),
        nbformat.v4.new_code_cell('result.schemes["band_switch"]'),
        nbformat.v4.new_code_cell("result.breakevens[0]"),
    ]
    nbclient.NotebookClient(nb, timeout=HANG, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = [next(o["data"]["text/latex"] for o in c.outputs if "text/latex" in o.get("data", {})) for c in nb.cells]
    assert shown == [sol._repr_latex_(), sol.schemes["band_switch"]._repr_latex_(), sol.breakevens[0]._repr_latex_()]
    for tex in shown:
        check_mathjax(tex)
