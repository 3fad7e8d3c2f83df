"""Solve a checked spec: every scheme's costs and the requested break-evens.

`solve(spec)` returns a `Solution` (ctdsl.results): per scheme, exact
expressions in the params and their values at the params' defaults, with their
dimensions, in a frozen tree that the report layer prints (tables, JSON,
Markdown, CSV, LaTeX) and notebooks show.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.model.entities import Spec
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.solution import BreakevenResult, Solution
from ctdsl.symbolic.assemble import memory_result, model_result, scheme_result
from ctdsl.symbolic.breakeven import Unsolvable, solve_breakeven
from ctdsl.symbolic.convert import Env, Symbols
from ctdsl.symbolic.costs import CostModel, SchemeCosts
from ctdsl.symbolic.money import money
from ctdsl.symbolic.fit import fits
from ctdsl.symbolic.targets import solve_targets

__all__ = ["solve", "breakeven", "default_over", "cost_models", "Solution"]


def default_over(spec: Spec) -> str | None:
    """The param a baseline comparison sweeps: the first ranged data rate, else the first ranged param."""
    ranged = [p for p in spec.params.values() if p.lo is not None]
    for p in ranged:
        if p.dim == U.RATE:
            return p.name
    return ranged[0].name if ranged else None


def solve(spec: Spec) -> Solution:
    symbols = Symbols(spec)
    cm = CostModel(spec, spec.topology, symbols)
    env = Env(symbols.defaults())
    cms = cost_models(spec, symbols)
    costs = {name: cms[s.sites].scheme(s) for name, s in spec.schemes.items()}
    schemes = {name: scheme_result(cms[spec.schemes[name].sites], c, env) for name, c in costs.items()}
    pairs = [(b.x, b.y, b.over, b.on) for b in spec.breakevens]
    if not pairs and spec.baseline:
        over = default_over(spec)
        if over is not None:
            pairs = [(name, spec.baseline, over, "time") for name in spec.schemes if name != spec.baseline]
    solved: dict[tuple, BreakevenResult] = {}  # a break-even stated more than once is solved once
    for x, y, over, on in pairs:
        if (x, y, over, on) not in solved:
            solved[(x, y, over, on)] = breakeven(cm, costs, x, y, over, env, on, cms)
    breakevens = [solved[pair] for pair in pairs]
    used = dict.fromkeys(s.model for s in spec.schemes.values())
    models = {name: model_result(cm, spec.models[name], env) for name in used if name in spec.models}
    memory = tuple(memory_result(f, env) for f in fits(cm, [n for n in used if n in spec.models]))
    targets = solve_targets(spec, cms, costs, env)
    return Solution(spec, symbols, FrozenDict(schemes), tuple(breakevens), spec.baseline, FrozenDict(models), memory, targets)


def cost_models(spec: Spec, symbols: Symbols) -> dict[str | None, CostModel]:
    """One cost model per set of sites a scheme may run on: None, the declared ones, and each variant.

    Each reads the spec as seen from its sites (`Spec.on`), so that a scheme's
    time and energy use its variant's dcs, links and graph; the symbols are shared,
    so that expressions from two variants (a break-even) are in the same params.
    """
    out = {None: CostModel(spec, spec.topology, symbols)}
    for name, sites in spec.variants.items():
        view = spec.on(sites)
        out[name] = CostModel(view, view.topology, symbols)
    return out


def _target(cm: CostModel, c: SchemeCosts, on: str):
    """What a break-even compares (`on`): the time, energy, cost or CO2e to target, or None."""
    if on == "time":
        return c.time_to_target
    if on == "energy":
        return c.energy_to_target
    m = money(cm, c)
    return m.cost if on == "cost" else m.co2e


def breakeven(cm: CostModel, costs: dict[str, SchemeCosts], x: str, y: str, over: str, env, on: str = "time", cms=None) -> BreakevenResult:
    """One break-even of `on` to target; raises Failure (CT7xx, at the breakeven statement) where it cannot be solved."""
    spec = cm.spec
    p = spec.params[over]
    site = lambda n: (cms or {}).get(spec.schemes[n].sites, cm)  # noqa: E731  (each scheme's sites)
    tx, ty = _target(site(x), costs[x], on), _target(site(y), costs[y], on)
    missing = [n for n, t in ((x, tx), (y, ty)) if t is None]
    if missing:
        why = "steps to target: set steps = N" if on in ("time", "energy") else f"{on} to target: set steps = N and give a price or carbon field (docs/codesign.md)"
        return BreakevenResult(x, y, over, p.dim, None, f"scheme {' and '.join(missing)} has no {why}", cm.symbols, on)
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    log = p.spacing == "log" or p.lo is None
    cx, cy = costs[x], costs[y]
    labels = {**cx.labels, **cy.labels}
    (tx - ty)  # the two are of one dimension (DimensionError if not)
    try:
        show = lambda v: U.format_quantity(v, p.dim)  # noqa: E731
        result = solve_breakeven(x, tx.e, y, ty.e, cm.symbols[over], env, lo, hi, labels, log, show)
    except Unsolvable as exc:
        stmt = next((s for s in spec.breakevens if (s.x, s.y, s.over, s.on) == (x, y, over, on)), None)
        if stmt is not None:
            span, label = stmt.span, "this break-even"
        else:  # asked by `baseline`: point at the scheme compared
            span, label = spec.schemes[x].span, f"compared with the baseline {y}"
        raise Failure([Diagnostic(exc.code, exc.message, span, label=label, help=exc.help)]) from None
    return BreakevenResult(x, y, over, p.dim, result, None, cm.symbols, on)
