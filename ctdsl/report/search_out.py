"""A design search's result as tables, Markdown and JSON (`ctdsl search`).

Reads `ctdsl.results.search.SearchResult` only. Every value is shown with its
unit; JSON numbers are in base units (s, J, USD, gCO2e, W, and each param's base
unit), as in the solve JSON.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctdsl import units as U
from ctdsl.report.encode import json_number as _num
from ctdsl.report.blocks import Grid
from ctdsl.report.document_md import tables_md
from ctdsl.results.search import QUANTITY_DIMS, SearchResult

CAP_WORDS = {"deadline": "time to target", "power_cap": "mean power", "budget": "cost to target", "co2e_cap": "CO2e to target"}


def _q(v: float, d: U.Dim) -> str:
    return U.format_quantity(v, d)


def _params_text(res, point) -> str:
    dims = dict(res.param_dims)
    return ", ".join(f"{n} = {_q(v, dims[n])}" for n, v in point.params) or "-"


def _quantity_cells(point) -> list[str]:
    q = dict(point.quantities)
    return [_q(q[n], QUANTITY_DIMS[n]) if n in q else "-" for n in ("time", "energy", "cost", "co2e", "power")]


def search_tables(res: SearchResult) -> list[Grid]:
    opt = res.optimum
    goal = Grid(f"Search {res.name}: {res.sense} {res.objective}", ["", "value"])
    goal.rows += [
        ["optimum", opt.choice + (f" at {_params_text(res, opt)}" if opt.params else "")],
        [res.sense.rstrip("e") + "ed", _q(opt.objective, res.objective_dim)],
        ["binding", ", ".join(f"{b} ({CAP_WORDS.get(b, b)})" for b in res.binding) or "none"],
        ["at a range end", ", ".join(f"{p} ({end})" for p, end in res.at_ends) or "none"],
    ]
    for key, what, bound in res.caps:
        goal.rows.append([key, f"{CAP_WORDS[key]} <= {_q(bound, QUANTITY_DIMS[what])}"])
    if res.memory:
        goal.rows.append(["memory", "each dc's GPUs fit the model"])
    goal.notes.append(f"grid: {', '.join(f'{p} {n} points' for p, n in res.grid) or 'no params'}; {res.evaluations:,} evaluations")
    choices = Grid("Choices, by lower bound of the objective", ["scheme", "sites", "bound", "status", "best at", "objective", "time", "energy", "cost", "co2e", "mean power"])
    for c in res.choices:
        best = c.best
        bound = _q(c.bound if res.sense == "minimise" else -c.bound, res.objective_dim) if abs(c.bound) != float("inf") else "-"
        cells = [_params_text(res, best), _q(best.objective, res.objective_dim), *_quantity_cells(best)] if best else ["-"] * 7
        choices.rows.append([c.choice, c.sites or "declared", bound, c.status, *cells])
    _drop_empty(choices, 6)
    choices.notes.append("bound: of the objective over the params' box, by interval arithmetic (a maximum's is an upper bound); pruned: the bound cannot beat the optimum")
    tables = [goal, choices]
    if res.pareto_axes:
        front = Grid(f"Pareto front of {', '.join(res.pareto_axes)} (feasible grid points)", ["scheme", "params", *res.pareto_axes])
        for p in res.pareto:
            front.rows.append([p.choice, _params_text(res, p), *[_q(p.quantity(a), QUANTITY_DIMS[a]) for a in res.pareto_axes]])
        tables.append(front)
    return tables


def _drop_empty(t: Grid, first: int) -> None:
    """Drop the columns from `first` on that are "-" in every row (CO2e where nothing gives carbon)."""
    keep = [j for j in range(len(t.header)) if j < first or any(row[j] != "-" for row in t.rows)]
    t.header = [t.header[j] for j in keep]
    t.rows = [[row[j] for j in keep] for row in t.rows]


def search_markdown(results: Sequence[SearchResult]) -> str:
    return tables_md([t for res in results for t in search_tables(res)])


def _point_json(p) -> dict:
    return {
        "choice": p.choice,
        "params": {n: _num(v) for n, v in p.params},
        "quantities": {n: _num(v) for n, v in p.quantities},
        "objective": _num(p.objective),
    }


def search_json(res: SearchResult) -> dict:
    return {
        "name": res.name,
        "sense": res.sense,
        "objective": res.objective,
        "objective_unit": U.format_quantity(1.0, res.objective_dim).split(" ", 1)[-1],
        "over": list(res.over),
        "constraints": [{"field": k, "quantity": w, "bound": _num(b)} for k, w, b in res.caps] + ([{"field": "memory", "quantity": "memory", "bound": None}] if res.memory else []),
        "optimum": _point_json(res.optimum),
        "binding": list(res.binding),
        "at_range_ends": {p: e for p, e in res.at_ends},
        "choices": [
            {"choice": c.choice, "sites": c.sites, "bound": _num(c.bound if res.sense == "minimise" else -c.bound), "status": c.status, "best": _point_json(c.best) if c.best else None}
            for c in res.choices
        ],
        "pareto": {"axes": list(res.pareto_axes), "points": [_point_json(p) for p in res.pareto]},
        "grid": {p: n for p, n in res.grid},
        "evaluations": res.evaluations,
        "units": "base: s, J, USD, gCO2e, W; each param in its base unit",
    }


__all__ = ["search_json", "search_markdown", "search_tables"]
