"""Uncertainty as tables, JSON and CSV; it reads only `ctdsl.results.uncertainty`.

Tables show each figure with its unit (`units.format_quantity`): per scheme the
mean, sd and 5 / 50 / 95 % quantiles of time, energy and cost to target and the
probability of being first (and of being the cheapest); per break-even the same
of its lowest root in range and the probability that there is none, split in a
note by which scheme is lower throughout; the Sobol indices, when computed. JSON
keeps base units (s, J, USD, the param's), with the dimension beside each
summary. Scheme and param names come from the spec: CSV cells go through
`encode.csv_cell`, terminal text through rich's escaping in `document_rich`.
"""

from __future__ import annotations

import csv
import io

from ctdsl import units as U
from ctdsl.report.encode import csv_cell
from ctdsl.report.encode import json_number as _num
from ctdsl.report.blocks import Grid
from ctdsl.results.uncertainty import Uncertainty

STATS = ("mean", "sd", "q05", "q50", "q95")
HEADER = ["mean", "sd", "5 %", "50 %", "95 %"]


def _cells(s) -> list[str]:
    if s is None or s.count == 0:
        return ["n/a"] * len(STATS)
    return [U.format_quantity(getattr(s, k), s.dim) for k in STATS]


def _pct(p: float) -> str:
    return f"{100 * p:.2f} %"


# what the scheme lower throughout a break-even's range is, by the quantity compared
LOWER = {"time": "faster", "energy": "less energy", "cost": "cheaper", "co2e": "less CO2e"}


def _rank(s, attr: str) -> list[str]:
    """The probability column of a scheme's table: first to the target, or the cheapest."""
    if attr == "time":
        return [_pct(s.first)]
    if attr == "cost" and s.cheapest is not None:
        return [_pct(s.cheapest)]
    return []


def _index(x: float) -> str:
    """A Sobol index to 3 places; an estimate that rounds to zero shows as 0.000, not -0.000."""
    return f"{round(x, 3) + 0.0:.3f}"


def _never(b) -> str:
    """Who is lower over the whole range, in the draws where the break-even is never in range."""
    word = LOWER.get(b.on, f"lower {b.on}")
    return f"{b.x} vs {b.y} over {b.over}: never in range in {_pct(b.never)}: {b.x} {word} throughout in {_pct(b.x_throughout)}, {b.y} in {_pct(b.y_throughout)}"


def uncertainty_tables(u: Uncertainty) -> list[Grid]:
    drawn = ", ".join(u.params) or "none"
    out = []
    for what, attr in (("time", "time"), ("energy", "energy"), ("cost", "cost")):
        spreads = [s for s in u.schemes if getattr(s, attr) is not None]
        if not spreads:
            continue
        rows = [[s.name] + _cells(getattr(s, attr)) + _rank(s, attr) for s in spreads]
        header = ["scheme"] + HEADER + {"time": ["first"], "cost": ["cheapest"]}.get(attr, [])[: len(_rank(spreads[0], attr))]
        notes = [f"{u.samples} draws of {drawn}, seed {u.seed}"] if attr == "time" else []
        out.append(Grid(f"{what.capitalize()} to target", header, rows, notes=notes))
    if u.breakevens:
        rows = [[f"{b.x} vs {b.y} over {b.over} on {b.on}"] + _cells(b.root) + [_pct(b.never)] for b in u.breakevens]
        m = min(b.samples for b in u.breakevens)
        notes = [f"on the first {m} draws; the lowest root in range"] + [_never(b) for b in u.breakevens if b.never > 0]
        breaks = Grid("Break-evens", ["break-even"] + HEADER + ["never in range"], rows, notes=notes)
        out.append(breaks)
    for what, found in (("time", u.sobol), ("cost", u.sobol_cost)):
        for scheme, idx in (found or {}).items():
            out.append(Grid(f"Sobol indices of {scheme}'s {what} to target", ["param", "first order", "total"], _sobol_rows(idx), notes=[f"{u.sobol_samples} evaluations (SALib)"]))
    for b in u.sobol_breakevens:
        if b.indices is None:  # said under the break-evens' table
            breaks.notes.append(f"{b.x} vs {b.y} over {b.over}: no Sobol indices ({b.note})")
            continue
        title = f"Sobol indices of the break-even {b.x} vs {b.y} over {b.over} on {b.on}"
        out.append(Grid(title, ["param", "first order", "total"], _sobol_rows(b.indices), notes=[f"{b.evaluations} evaluations (SALib), each a root found"]))
    return out


def _sobol_rows(idx) -> list[list[str]]:
    return [[i.param, f"{_index(i.first)} \u00b1 {_index(i.first_conf)}", f"{_index(i.total)} \u00b1 {_index(i.total_conf)}"] for i in idx]


def _summary_json(s) -> dict | None:
    if s is None:
        return None
    return {"dim": s.dim.symbol(), "count": s.count, **{k: _num(getattr(s, k)) for k in STATS}}


def _sobol_json(found: dict) -> dict:
    return {
        s: {i.param: {"S1": _num(i.first), "S1_conf": _num(i.first_conf), "ST": _num(i.total), "ST_conf": _num(i.total_conf)} for i in idx}
        for s, idx in found.items()
    }


def uncertainty_json(u: Uncertainty) -> dict:
    return {
        "samples": u.samples,
        "seed": u.seed,
        "params": list(u.params),
        "schemes": {
            s.name: {
                "time_to_target": _summary_json(s.time),
                "energy_to_target": _summary_json(s.energy),
                "cost_to_target": _summary_json(s.cost),
                "first": s.first,
                "cheapest": s.cheapest,
            }
            for s in u.schemes
        },
        "breakevens": [
            {
                "x": b.x, "y": b.y, "over": b.over, "on": b.on, "root": _summary_json(b.root), "never_in_range": b.never,
                "x_lower_throughout": b.x_throughout, "y_lower_throughout": b.y_throughout, "samples": b.samples,
            }
            for b in u.breakevens
        ],
        "sobol": None
        if u.sobol is None
        else {
            "evaluations": u.sobol_samples,
            "time_to_target": _sobol_json(u.sobol),
            "cost_to_target": None if u.sobol_cost is None else _sobol_json(u.sobol_cost),
            "breakevens": [
                {
                    "x": b.x, "y": b.y, "over": b.over, "on": b.on, "evaluations": b.evaluations, "note": b.note,
                    "indices": None if b.indices is None else _sobol_json({"root": b.indices})["root"],
                }
                for b in u.sobol_breakevens
            ],
        },
    }


def uncertainty_csv(u: Uncertainty) -> str:
    """One row per (what, name, quantity): the statistics in base units, the unit beside them.

    probability: of being first (time), the cheapest (cost), or of a root in range (a break-even).
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["what", "name", "quantity", "unit", "mean", "sd", "q05", "q50", "q95", "count", "probability"])
    for s in u.schemes:
        for q, summ, p in (("time_to_target", s.time, s.first), ("energy_to_target", s.energy, None), ("cost_to_target", s.cost, s.cheapest)):
            if summ is not None:
                w.writerow(["scheme", csv_cell(s.name), q, summ.dim.symbol(), *(repr(getattr(summ, k)) for k in STATS), summ.count, "" if p is None else repr(p)])
    for b in u.breakevens:
        name = csv_cell(f"{b.x} vs {b.y} over {b.over}")
        w.writerow(["breakeven", name, b.on, b.root.dim.symbol(), *(repr(getattr(b.root, k)) for k in STATS), b.root.count, repr(1 - b.never)])
    return buf.getvalue()


__all__ = ["uncertainty_csv", "uncertainty_json", "uncertainty_tables"]
