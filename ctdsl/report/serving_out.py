"""Serving's outputs: solve's tables, its JSON block and its CSV (docs/serving.md, docs/solve-json.md).

Each reads only the result tree (`Solution.serving`, ctdsl.results.serving): one row per
path a workload's requests take. Rates are printed in req/s; a wait or a latency at a rate
the path cannot sustain is printed as such, never as a negative number.
"""

from __future__ import annotations

import csv
import math
from io import StringIO

import sympy as sp

from ctdsl import units as U
from ctdsl.report.encode import csv_cell, json_number
from ctdsl.report.blocks import Grid
from ctdsl.results.serving import PathResult

CAPACITIES = ("prefill", "decode", "link", "colocated")


def _rate(x: float | None) -> str:
    if x is None or x != x:
        return "n/a"
    return "inf" if math.isinf(x) else f"{x:.4g} req/s"


def _cell(r, key: str) -> str:
    t = r.term(key)
    if t is None:
        return "-"
    v = t.quantity.value
    if math.isinf(v):
        return "over capacity"
    if t.quantity.dim == U.ONE:
        return f"{v:.4g}"
    return str(t.quantity)


def _joules(r) -> str:
    v = r.value("energy_per_token")
    return "-" if v is None or v != v else ("over capacity" if math.isinf(v) else f"{v:.4g}")


def _path(r) -> str:
    return f"{r.workload}: {r.entry} -> {r.handoff_label} -> {r.decode}" if r.handoff else f"{r.workload}: {r.entry} (colocated)"


def serving_tables(sol) -> list[Grid]:
    rows = getattr(sol, "serving", ())
    if not rows:
        return []
    steps = Grid("Serving: steps and hand-off", ["path", "prefill", "transform", "hand-off bytes", "hand-off", "in TTFT", "decode batch", "TPOT"])
    lat = Grid("Serving: latency and energy at the workload's rate", ["path", "rate", "prefill rho", "link rho", "TTFT", "TTFT p", "e2e", "e2e p", "J / token"])
    cap = Grid("Serving: capacity and goodput", ["path", *CAPACITIES, "sustainable", "binding", "goodput", "goodput set by"])
    for r in rows:
        name = _path(r)
        steps.rows.append([name, *(_cell(r, k) for k in ("prefill", "transform", "handoff_bytes", "handoff", "handoff_exposed", "decode_batch", "tpot"))])
        lat.rows.append([name, _rate(r.rate.value), *(_cell(r, k) for k in ("prefill_utilisation", "link_utilisation", "ttft", "ttft_p", "e2e", "e2e_p")), _joules(r)])
        caps = [_rate(r.capacities[k].value) if k in r.capacities else "-" for k in CAPACITIES]
        cap.rows.append([name, *caps, _rate(r.sustainable.value), r.binding, _rate(r.goodput.value) if r.goodput else "-", r.goodput_binding or "-"])
        cap.marked.add((len(cap.rows) - 1, 1 + CAPACITIES.index(r.binding)))
    steps.notes = [
        "prefill: one prompt of the mean length; transform: on the prefill GPUs before the transfer (a module streams with it: 0 here)",
        "hand-off: the link busy (latency + bytes / bandwidth, or max(module, wire)); in TTFT: all of it, or layer by layer what outlasts the prefill",
        "decode batch: Little's law at the workload's rate; TPOT: the decode step at that batch (docs/serving.md)",
    ]
    lat.notes = [
        "M/G/1 waits (Pollaczek-Khinchine) at each prefill instance and the hand-off link; p: the SLO's percentile (0.99 without one), each wait's exponential tail",
        "over capacity: the rate is at or above what the path sustains, so its queues do not settle",
        "J / token: energy per output token, the steps' FLOPs and memory bytes at the device's energies, the hand-off's bytes at the link's and the GPUs' static power",
    ]
    cap.notes = ["requests/s each pool and link can serve (the sister simulator's analytic bounds); goodput: the highest rate at which the SLO holds"]
    return [steps, lat, cap]


def _q(q) -> dict:
    """A quantity as solve's JSON gives one: base-unit value, unit, exact form as sympy text and LaTeX."""
    return {"value": json_number(q.value), "unit": q.dim.symbol(), "expr": sp.sstr(q.expr, order="lex"), "latex": sp.latex(q.expr)}


def serving_json(sol) -> list[dict]:
    out = []
    for r in getattr(sol, "serving", ()):
        terms = {}
        for k, t in r.terms.items():
            terms[k] = {**_q(t.quantity), "label": t.label, "closed_form": t.closed_form, "formula": t.formula, "source": t.source}
        out.append(
            {
                "path": r.name,
                "workload": r.workload,
                "entry": r.entry,
                "handoff": r.handoff,
                "handoff_label": r.handoff_label,
                "decode": r.decode,
                "rate": _q(r.rate),
                "terms": terms,
                "capacities": {k: _q(q) for k, q in r.capacities.items()},
                "sustainable": _q(r.sustainable),
                "binding": r.binding,
                "over_capacity": r.over_capacity,
                "goodput": {"value": json_number(r.goodput.value), "unit": "1/s", "set_by": r.goodput_binding} if r.goodput else None,
            }
        )
    return out


CSV_TERMS = ("prefill", "transform", "handoff_bytes", "handoff", "handoff_exposed", "decode_batch", "tpot", "ttft", "ttft_p", "e2e", "e2e_p", "throughput", "energy_per_token")


def serving_csv(sol) -> str:
    buf = StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["path", "workload", "entry", "handoff", "decode", *(f"{k}_{_unit(k)}" for k in CSV_TERMS), *(f"{k}_capacity_rps" for k in CAPACITIES), "sustainable_rps", "binding", "goodput_rps", "goodput_set_by"])
    for r in sol.serving:
        terms = [r.value(k) for k in CSV_TERMS]
        caps = [r.capacities[k].value if k in r.capacities else None for k in CAPACITIES]
        row = [r.name, r.workload, r.entry, r.handoff, r.decode, *terms, *caps, r.sustainable.value, r.binding, r.goodput.value if r.goodput else None, r.goodput_binding]
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else csv_cell(v)) for v in row])
    return buf.getvalue()


def _unit(key: str) -> str:
    return {"handoff_bytes": "B", "decode_batch": "seqs", "throughput": "rps", "energy_per_token": "J"}.get(key, "s")


SIM_LABELS = {"prefill_wait": "prefill queue wait", "ttft": "TTFT (mean)", "tpot": "TPOT (mean)", "decode_batch": "mean decode batch"}


def _show(x: float, key: str) -> str:
    return f"{x:.4g}" if key == "decode_batch" else U.format_quantity(x, U.TIME)


def serving_sim_table(rows: list[tuple[PathResult, list]], requests: int, seeds: int) -> Grid:
    """Each path's simulated means (95% interval over the seeds) beside its closed forms."""
    t = Grid("Serving: simulation against the closed forms", ["path", "quantity", "closed form", "simulated", "95% interval", "difference", "agrees"])
    for r, checks in rows:
        for c in checks:
            lo, hi = c.simulated.interval
            how = "yes (interval)" if c.within_ci else ("yes (within 5%)" if c.agrees else "no")
            t.rows.append([_path(r), SIM_LABELS[c.quantity], _show(c.closed_form, c.quantity), _show(c.simulated.mean, c.quantity), f"{_show(lo, c.quantity)} .. {_show(hi, c.quantity)}", f"{100 * c.relative:+.2f}%", how])
            if not c.agrees:
                t.marked.add((len(t.rows) - 1, 6))
    t.notes = [
        f"{seeds} seeded runs of {requests} requests each (the first tenth discarded); paths over capacity are not simulated",
        "agrees: the closed form inside the simulation's 95% t interval, or, an approximation (docs/serving.md), within 5% of its mean",
    ]
    return t


def serving_sim_json(rows: list[tuple[PathResult, list]], requests: int, seeds: int, seed: int) -> dict:
    out = []
    for r, checks in rows:
        out.append({"path": r.name, "checks": [{"quantity": c.quantity, "closed_form": json_number(c.closed_form), "mean": json_number(c.simulated.mean), "half_width": json_number(c.simulated.half_width), "relative": json_number(c.relative), "within_ci": c.within_ci, "agrees": c.agrees} for c in checks]})
    return {"requests": requests, "seeds": seeds, "seed": seed, "paths": out}


__all__ = ["serving_csv", "serving_json", "serving_sim_json", "serving_sim_table", "serving_tables"]
