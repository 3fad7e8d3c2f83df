"""How results show themselves in a notebook and as text: the renderers the
result tree looks up (`ctdsl.results.display`), registered on import.

Spec text (names, labels) reaches HTML, Markdown and LaTeX through
`ctdsl.report.encode`, one boundary per sink.

The LaTeX a notebook gets (`_repr_latex_`, Jupyter's text/latex) is typeset by
MathJax, which reads math and nothing else: no sectioning, no tabular, no
preamble. So each view is a sequence of `$$...$$` blocks (`$...$` for a
quantity), headings and table cells as \\text, tables as `array`, and every
unit upright after a thin space (`12.5\\,\\mathrm{GB/s}`), as siunitx sets it.
The document form of the same equations is `ctdsl export latex` (report/latex.py).
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.report.encode import html_text, mathjax_text, md_cell, md_text, tex_text, tex_text_to_mathjax
from ctdsl.report.html import scheme_html, solution_html, table_html
from ctdsl.report.jsonout import solution_json
from ctdsl.report.latex import breakeven_align, scheme_align, symbol_tex
from ctdsl.report.simulation_tables import header, step_table  # the simulation's own table, as the terminal shows it
from ctdsl.report.tables import render_markdown, render_plain
from ctdsl.results import display


def _split(q) -> tuple[str, str]:
    """`12.5 GB/s` -> ('12.5', 'GB/s'); a value that cannot be shown -> ('n/a', '')."""
    text = U.format_quantity(q.value, q.dim)
    number, _, unit = text.partition(" ")
    return number, unit


def quantity_html(q) -> str:
    number, unit = _split(q)
    return f'<span class="ctdsl-quantity">{html_text(number)}&nbsp;{html_text(unit)}</span>' if unit else html_text(number)


def _math_quantity(number: str, unit: str) -> str:
    """'12.5', 'GB/s' -> 12.5\\,\\mathrm{GB/s}: the unit upright after a thin space; 1.2e+03 as 1.2 \\cdot 10^{03}."""
    if "e" in number and number.replace("e", "").replace("+", "").replace("-", "").replace(".", "").isdigit():
        mant, exp = number.split("e")
        number = f"{mant} \\cdot 10^{{{int(exp)}}}"
    elif not number.replace(".", "").replace("-", "").isdigit():
        return mathjax_text(number + (" " + unit if unit else ""))
    return number + (r"\,\mathrm{" + tex_text(unit).replace(r"\_", "_") + "}" if unit else "")


def quantity_latex(q) -> str:
    return f"${_math_quantity(*_split(q))}$"


def _text_quantity(text: str) -> str:
    number, _, unit = str(text).partition(" ")
    return _math_quantity(number, unit)


def _block(tex: str) -> str:
    """A LaTeX display (align*) as MathJax's display block, its \\text made MathJax-safe."""
    return "$$" + tex_text_to_mathjax(tex.replace("align*", "aligned")) + "$$"


def scheme_math(r) -> str:
    return _block(scheme_align(r, r.symbols))


def breakeven_math(b) -> str:
    return _block(breakeven_align(b, b.symbols))


def solution_math(sol) -> str:
    """A Solution for a notebook: its equations, break-evens and numbers as MathJax display blocks."""
    symbols = sol.symbols
    blocks = []
    units, defaults = [], []
    for info in symbols.info.values():
        p = info.param
        unit = p.unit or ("" if p.dim.dimensionless else p.dim.symbol())
        if unit:
            units.append(f"{symbol_tex(info)} \\text{{ in }} \\mathrm{{{tex_text(unit)}}}")
        defaults.append(f"{symbol_tex(info)} = {_text_quantity(U.format_quantity(p.default, p.dim))}")
    rows = []
    if units:
        rows.append(r"&\text{Symbols in their declared units: } " + ",\\ ".join(units))
    if defaults:
        rows.append(r"&\text{Defaults: } " + ",\\ ".join(defaults))
    if rows:
        blocks.append("$$\\begin{aligned}" + " \\\\ ".join(rows) + "\\end{aligned}$$")
    for r in sol.schemes.values():
        blocks.append("$$" + mathjax_text(f"{r.name}: {r.label}", "textbf") + "$$")
        blocks.append(_block(scheme_align(r, symbols)))
    if sol.breakevens:
        blocks.append("$$" + mathjax_text("Break-even", "textbf") + "$$")
        for b in sol.breakevens:
            blocks.append("$$" + mathjax_text(f"{b.x} vs {b.y}", "textbf") + "$$")
            blocks.append(_block(breakeven_align(b, symbols)))
    blocks.append("$$" + mathjax_text("Numbers at the defaults", "textbf") + "$$")
    blocks.append(numbers_array(sol))
    return "\n\n".join(blocks) + "\n"


def numbers_array(sol) -> str:
    """The numbers at the defaults as a MathJax array: names as text, values with upright units."""
    head = ["scheme", "payload", "WAN bytes", "step", "binding", "time to target", "energy"]
    lines = [" & ".join(mathjax_text(h) for h in head) + r" \\ \hline"]
    for r in sol.schemes.values():
        cells = [mathjax_text(r.name), _text_quantity(r.payload), _text_quantity(r.wan), _text_quantity(r.step_time),
                 mathjax_text(r.binding.label), _text_quantity(r.time_to_target) if r.time_to_target else mathjax_text("n/a"),
                 _text_quantity(r.energy_to_target) if r.energy_to_target else mathjax_text("n/a")]  # fmt: skip
        lines.append(" & ".join(cells) + r" \\")
    return "$$\\begin{array}{lllllll}" + "\n".join(lines) + "\n\\end{array}$$"


def breakeven_html(b) -> str:
    return f"<p><b>{html_text(b.x)}</b> vs <b>{html_text(b.y)}</b> over <i>{html_text(b.over)}</i>: {html_text(b.describe())}</p>"


def _sim_rows(res) -> tuple[list[str], list[list[str]]]:
    t = step_table(res)
    return t.header, t.rows


def simulation_html(res) -> str:
    head, rows = _sim_rows(res)
    return f"<div><p>{html_text(header(res))}</p>{table_html(head, rows)}</div>"


def simulation_markdown(res) -> str:
    head, rows = _sim_rows(res)
    lines = [md_text(header(res)), "", "| " + " | ".join(md_cell(h) for h in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


display.register("quantity", "html", quantity_html)
display.register("quantity", "latex", quantity_latex)
display.register("scheme", "latex", scheme_math)
display.register("scheme", "html", scheme_html)
display.register("breakeven", "latex", breakeven_math)
display.register("breakeven", "html", breakeven_html)
display.register("solution", "html", solution_html)
display.register("solution", "latex", solution_math)
display.register("solution", "markdown", render_markdown)
display.register("solution", "json", solution_json)
display.register("solution", "text", render_plain)
display.register("simulation", "html", simulation_html)
display.register("simulation", "markdown", simulation_markdown)
