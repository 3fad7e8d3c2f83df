"""How results show themselves in a notebook and as text: the renderers the
result tree looks up (`ctdsl.results.display`), registered on import.

Spec text (names, labels) reaches HTML, Markdown and LaTeX through
`ctdsl.report.encode`, one boundary per sink.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.report.encode import html_text, md_cell, md_text, tex_text
from ctdsl.report.html import scheme_html, solution_html, table_html
from ctdsl.report.jsonout import solution_json
from ctdsl.report.latex import breakeven_latex, scheme_latex, solution_latex
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


def quantity_latex(q) -> str:
    number, unit = _split(q)
    shown = tex_text(number) + (r"\ \mathrm{" + tex_text(unit) + "}" if unit else "")
    return f"${shown}$"


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
display.register("scheme", "latex", scheme_latex)
display.register("scheme", "html", scheme_html)
display.register("breakeven", "latex", breakeven_latex)
display.register("breakeven", "html", breakeven_html)
display.register("solution", "html", solution_html)
display.register("solution", "latex", lambda sol: solution_latex(sol, standalone=False))
display.register("solution", "markdown", render_markdown)
display.register("solution", "json", solution_json)
display.register("solution", "text", render_plain)
display.register("simulation", "html", simulation_html)
display.register("simulation", "markdown", simulation_markdown)
