"""How results show themselves in a notebook and as text: the renderers the
result tree looks up (`ctdsl.results.display`), registered on import."""

from __future__ import annotations

from ctdsl.report.html import scheme_html, solution_html
from ctdsl.report.jsonout import solution_json
from ctdsl.report.latex import breakeven_latex, scheme_latex, solution_latex
from ctdsl.report.tables import render_plain
from ctdsl.results import display

display.register("scheme", "latex", scheme_latex)
display.register("scheme", "html", scheme_html)
display.register("breakeven", "latex", breakeven_latex)
display.register("solution", "html", solution_html)
display.register("solution", "latex", lambda sol: solution_latex(sol, standalone=False))
display.register("solution", "json", solution_json)
display.register("solution", "text", render_plain)
