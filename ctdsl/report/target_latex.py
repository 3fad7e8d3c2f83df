"""`export latex`: the targets as a booktabs table, a row per target (value and scheme).

Each row: the quantity, the target, the scheme, the param's value where the
quantity reaches the target (in the best unit, through `paper_units.qty_tex`)
and whether that value is an exact root or a numeric one; "never in range"
rows say so. Every text from the spec passes `encode.tex_text`.
"""

from __future__ import annotations

import math

from ctdsl import units as U
from ctdsl.report.blocks import Grid, Name, Qty, TeX, Text
from ctdsl.report.document_tex import grid_tex
from ctdsl.report.paper_units import qty_tex
from ctdsl.results.targets import WORDS


def targets_tex(sol, units: str, prefix: str) -> str | None:
    """The table float, or None when the spec asks for no targets. A column every row shares (the
    quantity, the param) goes into the caption, so that the table fits a column; the values share
    one unit (in the column's head, aligned on the decimal point) where every row's has one dimension."""
    targets = list(getattr(sol, "targets", ()))
    if not targets:
        return None
    quantities = {WORDS.get(r.quantity, r.quantity) for r in targets}
    overs = {r.over for r in targets}
    one_q, one_over = len(quantities) == 1, len(overs) == 1
    dims = {r.dim for r in targets}
    values = [root.value for r in targets for root in r.roots if math.isfinite(root.value)]
    scale, unit = U.best_unit(values, next(iter(dims))) if len(dims) == 1 else (1.0, "")
    rows = []
    for r in targets:
        head = ([] if one_q else [Text(WORDS.get(r.quantity, r.quantity))]) + [Text(r.shown_target), Name(r.scheme)]
        head += [] if one_over else [Name(r.over)]
        if not r.roots:
            rows.append(head + [Qty(None) if len(dims) == 1 else Text("--"), Text("never in range")])
        for root in r.roots:
            if len(dims) == 1:
                cell = Qty(root.value / scale, unit)
            else:
                s, u = U.best_unit([root.value], r.dim)
                cell = TeX(qty_tex(root.value / s, u, units))
            rows.append(head + [cell, Text("numeric" if root.numeric else "exact")])
    header = ([] if one_q else ["quantity"]) + ["target", "scheme"] + ([] if one_over else ["over"]) + ["value", "root"]
    col_units = ["" for _ in header]
    if len(dims) == 1:
        col_units[-2] = unit
    what = next(iter(quantities)) if one_q else "each quantity"
    caption = (Text(f"Where {what} reaches its target"),) + ((Text(" over "), Name(next(iter(overs)))) if one_over else ())
    caption += (Text(", the other params at their defaults."),)
    grid = Grid(None, [Text(h) for h in header], rows, units=col_units if len(dims) == 1 else [], caption=caption, label=f"tab:{prefix}:targets")
    return grid_tex(grid, units)


__all__ = ["targets_tex"]
