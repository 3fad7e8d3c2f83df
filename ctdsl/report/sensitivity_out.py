"""Sensitivity as tables (terminal, Markdown, HTML), JSON and a LaTeX table; it reads only results.

The data is `ctdsl.results.sensitivity.Sensitivity`, built by
`ctdsl.symbolic.sensitivity`. One table per quantity: each param, dy/dx with
its unit (base units: dim(y) / dim(x)) and the elasticity (x / y) dy/dx, largest
|elasticity| first; notes say how a break-even's partials were found, where a
max/min is at a kink, and why a quantity has none. LaTeX gets one table of the
elasticities: a row per quantity, a column per param.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ctdsl import units as U
from ctdsl.report.blocks import Grid, Image, Name, Para, Qty, Section, TeX, Text
from ctdsl.report.document_tex import grid_tex
from ctdsl.report.encode import json_number as _num
from ctdsl.report.document_html import grid_html
from ctdsl.report.document_md import tables_md
from ctdsl.report.encode import html_text
from ctdsl.report.paper_units import symbol_tex
from ctdsl.report.paper import label_key
from ctdsl.report.plots import png_bytes
from ctdsl.report.plots.tornado import tornado_figure
from ctdsl.results.params import Symbols
from ctdsl.results.sensitivity import Sensitivity, Tornado

HEADER = ["param", "dy/dx", "elasticity"]  # dy/dx per declared unit of the param (JSON: base units)


def elasticity_text(v: float) -> str:
    """An elasticity to four significant figures (n/a where it is not defined)."""
    return U.format_quantity(v, U.ONE)


def _title(q) -> str:
    shown = f" = {q.value}" if q.value is not None else ""
    return f"Sensitivity of {q.what}{shown} ({q.name})"


def quantity_table(q) -> Grid:
    t = Grid(_title(q), list(HEADER))
    for p in q.partials:
        t.rows.append([p.param, p.per_unit(), elasticity_text(p.elasticity.value)])
    if not q.partials:
        t.rows.append(["-", "no derivative", "-"])
    if q.note:
        t.notes.append(q.note)
    t.notes += [f"kink: {k}" for k in q.kinks]
    return t


def sensitivity_tables(sens: Sensitivity) -> list[Grid]:
    return [quantity_table(q) for q in sens.quantities]


def sensitivity_markdown(sens: Sensitivity) -> str:
    """The tables as Markdown (for `ctdsl solve --format markdown --sensitivity`)."""
    return tables_md(sensitivity_tables(sens))


def sensitivity_json(sens: Sensitivity) -> dict:
    """The `sensitivity` key of the solve JSON (docs/solve-json.md): base units, as every number there."""
    out = []
    for q in sens.quantities:
        out.append(
            {
                "name": q.name,
                "kind": q.kind,
                "what": q.what,
                "value": _num(q.value.value) if q.value is not None else None,
                "unit": (q.value.dim.symbol() if q.value is not None else None),
                "note": q.note,
                "kinks": list(q.kinks),
                "partials": [
                    {
                        "param": p.param,
                        "derivative": _num(p.derivative.value),
                        "derivative_unit": p.derivative.dim.symbol(),
                        "elasticity": _num(p.elasticity.value),
                    }
                    for p in q.partials
                ],
            }
        )
    return {"params": list(sens.params), "kink_tolerance": sens.kink_tolerance, "quantities": out}


def sensitivity_latex(sens: Sensitivity, symbols: Symbols, units: str, prefix: str = "ctdsl", columns: int = 1) -> str:
    """A table of elasticities d ln y / d ln x: a row per quantity, a column per param (`export latex --sensitivity`),
    each column aligned on the decimal point (siunitx), through the one LaTeX writer."""
    params = list(sens.params)
    header = [Text("quantity")] + [TeX(symbol_tex(symbols.info[p])) for p in params]
    rows = []
    for q in sens.quantities:
        by = {p.param: p.elasticity.value for p in q.partials}
        rows.append([Name(q.name)] + [Qty(float(f"{by[p]:.4g}") if p in by and by[p] is not None and math.isfinite(by[p]) else None) for p in params])
    caption = (
        Text("Elasticities "), TeX(r"\partial \ln y / \partial \ln x"), Text(" of each quantity "), TeX("y"),
        Text(" with respect to each param "), TeX("x"),
        Text(", exact from the symbolic forms at the params' values (the active branch of each max and min); "
             "a break-even's by the implicit function theorem. -- : not defined (never in range, or the param solved for)."),
    )  # fmt: skip
    grid = Grid(None, header, rows, caption=caption, label=f"tab:{label_key(prefix)}:sensitivity", wide=True)
    return grid_tex(grid, units, columns)


def tornado_json(t: Tornado) -> dict:
    """The `tornado` key of the solve JSON (`--tornado FILE QUANTITY`): each bar's ends, base units."""
    return {
        "name": t.name,
        "what": t.what,
        "value": _num(t.value.value),
        "unit": t.value.dim.symbol(),
        "skipped": list(t.skipped),
        "bars": [
            {"param": b.param, "low": _num(b.lo), "high": _num(b.hi), "at_low": _num(b.at_lo), "at_high": _num(b.at_hi)}
            for b in t.bars
        ],
    }


def sensitivity_section(sens: Sensitivity, tornadoes: Sequence[Tornado] = ()) -> Section:
    """The report's "Sensitivity" section (`ctdsl report --sensitivity`): a tornado chart of each of
    `tornadoes` (ctdsl.results.sensitivity.Tornado), then one table per quantity."""
    sec = Section("Sensitivity")
    sec.blocks.append(
        Para(
            "For each quantity y and param x: dy/dx (the change in y per declared unit of x) and the elasticity "
            "d ln y / d ln x = (x / y) dy/dx, the % change in y for a 1 % change in x, exact from the symbolic forms at the "
            "params' values above (the branch of each max and min that binds there); a break-even's by the implicit "
            "function theorem, d b*/dx = -(dF/dx) / (dF/db) with F = T_x - T_y. Largest |elasticity| first."
        )
    )
    for t in tornadoes:
        sec.blocks.append(Para(f"{t.name}: the change in {t.what} with each ranged param at the low and the high end of its range."))
        sec.blocks.append(Image(png_bytes(tornado_figure(t), dpi=110), f"tornado chart of {t.what}"))
    for t in sensitivity_tables(sens):
        sec.blocks.append(t)
    return sec


def sensitivity_html(sens: Sensitivity) -> str:
    """The explorer's static section (`ctdsl explore --sensitivity`): the elasticities, a row per quantity, a column per param."""
    params = list(sens.params)
    rows = []
    for q in sens.quantities:
        by = {p.param: p.elasticity.value for p in q.partials}
        rows.append([q.name] + [elasticity_text(by[p]) if p in by else "-" for p in params])
    notes = [f"{q.name}: {q.note}" for q in sens.quantities if q.note and not q.partials]
    notes += [f"{q.name}: kink: {k}" for q in sens.quantities for k in q.kinks]
    table = grid_html(Grid(None, ["quantity"] + params, rows, notes=notes))
    return (
        '<section id="sensitivity" aria-labelledby="h-sens">\n<h2 id="h-sens">Sensitivity</h2>\n'
        '<p class="note">Elasticities d ln y / d ln x = (x / y) dy/dx, exact from the symbolic forms at the values the page '
        "opened with (the defaults, or ctdsl explore --set): they are not recomputed as the sliders move. "
        f"{html_text('ctdsl solve --sensitivity')} gives the derivatives with their units.</p>\n{table}\n</section>"
    )
