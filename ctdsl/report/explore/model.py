"""What the explorer's page computes, gathered from a solution's result tree.

`page_model(solution)` returns the data the page's script reads (params,
schemes, break-evens, units, colours, the checker's bounds) and the JavaScript
it calls, printed from the result tree's exact expressions by `jsprint` and
from the checker's bounds by `checks`:

- `evalAll(a, out)`: every number the tables and bars show, per scheme: step
  time, time and energy to target, energy per step, payload and WAN bytes, each
  step-time component, each module stage's time and each break point;
- `evalCurve(a, out)`: step time, time and energy to target per scheme (the
  curves, 400 calls per redraw);
- `evalTimes(a, out)`: time to target per scheme (the winner map and the
  break-evens' scans);
- `CHECKS`: one function per bound the checker tested on an expression of
  params (`checks.py`), so that the page refuses what `ctdsl solve --set` refuses.

A new view adds the outputs it shows to `evalAll` here (a `_Outputs.add` per
quantity, its index in the view's data) and reads them from the frame of
answers the page computes once per redraw (`core.js`).

Every text from the spec (names, labels, units) is HTML-encoded here
(`ctdsl.report.encode.html_text`), a display name is MathML (`mathml`), and
the script inserts only these strings.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.language.components import ComponentId, Side
from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.report.encode import html_text
from ctdsl.report.explore.checks import checks_model
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


def _scheme(r, full: _Outputs, curve: _Outputs, times: _Outputs, components: list[ComponentId]) -> dict:
    terms = r.terms
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
        },
        "c": [curve.add(r.step_time), curve.add(r.time_to_target), curve.add(r.energy_to_target)],
        "t": times.add(r.time_to_target),
        "module": None,
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


def _breakeven(b, names: list[str], params: list[str]) -> dict:
    return {
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


def page_model(solution) -> tuple[dict, str, str]:
    """(the data the page reads, the JavaScript functions of the answers, the functions of the bounds)."""
    infos = list(solution.symbols.info.values())
    args = tuple(i.symbol for i in infos)
    pnames = [i.param.name for i in infos]
    full, curve, times = _Outputs(), _Outputs(), _Outputs()
    components = list(dict.fromkeys(t.id for r in solution.schemes.values() for t in r.terms))
    schemes = [_scheme(r, full, curve, times, components) for r in solution.schemes.values()]
    names = list(solution.schemes)
    checks, check_code = checks_model(solution.spec, pnames)
    data = {
        "title": html_text(str(solution.spec.root)),
        "params": [_param(i.param, i.param.name in solution.spec.whole) for i in infos],
        "schemes": schemes,
        "components": [html_text(c.label) for c in components],
        "palette": palette(max(len(schemes), len(components))),
        "baseline": names.index(solution.baseline) if solution.baseline in names else None,
        "breakevens": [_breakeven(b, names, pnames) for b in solution.breakevens if b.on == "time"],  # the page solves times
        "breakevens_other": sum(1 for b in solution.breakevens if b.on != "time"),
        "checks": checks,
        "units": _units(),
        "symbols": _symbols(solution),
        "dims": {"time": list(U.TIME.exps), "energy": list(U.ENERGY.exps), "data": list(U.DATA.exps)},
        "n": {"full": len(full.exprs), "curve": len(curve.exprs), "times": len(times.exprs)},
        "ceil_slack": CEIL_SLACK,
        "scan_steps": SCAN_STEPS,
    }
    code = js_functions(args, {"evalAll": full.exprs, "evalCurve": curve.exprs, "evalTimes": times.exprs})
    return data, code, check_code
