"""What the explorer's page computes, gathered from a solution's result tree.

`page_model(solution)` returns the data the page's script reads (params,
schemes, break-evens, targets, memory, scenarios and observations, units,
colours, the checker's bounds) and the JavaScript it calls, printed from the
result tree's exact expressions by `jsprint` and from the checker's bounds by
`checks`:

- `evalAll(a, out)`: every number the tables and bars show, per scheme: step
  time, time, energy, cost and CO2e to target and their parts, energy per step
  by part, utilisation and MFU, bytes (per worker and per link class), the job's
  size, each step-time component, each module stage's time and each break
  point; and each model's memory per GPU by part, against its capacity;
- one function per quantity a curve, a break-even or a target reads, each
  giving that quantity of every scheme (`QFUN`: `step`, `time`, `energy`, and
  where some scheme has them `cost`, `co2e`, `utilisation`, `mfu`); `evalTimes`,
  time to target, is also the winner map's;
- `CHECKS`: one function per bound the checker tested on an expression of
  params (`checks.py`), so that the page refuses what `ctdsl solve --set` refuses;
- on a spec that serves, `evalServing(a, out)`: every term, capacity and the
  sustainable rate of every serving path (`Solution.serving`), and `SLOS`, each
  SLO's targets and percentile printed as the bounds are (`serving_model`); with
  the data of each asked break-even of two hand-offs (its two paths, param, the
  term compared and the range solve searches), which view_serving_be.js solves.

A new view adds the outputs it shows to `evalAll` here (a `_Outputs.add` per
quantity, its index in the view's data) and reads them from the frame of
answers the page computes once per redraw (`core.js`).

Every text from the spec (names, labels, units) is HTML-encoded here
(`ctdsl.report.encode.html_text`), a display name is MathML (`mathml`), and
the script inserts only these strings.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import ComponentId, Side
from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.report.encode import html_text
from ctdsl.report.explore.checks import checks_model, js_check
from ctdsl.report.explore.jsprint import js_functions
from ctdsl.report.explore.mathml import display_mathml
from ctdsl.report.explore.palette import palette

SCAN_STEPS = 256  # intervals of the break-evens' scans in the page (the solver's scan uses as many)


def _range(p, whole: bool = False) -> tuple[float, float, bool]:
    """A param's slider: (lo, hi, log). Without a declared range: a factor of 1e6 either side (as the
    solver's break-even), from 1 up for a count."""
    if p.lo is not None and p.hi is not None:
        log = p.spacing == "log" and p.lo > 0
        return float(p.lo), float(p.hi), bool(log)
    d = float(p.default)
    if d > 0:
        return (max(1.0, d * 1e-6) if whole else d * 1e-6), d * 1e6, True
    return (d - 1.0, d + 1.0, False) if d == 0 else (d * 1e6, d * 1e-6, False)


def _param(p, whole: bool = False) -> dict:
    lo, hi, log = _range(p, whole)
    unit = p.unit if p.unit else (None if p.dim.dimensionless else p.dim.symbol())
    scale = float(p.unit_scale) if p.unit else 1.0
    return {
        "name": html_text(p.name),
        "display": display_mathml(p.display) if p.display else None,
        "unit": html_text(unit) if unit else "",
        "scale": scale,
        "lo": lo,
        "hi": hi,
        "log": log,
        "declared": [float(p.lo), float(p.hi)] if p.lo is not None and p.hi is not None else None,  # outside: CT311
        "start": float(p.default),
        "dim": list(p.dim.exps),
        "whole": whole,  # a count is set to it: the page takes whole values only
    }


class _Outputs:
    """The expressions of one function and where each lands in its output array."""

    def __init__(self) -> None:
        self.exprs: list = []

    def add(self, q) -> int:
        self.exprs.append(None if q is None else (q if not hasattr(q, "expr") else q.expr))
        return len(self.exprs) - 1


# the quantities a curve, a break-even or a target reads: (key, the scheme's field, its dimension,
# what it is called, the name of its function in the page)
QUANTITIES = (
    ("step", "step_time", U.TIME, "step time", "evalStep"),
    ("time", "time_to_target", U.TIME, "time to target", "evalTimes"),
    ("energy", "energy_to_target", U.ENERGY, "energy to target", "evalEnergy"),
    ("cost", "cost_to_target", U.MONEY, "cost to target", "evalCost"),
    ("co2e", "co2e_to_target", U.CARBON, "CO2e to target", "evalCo2e"),
    ("utilisation", "utilisation", U.ONE, "compute utilisation", "evalUtilisation"),
    ("mfu", "mfu", U.ONE, "MFU", "evalMfu"),
)
ALWAYS = ("step", "time", "energy")  # the curves' first three choices, on every page
TARGET_KEYS = {"step_time": "step", "time": "time", "energy": "energy", "cost": "cost", "co2e": "co2e", "utilisation": "utilisation"}
OBSERVED_KEYS = {"step_time": "step", "time_to_target": "time", "mfu": "mfu", "utilisation": "utilisation"}


def _finite(q) -> bool:
    return q is not None and q.value == q.value and abs(q.value) != float("inf")


def _parts(parts, full: _Outputs) -> list:
    return [[html_text(k), full.add(q)] for k, q in parts.items()]


def _scheme(r, full: _Outputs, components: list[ComponentId]) -> dict:
    terms = r.terms
    kinds: dict[str, list] = {}
    for link in r.links:
        kinds.setdefault(link.kind, []).append(link.nbytes.expr)
    job = r.job
    entry = {
        "name": html_text(r.name),
        "label": html_text(r.label or r.name),
        "overlap": bool(r.overlap),
        "has_steps": r.time_to_target is not None,
        "components": [html_text(t.label) for t in terms],  # what the page shows
        "keys": [html_text(t.id.id) for t in terms],  # what identifies each (ctdsl.language.components)
        "ci": [components.index(t.id) for t in terms],  # each component's place among all schemes' (its colour)
        "compute_side": [t.side is Side.COMPUTE for t in terms],
        "i": {
            "step": full.add(r.step_time),
            "time": full.add(r.time_to_target),
            "energy": full.add(r.energy_to_target),
            "eps": full.add(r.energy_per_step),
            "payload": full.add(r.payload),
            "wan": full.add(r.wan),
            "comp": [full.add(t.value) for t in terms],
            "cost": full.add(r.cost_to_target),
            "co2e": full.add(r.co2e_to_target),
            "cost_parts": _parts(r.cost_parts, full) if r.cost_to_target is not None else [],
            "co2e_parts": _parts(r.co2e_parts, full) if r.co2e_to_target is not None else [],
            "energy_parts": _parts(r.energy_parts, full),
            "utilisation": full.add(r.utilisation),
            "mfu": full.add(r.mfu),
            "dense": full.add(r.dense),
            "wire": full.add(r.wire),
            "kinds": [[html_text(k), full.add(sp.Add(*v))] for k, v in sorted(kinds.items())],
            "job": [full.add(job.gpus), full.add(job.nodes), full.add(job.sites)] if job is not None else None,
        },
        "module": None,
        "sites": html_text(r.sites) if r.sites else None,
    }
    m = r.module
    if m is not None:
        entry["module"] = {
            "pluggable": html_text(m.pluggable),
            "stages": [html_text(s.name) for s in m.stages],
            "si": [full.add(s.time) for s in m.stages],
            "breaks": [
                {"param": html_text(b.param), "then": html_text(b.then), "bi": full.add(b.expr), "dim": list(b.dim.exps)}
                for b in m.breaks
            ],
        }
    return entry


def _memory(m, full: _Outputs) -> dict:
    return {
        "model": html_text(m.model),
        "dc": html_text(m.dc),
        "parts": _parts(m.parts, full),
        "total": full.add(m.total),
        "capacity": full.add(m.capacity) if m.capacity is not None else None,
        "note": html_text(m.note),
    }


def _target(t, names: list[str], params: list[str]) -> dict:
    return {
        "q": TARGET_KEYS.get(t.quantity),
        "value": t.target,
        "dim": list(t.target_dim.exps),
        "text": html_text(t.shown_target),
        "scheme": names.index(t.scheme),
        "over": params.index(t.over),
        "lo": t.lo,
        "hi": t.hi,
        "reason": html_text(t.reason) if t.reason and not t.roots and t.lo is None else None,  # not asked: why
    }


def _scenarios(spec, params: list[str]) -> list:
    out = []
    for sc in spec.scenarios.values():
        out.append({"name": html_text(sc.name), "values": [[params.index(k), float(v)] for k, v in sc.values.items() if k in params],
                    "texts": [[html_text(k), html_text(t)] for k, t in sc.texts.items()]})
    return out


def _observations(spec, names: list[str], scenarios: list[str]) -> list:
    out = []
    for o in spec.observations:
        key = OBSERVED_KEYS.get(str(o.observable))
        out.append({
            "q": key,
            "observable": html_text(str(o.observable)),
            "scheme": names.index(o.scheme),
            "scenario": scenarios.index(o.scenario) if o.scenario is not None else None,
            "value": o.value,
            "text": html_text(o.text),
            "source": html_text(o.source),
        })
    return out


def _breakeven(k: int, b, names: list[str], params: list[str]) -> dict:
    return {
        "k": k,  # its place among solve's (and its JSON's) break-evens
        "on": b.on,
        "better": html_text(b.better),
        "x": names.index(b.x),
        "y": names.index(b.y),
        "over": params.index(b.over),
        "missing": html_text(b.missing) if b.missing else None,
    }


def _units() -> dict:
    """The preferred display units per dimension (ctdsl.units), for the page's formatter."""
    table = {}
    for exps, (base, scales) in U._PREFERRED.items():
        table[",".join(map(str, exps))] = {"base": base, "scales": [[s, label] for s, label in scales]}
    return table


def _symbols(solution) -> dict:
    """The base unit's symbol of each dimension a param, a bound or a break point has (for dimensions without a preferred unit)."""
    dims = [p.dim for p in solution.spec.params.values()] + [b.dim for b in solution.spec.bounds]
    for r in solution.schemes.values():
        if r.module is not None:
            dims += [b.dim for b in r.module.breaks]
    return {",".join(map(str, d.exps)): html_text(d.symbol()) for d in dims}


def _quantities(solution) -> list[tuple]:
    """The quantities the page computes per scheme, each with its function."""
    rs = list(solution.schemes.values())
    return [q for q in QUANTITIES if q[0] in ALWAYS or any(_finite(getattr(r, q[1])) for r in rs)]


# serving (docs/serving.md): the terms the page shows of each path, and the rule of
# ctdsl.symbolic.serving (`settles`, `_QUEUED`): a path is over capacity unless its rate is below the
# sustainable one and its queues settle (each utilisation in [0, 1), TPOT > 0, the mean decode batch in
# [0, the largest]); then its waits and what follows from them are infinite
SERVING_TERMS = ("prefill", "transform", "handoff", "handoff_exposed", "prefill_utilisation", "link_utilisation", "prefill_wait",
                 "link_wait", "decode_batch", "decode_batch_max", "tpot", "ttft", "ttft_p", "e2e", "e2e_p", "throughput", "energy_per_token")
SERVING_QUEUED = ("link_wait", "prefill_wait", "decode_batch", "tpot", "ttft", "ttft_p", "e2e", "e2e_p", "energy_per_token")
SLO_TARGETS = (("ttft", "ttft_p"), ("tpot", "tpot"), ("e2e", "e2e_p"))  # an SLO's target and the term it holds
# a break-even of two hand-offs (`breakeven h1 vs h2 over p on M`, ctdsl.symbolic.serving_breakeven, which the
# report may not import: tests/test_explore.py holds these to its MEASURE_TERM and SETTLE_STEPS): the term
# each M compares, what it is called, and the intervals of the scan that finds where both paths' queues settle
HANDOFF_MEASURES = {"ttft": ("ttft", "TTFT"), "ttft_p": ("ttft_p", "TTFT at the percentile"), "e2e": ("e2e", "end to end"),
                    "e2e_p": ("e2e_p", "end to end at the percentile"), "energy": ("energy_per_token", "energy per output token")}
SETTLE_STEPS = 128


def _path_text(r) -> str:
    return f"{r.workload}: {r.entry} -> {r.handoff_label} -> {r.decode}" if r.handoff else f"{r.workload}: {r.entry} (colocated)"


def _handoff_breakevens(solution, rows, pnames: list[str]) -> list[dict]:
    """Each asked break-even of two hand-offs, in the order of solve's (and its JSON's) break-evens: the
    places of the workload's two paths among the serving paths, the param, the term compared."""
    place = {(r.workload, r.handoff): k for k, r in enumerate(rows)}
    out = []
    for k, b in enumerate(solution.breakevens):
        if b.workload is None:
            continue
        term, words = HANDOFF_MEASURES[b.on]
        p = solution.spec.params[b.over]
        # the range and scale solve searches (ctdsl.symbolic.solve.handoff_breakeven)
        lo, hi = (float(p.lo), float(p.hi)) if p.lo is not None else (float(p.default) * 1e-6, float(p.default) * 1e6)
        out.append({
            "k": k,  # its place among solve's break-evens
            "x": place[(b.workload, b.x)],
            "y": place[(b.workload, b.y)],
            "hx": html_text(b.x),
            "hy": html_text(b.y),
            "workload": html_text(b.workload),
            "over": pnames.index(b.over),
            "on": b.on,
            "term": term,
            "words": words,
            "better": html_text(b.better),
            "lo": lo,
            "hi": hi,
            "log": p.spacing == "log" or p.lo is None,
        })
    return out


def serving_model(solution, pnames: list[str], out: _Outputs) -> tuple[dict | None, str]:
    """The page's data of each serving path (its outputs' places in `evalServing`) and `const SLOS = [...]`:
    per SLO, its targets and percentile as functions of the params' values (`checks.js_check`: numbers
    and params only), or null where it gives none."""
    rows = getattr(solution, "serving", ())
    if not rows:
        return None, "const SLOS = [];"
    index = {n: k for k, n in enumerate(pnames)}
    by_symbol = {i.symbol: k for k, i in enumerate(solution.symbols.info.values())}  # a param's symbol: its place
    sv = solution.spec.serving
    slos = list(sv.slos)
    paths = []
    for r in rows:
        rate = r.rate.expr
        w = sv.workloads[r.workload]
        paths.append({
            "name": html_text(r.name),
            "label": html_text(_path_text(r)),
            "handoff": html_text(r.handoff_label) if r.handoff else None,
            "rate": out.add(r.rate),
            # the param the rate is, when it is one: the curves are drawn against it
            "rate_param": by_symbol.get(rate),
            "caps": [[k, out.add(q)] for k, q in r.capacities.items()],
            "sustainable": out.add(r.sustainable),
            "terms": {k: out.add(r.term(k).quantity) for k in SERVING_TERMS if r.term(k) is not None},
            "slo": slos.index(w.slo) if w.slo in sv.slos else None,
            # solve's goodput at the start values: the page's own needs the rate as a param to bisect over
            "goodput0": [r.goodput.value, html_text(r.goodput_binding)] if r.goodput is not None and math.isfinite(r.goodput.value) else None,
        })
    fns = []
    for name in slos:
        slo = sv.slos[name]
        parts = [getattr(slo, k) for k, _ in SLO_TARGETS] + [slo.percentile]
        fns.append("[" + ", ".join("null" if e is None else js_check(e, index) for e in parts) + "]")
    data = {"paths": paths, "slos": [html_text(n) for n in slos], "targets": [[k, t] for k, t in SLO_TARGETS], "queued": list(SERVING_QUEUED),
            "rate_dim": list(U.FREQUENCY.exps), "breakevens": _handoff_breakevens(solution, rows, pnames), "settle_steps": SETTLE_STEPS}
    return data, "const SLOS = [\n" + ",\n".join(fns) + "\n];"


def page_model(solution, fit: tuple[str, float, str] | None = None) -> tuple[dict, str, str]:
    """(the data the page reads, the JavaScript functions of the answers, the functions of the bounds)."""
    infos = list(solution.symbols.info.values())
    args = tuple(i.symbol for i in infos)
    pnames = [i.param.name for i in infos]
    full = _Outputs()
    components = list(dict.fromkeys(t.id for r in solution.schemes.values() for t in r.terms))
    schemes = [_scheme(r, full, components) for r in solution.schemes.values()]
    names = list(solution.schemes)
    quantities = _quantities(solution)
    checks, check_code = checks_model(solution.spec, pnames)
    spec = solution.spec
    sv_out = _Outputs()
    serving, slo_code = serving_model(solution, pnames, sv_out)
    data = {
        "title": html_text(str(spec.root)),
        "params": [_param(i.param, i.param.name in spec.whole) for i in infos],
        "schemes": schemes,
        "components": [html_text(c.label) for c in components],
        "palette": palette(max(len(schemes), len(components), len(serving["paths"]) if serving else 0)),
        "baseline": names.index(solution.baseline) if solution.baseline in names else None,
        # of schemes (a hand-off's, with a workload, is the serving view's: `on energy` names a hand-off's energy per token)
        "breakevens": [_breakeven(k, b, names, pnames) for k, b in enumerate(solution.breakevens) if b.workload is None and b.on in {q[0] for q in quantities}],
        "quantities": [[key, list(dim.exps), words] for key, _, dim, words, _ in quantities],
        "targets": [_target(t, names, pnames) for t in solution.targets if TARGET_KEYS.get(t.quantity) in {q[0] for q in quantities}],
        "memory": [_memory(m, full) for m in solution.memory],
        "scenarios": _scenarios(spec, pnames),
        "observations": _observations(spec, names, list(spec.scenarios)),
        "fit": {"param": pnames.index(fit[0]), "value": fit[1], "scenario": html_text(fit[2])} if fit and fit[0] in pnames else None,
        "checks": checks,
        "units": _units(),
        "symbols": _symbols(solution),
        "dims": {"time": list(U.TIME.exps), "energy": list(U.ENERGY.exps), "data": list(U.DATA.exps), "money": list(U.MONEY.exps),
                 "carbon": list(U.CARBON.exps), "one": list(U.ONE.exps)},
        "n": {"full": len(full.exprs), "q": len(schemes)},
        "ceil_slack": CEIL_SLACK,
        "scan_steps": SCAN_STEPS,
        "serving": serving,
    }
    data["n"]["serving"] = len(sv_out.exprs)
    groups = {"evalAll": full.exprs}
    if serving is not None:
        groups["evalServing"] = sv_out.exprs
    for key, field, _, _, fn in quantities:
        groups[fn] = [getattr(r, field) and getattr(r, field).expr for r in solution.schemes.values()]
    code = js_functions(args, groups)
    code += "\nconst QFUN = new Map([" + ", ".join(f'["{key}", {fn}]' for key, _, _, _, fn in quantities) + "]);"
    code += "\n" + slo_code
    if serving is None:
        code += "\nfunction evalServing() {}"
    return data, code, check_code
