"""Uncertainty as tables, JSON and CSV; it reads only `ctdsl.results.uncertainty`.

Tables show each figure with its unit (`units.format_quantity`): per scheme the
mean, sd and 5 / 50 / 95 % quantiles of time, energy and cost to target and the
probability of being first; per break-even the same of its lowest root in range
and the probability that there is none; the Sobol indices, when computed. JSON
keeps base units (s, J, USD, the param's), with the dimension beside each
summary. Scheme and param names come from the spec: CSV cells go through
`encode.csv_cell`, terminal text through rich's escaping in `print_rich_tables`.
"""

from __future__ import annotations

import csv
import io

from ctdsl import units as U
from ctdsl.report.encode import csv_cell
from ctdsl.report.encode import json_number as _num
from ctdsl.report.tables import Table

STATS = ("mean", "sd", "q05", "q50", "q95")
HEADER = ["mean", "sd", "5 %", "50 %", "95 %"]


def _cells(s) -> list[str]:
    if s is None or s.count == 0:
        return ["n/a"] * len(STATS)
    return [U.format_quantity(getattr(s, k), s.dim) for k in STATS]


def _pct(p: float) -> str:
    return f"{100 * p:.2f} %"


def uncertainty_tables(u) -> list[Table]:
    drawn = ", ".join(u.params) or "none"
    out = []
    for what, attr in (("time", "time"), ("energy", "energy"), ("cost", "cost")):
        rows = [[s.name] + _cells(getattr(s, attr)) + ([_pct(s.first)] if attr == "time" else []) for s in u.schemes if getattr(s, attr) is not None]
        if not rows:
            continue
        header = ["scheme"] + HEADER + (["first"] if attr == "time" else [])
        notes = [f"{u.samples} draws of {drawn}, seed {u.seed}"] if attr == "time" else []
        out.append(Table(f"{what.capitalize()} to target", header, rows, notes))
    if u.breakevens:
        rows = [[f"{b.x} vs {b.y} over {b.over} on {b.on}"] + _cells(b.root) + [_pct(b.never)] for b in u.breakevens]
        m = min(b.samples for b in u.breakevens)
        out.append(Table("Break-evens", ["break-even"] + HEADER + ["never in range"], rows, [f"on the first {m} draws; the lowest root in range"]))
    for scheme, idx in (u.sobol or {}).items():
        rows = [[i.param, f"{i.first:.3f} \u00b1 {i.first_conf:.3f}", f"{i.total:.3f} \u00b1 {i.total_conf:.3f}"] for i in idx]
        out.append(Table(f"Sobol indices of {scheme}'s time to target", ["param", "first order", "total"], rows, [f"{u.sobol_samples} evaluations (SALib)"]))
    return out


def _summary_json(s) -> dict | None:
    if s is None:
        return None
    return {"dim": s.dim.symbol(), "count": s.count, **{k: _num(getattr(s, k)) for k in STATS}}


def uncertainty_json(u) -> dict:
    return {
        "samples": u.samples,
        "seed": u.seed,
        "params": list(u.params),
        "schemes": {
            s.name: {"time_to_target": _summary_json(s.time), "energy_to_target": _summary_json(s.energy), "cost_to_target": _summary_json(s.cost), "first": s.first}
            for s in u.schemes
        },
        "breakevens": [
            {"x": b.x, "y": b.y, "over": b.over, "on": b.on, "root": _summary_json(b.root), "never_in_range": b.never, "samples": b.samples}
            for b in u.breakevens
        ],
        "sobol": None
        if u.sobol is None
        else {
            "evaluations": u.sobol_samples,
            "time_to_target": {
                s: {i.param: {"S1": _num(i.first), "S1_conf": _num(i.first_conf), "ST": _num(i.total), "ST_conf": _num(i.total_conf)} for i in idx}
                for s, idx in u.sobol.items()
            },
        },
    }


def uncertainty_csv(u) -> str:
    """One row per (what, name, quantity): the statistics in base units, the unit beside them."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["what", "name", "quantity", "unit", "mean", "sd", "q05", "q50", "q95", "count", "probability"])
    for s in u.schemes:
        for q, summ, p in (("time_to_target", s.time, s.first), ("energy_to_target", s.energy, None), ("cost_to_target", s.cost, None)):
            if summ is not None:
                w.writerow(["scheme", csv_cell(s.name), q, summ.dim.symbol(), *(repr(getattr(summ, k)) for k in STATS), summ.count, "" if p is None else repr(p)])
    for b in u.breakevens:
        name = csv_cell(f"{b.x} vs {b.y} over {b.over}")
        w.writerow(["breakeven", name, b.on, b.root.dim.symbol(), *(repr(getattr(b.root, k)) for k in STATS), b.root.count, repr(1 - b.never)])
    return buf.getvalue()


__all__ = ["uncertainty_csv", "uncertainty_json", "uncertainty_tables"]
