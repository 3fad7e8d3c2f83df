"""How results show themselves in a notebook and as text: the renderers the
result tree looks up (`ctdsl.results.display`), registered on import.

Spec text (names, labels) reaches HTML, Markdown and LaTeX through
`ctdsl.report.encode`, one boundary per sink.

The LaTeX a notebook gets (`_repr_latex_`, Jupyter's text/latex) is typeset by
MathJax, which reads math and nothing else: no sectioning, no tabular, no
preamble. So each view is a sequence of `$$...$$` blocks (`$...$` for a
quantity), headings and table cells as \\text, tables as `array`, and every
unit upright after a thin space (`12.5\\,\\mathrm{GB/s}`), as siunitx sets it.
The blocks are those of `ctdsl export latex` (`report.paper.Paper`, the one
builder of a paper's equations and numbers table), written by the MathJax
writer (`report.document_mathjax`) with plain units and no labels.
"""

from __future__ import annotations

from ctdsl import units as U
from dataclasses import replace

from ctdsl.report.encode import html_text, mathjax_text, md_text, tex_text
from ctdsl.report.jsonout import solution_json
from ctdsl.report.blocks import Prose, Section
from ctdsl.report.document_html import grid_html
from ctdsl.report.document_mathjax import to_mathjax
from ctdsl.report.document_md import grid_md
from ctdsl.report.paper import Paper
from ctdsl.report.paper_units import PLAIN, symbol_tex
from ctdsl.report.simulation_tables import header, step_table  # the simulation's own table, as the terminal shows it
from ctdsl.report.tables import all_tables, render_markdown, render_plain
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


def _paper(sol=None, symbols=None) -> Paper:
    """The paper's builder for a notebook: plain units (MathJax has no siunitx), a page's width."""
    return Paper(sol, units=PLAIN, symbols=symbols)


def scheme_math(r) -> str:
    return to_mathjax(_paper(symbols=r.symbols).scheme(r))


def breakeven_math(b) -> str:
    return to_mathjax(_paper(symbols=b.symbols).breakeven(b))


def solution_math(sol) -> str:
    """A Solution for a notebook: its equations, break-evens and numbers as MathJax display blocks."""
    symbols = sol.symbols
    paper = _paper(sol)
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
    doc = []
    for r in sol.schemes.values():
        prose, *eqs = paper.scheme(r)
        doc.append(Section(f"{r.name}: {r.label}", [Prose(prose.runs), *eqs]))  # the heading names the scheme
    if sol.breakevens:
        doc.append(Section("Break-even", [x for b in sol.breakevens for x in paper.breakeven(b)]))
    doc.append(Section("Numbers at the defaults", [paper.table()]))
    blocks.append(to_mathjax(doc))
    return "\n\n".join(blocks) + "\n"


def solution_html(sol) -> str:
    """The solve tables, each under a heading of its title."""
    tables = "".join(f"<h4>{html_text(t.title)}</h4>" + grid_html(replace(t, title=None)) for t in all_tables(sol))
    return f"<div><h3>{html_text(sol.spec.root)}</h3>{tables}</div>"


def scheme_html(r) -> str:
    rows = [
        ("payload", str(r.payload)),
        ("wire per worker", str(r.wire)),
        ("WAN (busiest link)", str(r.wan)),
        ("dense / payload", f"{r.ratio:.2f}x"),
        *[(t.label, f"{t.value} ({100 * t.share:.1f}%)") for t in r.terms],
        ("step", str(r.step_time)),
        ("binding", r.binding.label),
        ("time to target", str(r.time_to_target) if r.time_to_target else "n/a"),
        ("energy to target", str(r.energy_to_target) if r.energy_to_target else "n/a"),
        ("bytes to target (busiest worker)", str(r.bytes_to_target) if r.bytes_to_target else "n/a"),
        *[(f"bytes to target on {k} links", str(q)) for k, q in r.class_bytes_to_target.items()],
    ]
    body = "".join(f"<tr><th>{html_text(k)}</th><td>{html_text(v)}</td></tr>" for k, v in rows)
    return f"<div><h4>{html_text(r.name)}: {html_text(r.label)}</h4><table>{body}</table></div>"


def breakeven_html(b) -> str:
    return f"<p><b>{html_text(b.x)}</b> vs <b>{html_text(b.y)}</b> over <i>{html_text(b.over)}</i>: {html_text(b.describe())}</p>"


def simulation_html(res) -> str:
    return f"<div><p>{html_text(header(res))}</p>{grid_html(replace(step_table(res), title=None))}</div>"


def simulation_markdown(res) -> str:
    return md_text(header(res)) + "\n\n" + grid_md(replace(step_table(res), title=None)) + "\n"


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
