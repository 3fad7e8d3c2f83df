"""Solve a checked spec: every scheme's costs and the requested break-evens.

`solve(spec)` reads top to bottom:

1. the params as symbols, and a frozen context per set of sites (context.py: the
   declared sites and each variant, every edge's terms converted once);
2. each scheme's costs in its sites' context (costs.py: its ledger of terms and the
   step they compose to);
3. each scheme's results at the params' defaults (assemble.py, one evaluator over the
   ledger);
4. the break-evens (breakeven.py), the models' sizes, memory per GPU (fit.py) and the
   targets (targets.py);
5. the serving paths' closed forms (serving.py), when the spec declares serving.

It returns a `Solution` (ctdsl.results): per scheme, exact expressions in the params and
their values at the defaults, with their dimensions, in a frozen tree that the report
layer prints (tables, JSON, Markdown, CSV, LaTeX) and notebooks show.
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
from ctdsl.symbolic.context import Context, contexts
from ctdsl.symbolic.convert import Env, Symbols
from ctdsl.symbolic.costs import SchemeCost, cost
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.fit import fits
from ctdsl.symbolic.money import money
from ctdsl.symbolic.serving import serving_results
from ctdsl.symbolic.serving_breakeven import solve_handoff_breakeven
from ctdsl.symbolic.targets import solve_targets

__all__ = ["solve", "breakeven", "default_over", "costs_of", "Solution"]


def default_over(spec: Spec) -> str | None:
    """The param a baseline comparison sweeps: the first ranged data rate, else the first ranged param."""
    ranged = [p for p in spec.params.values() if p.lo is not None]
    for p in ranged:
        if p.dim == U.RATE:
            return p.name
    return ranged[0].name if ranged else None


def solve(spec: Spec, breakevens: bool = True) -> Solution:
    """Every result of the spec at its params' defaults; `breakevens=False` leaves the break-evens
    out (an empty tuple), for a caller that reads none of them (simulate of a serving spec)."""
    symbols = Symbols(spec)
    env = Env(symbols.defaults())
    ctxs = contexts(spec, symbols)
    costs = costs_of(spec, ctxs)
    schemes = {name: scheme_result(ctxs[spec.schemes[name].sites], c, env) for name, c in costs.items()}
    pairs = [(b.x, b.y, b.over, b.on, b.workload) for b in spec.breakevens] if breakevens else []
    if breakevens and not any(p[4] is None for p in pairs) and spec.baseline:
        over = default_over(spec)
        if over is not None:
            pairs += [(name, spec.baseline, over, "time", None) for name in spec.schemes if name != spec.baseline]
    solved: dict[tuple, BreakevenResult] = {}  # a break-even stated more than once is solved once
    for x, y, over, on, workload in pairs:
        if (x, y, over, on, workload) not in solved:
            if workload is None:
                solved[(x, y, over, on, workload)] = breakeven(ctxs, costs, x, y, over, env, on)
            else:
                solved[(x, y, over, on, workload)] = handoff_breakeven(ctxs[None], x, y, over, env, on, workload)
    breakevens = [solved[pair] for pair in pairs]
    used = dict.fromkeys(s.model for s in spec.schemes.values())
    declared = ctxs[None]
    models = {name: model_result(declared, spec.models[name], env) for name in used if name in spec.models}
    memory = tuple(memory_result(f, env) for f in fits(declared, [n for n in used if n in spec.models]))
    targets = solve_targets(spec, ctxs, costs, env)
    serving = serving_results(declared, env)
    return Solution(spec, symbols, FrozenDict(schemes), tuple(breakevens), spec.baseline, FrozenDict(models), memory, targets, serving)


def costs_of(spec: Spec, ctxs: dict[str | None, Context]) -> dict[str, SchemeCost]:
    """Every scheme's costs, each in the context of the sites it runs on."""
    return {name: cost(ctxs[s.sites], s) for name, s in spec.schemes.items()}


def _target(ctx: Context, c: SchemeCost, on: str) -> DimExpr | None:
    """What a break-even compares (`on`): the time, energy, cost or CO2e to target, or None."""
    if on == "time":
        return c.time_to_target
    if on == "energy":
        return c.energy_to_target
    m = money(ctx, c)
    return m.cost if on == "cost" else m.co2e


def breakeven(ctxs: dict[str | None, Context], costs: dict[str, SchemeCost], x: str, y: str, over: str, env: Env, on: str = "time") -> BreakevenResult:
    """One break-even of `on` to target; raises Failure (CT7xx, at the breakeven statement) where it cannot be solved."""
    declared = ctxs[None]
    spec = declared.spec
    p = spec.params[over]
    site = lambda n: ctxs[spec.schemes[n].sites]  # noqa: E731  (each scheme's sites)
    tx, ty = _target(site(x), costs[x], on), _target(site(y), costs[y], on)
    missing = [n for n, t in ((x, tx), (y, ty)) if t is None]
    if missing:
        why = "steps to target: set steps = N" if on in ("time", "energy") else f"{on} to target: set steps = N and give a price or carbon field (docs/codesign.md)"
        return BreakevenResult(x, y, over, p.dim, None, f"scheme {' and '.join(missing)} has no {why}", declared.symbols, on)
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    log = p.spacing == "log" or p.lo is None
    cx, cy = costs[x], costs[y]
    labels = {**cx.labels, **cy.labels}
    (tx - ty)  # the two are of one dimension (DimensionError if not)
    try:
        show = lambda v: U.format_quantity(v, p.dim)  # noqa: E731
        result = solve_breakeven(x, tx.e, y, ty.e, declared.symbols[over], env, lo, hi, labels, log, show)
    except Unsolvable as exc:
        stmt = next((s for s in spec.breakevens if (s.x, s.y, s.over, s.on) == (x, y, over, on)), None)
        if stmt is not None:
            span, label = stmt.span, "this break-even"
        else:  # asked by `baseline`: point at the scheme compared
            span, label = spec.schemes[x].span, f"compared with the baseline {y}"
        raise Failure([Diagnostic(exc.code, exc.message, span, label=label, help=exc.help)]) from None
    return BreakevenResult(x, y, over, p.dim, result, None, declared.symbols, on)


def handoff_breakeven(declared: Context, x: str, y: str, over: str, env: Env, on: str, workload: str) -> BreakevenResult:
    """Two hand-offs compared on the workload's paths through them (serving_breakeven.py); raises Failure (CT7xx)."""
    spec = declared.spec
    p = spec.params[over]
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    log = p.spacing == "log" or p.lo is None
    show = lambda v: U.format_quantity(v, p.dim)  # noqa: E731
    try:
        result, _ = solve_handoff_breakeven(declared, workload, x, y, on, declared.symbols[over], env, lo, hi, log, show)
    except Unsolvable as exc:
        stmt = next(s for s in spec.breakevens if (s.x, s.y, s.over, s.on, s.workload) == (x, y, over, on, workload))
        raise Failure([Diagnostic(exc.code, exc.message, stmt.span, label="this break-even", help=exc.help)]) from None
    return BreakevenResult(x, y, over, p.dim, result, None, declared.symbols, on, workload)
