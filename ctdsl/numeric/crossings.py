"""What the sweep figure draws, computed: curves over one param and the points where things change.

`sweep_curves(solution, forms, x_axis)` evaluates every scheme's time to target
(or its step time, when no scheme has steps to target) over the spec's first
ranged data-rate param, and finds along those curves:

- the break-evens: the solver's roots that fall inside the range, with the
  value of the curves there (the two schemes tie, so either curve gives it);
- the regime changes: where the component that binds a scheme's step changes,
  found by bisection on the compiled forms between the two grid points around
  the change, then the curve's value there;
- the lead: the runs of the param over which one scheme is first to the target,
  their ends found by bisection the same way.

The result is a `Curves`, plain data: arrays of values and tuples of points. The
figure (`ctdsl.report.plots`) only reads it, and never evaluates anything.

Bisection is `ctdsl.roots.bisect`: geometric on a log axis (the midpoint of a and b is
sqrt(a b)) and arithmetic on a linear one; it stops after 60 halvings or when the
midpoint is one of the ends (the floats between them are exhausted), and answers the
midpoint of the last bracket. The compiled forms cost about as much at 15 points
as at one, so the next four halvings' midpoints are evaluated in one call
(`bisect_batched`), which answers what one halving at a time would, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ctdsl import units as U
from ctdsl.language.components import ComponentId
from ctdsl.model.entities import Param, Spec
from ctdsl.numeric.chunked import Chunk, evaluate
from ctdsl.numeric.forms import STEP, TIME, CompiledForms
from ctdsl.numeric.grid import Axis
from ctdsl.results.solution import Solution
from ctdsl.roots import BISECTIONS, bisect, midpoint

CURVE_POINTS = 801  # points along each curve
LEVELS = 4  # halvings whose midpoints are evaluated together (`bisect_batched`): 15 points an evaluation


class BreakEvenPoint(NamedTuple):
    """A break-even root inside the range, where two schemes' curves meet."""

    x: float  # the param's value at the root (base units)
    y: float  # the curves' value there (seconds)
    breakeven: object  # the solver's break-even (its names, dimension, result)
    root: object  # the solver's root (its value, regime, which scheme is faster on each side)


class RegimeChange(NamedTuple):
    """Where the component that binds a scheme's step changes along its curve."""

    x: float
    y: float
    scheme: str
    before: ComponentId  # the component that binds below x
    after: ComponentId  # the one that binds above
    rank: int  # the scheme's place among the curves (for its colour)


class Lead(NamedTuple):
    """A run of the param over which one scheme is first to the target."""

    lo: float
    hi: float
    scheme: str


@dataclass(frozen=True)
class Curves:
    """Everything the time-against-param panel shows, as numbers."""

    param: object  # the model's Param the curves run over
    quantity: str  # "time_to_target", or "step" when no scheme has steps to target
    ranked: tuple[str, ...]  # the schemes drawn, in spec order
    lo: float
    hi: float
    logx: bool  # whether the points are spaced geometrically
    xs: np.ndarray  # the param's values (base units)
    ys: dict[str, np.ndarray]  # scheme -> the quantity at each x (seconds)
    breaks: tuple[BreakEvenPoint, ...]
    changes: tuple[RegimeChange, ...]
    leads: tuple[Lead, ...]  # empty when the quantity is the step time

    @property
    def to_target(self) -> bool:
        """Whether the curves are times to target (else step times)."""
        return self.quantity == TIME


def x_param(spec: Spec) -> Param | None:
    """The first ranged data-rate param, else the first ranged param, else the first data rate."""
    params = list(spec.params.values())
    for test in (
        lambda p: p.lo is not None and p.dim == U.RATE,
        lambda p: p.lo is not None,
        lambda p: p.dim == U.RATE and p.default > 0,
    ):
        for p in params:
            if test(p):
                return p
    return None


def x_range(p, axis) -> tuple[float, float]:
    """The range to draw: the swept axis when one is given, else the param's range, else 1/100 to 100 x its value."""
    if axis is not None and axis.count > 1:
        return float(axis.lo), float(axis.hi)
    if p.lo is not None:
        return float(p.lo), float(p.hi)
    return float(p.default) / 100, float(p.default) * 100


def sweep_curves(sol: Solution, forms: CompiledForms, x_axis: Axis | None = None) -> Curves | None:
    """The curves over `x_param(sol.spec)` (over `x_axis`'s range when given); None when there is no such param."""
    p = x_param(sol.spec)
    ranked = [name for name, sf in forms.schemes.items() if sf.has_steps]
    if p is None:
        return None
    quantity = TIME if ranked else STEP
    ranked = ranked or list(forms.schemes)
    lo, hi = x_range(p, x_axis)
    logx = lo > 0 and hi / lo >= 20
    xs = np.geomspace(lo, hi, CURVE_POINTS) if logx else np.linspace(lo, hi, CURVE_POINTS)
    res = evaluate(forms, {p.name: xs})
    ys = {s: res.values[(s, quantity)] for s in ranked}
    leads = winner_runs(forms, p.name, xs, res, ranked, logx) if quantity == TIME else []
    return Curves(
        param=p,
        quantity=quantity,
        ranked=tuple(ranked),
        lo=lo,
        hi=hi,
        logx=logx,
        xs=xs,
        ys=ys,
        breaks=tuple(_break_evens(sol, forms, p.name, lo, hi, quantity)),
        changes=tuple(_regime_changes(forms, p.name, xs, res, ranked, quantity, logx)),
        leads=tuple(leads),
    )


def _at(forms: CompiledForms, name: str, x: float) -> Chunk:
    return evaluate(forms, {name: np.array([x])})


def _break_evens(sol, forms, name: str, lo: float, hi: float, quantity: str) -> list[BreakEvenPoint]:
    out = []
    for b in sol.breakevens:
        if b.over != name or b.result is None or b.on != "time":  # a break-even on cost is not on the time curves
            continue
        for root in b.roots:
            if not lo <= root.value <= hi:
                continue
            yv = _at(forms, name, root.value).values[(b.x, quantity)][0]
            if np.isfinite(yv):
                out.append(BreakEvenPoint(root.value, yv, b, root))
    return out


def _regime_changes(forms, name: str, xs, res: Chunk, ranked: list[str], quantity: str, log: bool) -> list[RegimeChange]:
    out = []
    for s in ranked:
        codes = res.binding[s]
        for j in np.flatnonzero(codes[1:] != codes[:-1]).tolist():
            xc = binding_change(forms, name, s, xs[j], xs[j + 1], int(codes[j]), log)
            yc = _at(forms, name, xc).values[(s, quantity)][0]
            comps = forms.schemes[s].components
            out.append(RegimeChange(xc, yc, s, comps[codes[j]], comps[codes[j + 1]], ranked.index(s)))
    return out


_mid = midpoint


def bisect_batched(a: float, b: float, stays: Callable[[np.ndarray], np.ndarray], log: bool, levels: int = LEVELS) -> float:
    """`ctdsl.roots.bisect`'s answer, bit for bit, with `stays` asked of many points at once (an array in, booleans out).

    The midpoints the next `levels` halvings can reach (2^levels - 1 of them, in
    heap order: the bracket of node i is halved at its midpoint, node 2i takes the
    upper half, 2i + 1 the lower) are computed exactly as `bisect` computes them,
    one evaluation answers them all, and the walk down the tree follows the answers
    at the midpoints `bisect` would have visited. Evaluating the compiled forms at
    15 points costs about what it costs at one.
    """
    left = BISECTIONS
    while left > 0:
        n = min(levels, left)
        lo, hi, mid = [0.0, a], [0.0, b], [0.0, _mid(a, b, log)]
        for i in range(2, 2**n):
            parent = i // 2
            lo.append(mid[parent] if i % 2 == 0 else lo[parent])
            hi.append(hi[parent] if i % 2 == 0 else mid[parent])
            mid.append(_mid(lo[i], hi[i], log))
        answers = np.asarray(stays(np.array(mid[1:])), dtype=bool)
        i = 1
        for _ in range(n):
            m = mid[i]
            if m in (a, b):
                return _mid(a, b, log)
            if answers[i - 1]:
                a, i = m, 2 * i
            else:
                b, i = m, 2 * i + 1
        left -= n
    return _mid(a, b, log)


def binding_change(forms, name: str, scheme: str, a: float, b: float, code_a: int, log: bool) -> float:
    """Where the component binding `scheme`'s step changes from `code_a` between a and b."""
    return bisect_batched(a, b, lambda ms: evaluate(forms, {name: ms}).binding[scheme] == code_a, log)


def winner_runs(forms, name: str, xs, res: Chunk, ranked: list[str], log: bool) -> list[Lead]:
    """Runs of x where one scheme is first to the target, each end found by bisection."""
    w = res.winner
    runs = []
    start = xs[0]
    for j in np.flatnonzero(w[1:] != w[:-1]).tolist():
        code = int(w[j])
        edge = bisect_batched(xs[j], xs[j + 1], lambda ms: evaluate(forms, {name: ms}).winner == code, log)
        runs.append((start, edge, code))
        start = edge
    runs.append((start, xs[-1], int(w[-1])))
    return [Lead(a, b, ranked[k]) for a, b, k in runs if k >= 0]


__all__ = [
    "BreakEvenPoint",
    "Curves",
    "Lead",
    "RegimeChange",
    "binding_change",
    "bisect",
    "bisect_batched",
    "sweep_curves",
    "winner_runs",
    "x_param",
    "x_range",
]
