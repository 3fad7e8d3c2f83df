"""Tornado data: one quantity at each end of every ranged param's declared range.

`tornado(solution, name)` evaluates the quantity named as in
`ctdsl.symbolic.sensitivity` (`SCHEME.time_to_target`, `breakeven.X.Y.OVER`)
with one param at its range's low end, then its high end, the others at their
values: exactly, from the quantity's form (`convert.value`, the arithmetic of
every other figure). A break-even is solved again at each end
(`solve_breakeven`), and the root nearest the one at the params' values is
kept; where there is none in range the bar's end is nan. Params without a
declared range, and a break-even's own param, have no bar: they are listed in
`skipped`.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl.results.quantity import Quantity
from ctdsl.results.sensitivity import Tornado, TornadoBar
from ctdsl.results.solution import Solution
from ctdsl.symbolic.breakeven import Unsolvable, solve_breakeven
from ctdsl.symbolic.convert import Env
from ctdsl.symbolic.sensitivity import SCHEME_QUANTITIES, breakeven_name, num


class UnknownQuantity(KeyError):
    """A name that is not one of the solution's quantities; `names` lists those that are."""

    def __init__(self, name: str, names: list[str]):
        super().__init__(name)
        self.name = name
        self.names = names


def quantity_names(sol) -> list[str]:
    """Every quantity a tornado (or a sensitivity table) can be asked for, in the solution's order."""
    out = [f"{r.name}.{attr}" for r in sol.schemes.values() for attr, _ in SCHEME_QUANTITIES if getattr(r, attr) is not None]
    for b in sol.breakevens:
        out += [breakeven_name(b, k) for k in range(max(1, len(b.roots)))]
    return out


def _find(sol, name: str):
    """(what, Quantity or None, the break-even and root index or None)."""
    for r in sol.schemes.values():
        for attr, words in SCHEME_QUANTITIES:
            if name == f"{r.name}.{attr}" and getattr(r, attr) is not None:
                return f"{words} of {r.name}", getattr(r, attr), None
    for b in sol.breakevens:
        for k in range(max(1, len(b.roots))):
            if name == breakeven_name(b, k):
                q = Quantity(b.roots[k].raw, b.roots[k].value, b.dim) if b.roots else None
                return f"break-even of {b.x} vs {b.y} over {b.over}", q, (b, k)
    raise UnknownQuantity(name, quantity_names(sol))


def _range(p) -> tuple[float, float, bool]:
    """The range a break-even is searched over, as `symbolic.solve.breakeven` searches it."""
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    return lo, hi, p.spacing == "log" or p.lo is None


def _root_at(sol, b, near: float | None, env) -> float:
    """The break-even's root at env nearest `near` (nan: none in range, or it cannot be solved)."""
    tx, ty = sol.schemes[b.x].time_to_target.expr, sol.schemes[b.y].time_to_target.expr
    lo, hi, log = _range(sol.spec.params[b.over])
    try:
        found = solve_breakeven(b.x, tx, b.y, ty, sol.symbols[b.over], env, lo, hi, log=log)
    except Unsolvable:
        return math.nan
    if not found.roots:
        return math.nan
    if near is None or not math.isfinite(near):
        return found.roots[0].value

    def gap(v: float) -> float:
        return abs(math.log(v / near)) if v > 0 and near > 0 else abs(v - near)

    return min((r.value for r in found.roots), key=gap)


def tornado(sol: Solution, name: str) -> Tornado:
    """The bars of quantity `name` over every ranged param, widest first. Raises UnknownQuantity."""
    what, q, be = _find(sol, name)
    symbols = sol.symbols
    defaults = symbols.defaults()
    bars, skipped = [], []
    for info in symbols.info.values():
        p = info.param
        if p.lo is None or (be is not None and p.name == be[0].over):
            skipped.append(p.name)
            continue
        ends = []
        for v in (p.lo, p.hi):
            env = Env({**defaults, info.symbol: v})
            if be is None:
                ends.append(num(q.expr, env))
            else:
                ends.append(_root_at(sol, be[0], q.value if q is not None else None, env))
        bars.append(TornadoBar(p.name, p.dim, p.lo, p.hi, ends[0], ends[1]))
    order = sorted(range(len(bars)), key=lambda i: (math.isnan(bars[i].spread), -bars[i].spread if not math.isnan(bars[i].spread) else 0, i))
    value = q if q is not None else Quantity(sp.nan, math.nan, be[0].dim)  # a break-even never in range
    return Tornado(name, what, value, tuple(bars[i] for i in order), tuple(skipped))


def report_tornadoes(sol: Solution) -> list[Tornado]:
    """The tornadoes `ctdsl report --sensitivity` draws: the baseline's time to target (else the first
    scheme's), and every break-even root."""
    names = [n for n in quantity_names(sol) if n.endswith(".time_to_target")]
    first = [n for n in names if n == f"{sol.baseline}.time_to_target"] or names[:1]
    roots = [breakeven_name(b, k) for b in sol.breakevens for k in range(len(b.roots))]
    return [tornado(sol, n) for n in first + roots]
