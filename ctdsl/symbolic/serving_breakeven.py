"""Break-even of two hand-offs: where one workload's paths through them give equal TTFT, e2e or energy.

`breakeven h1 vs h2 over p on ttft_p` compares the workload's two serving paths
(serving.py), each measure a closed form in the params with the arrival rate at the
workload's: the value of p at which the two are equal is solved as a training
break-even is, by `breakeven.solve_breakeven` (exact roots of each regime where sympy
can, a scan and Brent's method otherwise, every root checked).

The forms hold only where the queues settle (every utilisation below 1, a positive
TPOT, the mean decode batch within the largest): past that the waits are infinite, and
the forms' values are meaningless. So the range of p is first narrowed to where both
paths settle: the settled points of a scan of the range (roots.grid), the ends of their
run refined by roots.bisect. No settled point: never in range, and why. Settled points
in more than one run: the widest is solved, and the reason says so.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl import roots
from ctdsl.symbolic.breakeven import Breakeven, solve_breakeven
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import Env, real_function
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.serving import path_forms, settles

# the serving term each measure of `breakeven h1 vs h2 ... on M` compares
MEASURE_TERM = {"ttft": "ttft", "ttft_p": "ttft_p", "e2e": "e2e", "e2e_p": "e2e_p", "energy": "energy_per_token"}
SETTLE_STEPS = 128  # intervals of the scan that finds where both paths' queues settle
_SETTLE_KEYS = ("prefill_utilisation", "link_utilisation", "tpot", "decode_batch", "decode_batch_max")


def path_measure(ctx: Context, workload: str, handoff: str, on: str) -> tuple[DimExpr, dict[str, DimExpr]]:
    """(the measure, the terms that say whether the queues settle) of the workload's path through
    the hand-off, each at the workload's rate."""
    path = next(p for p in ctx.spec.serving.paths if p.workload == workload and p.handoff == handoff)
    forms, sustainable = path_forms(ctx, path)
    watch = {k: forms[k] for k in _SETTLE_KEYS if k in forms}
    watch["headroom"] = sustainable - forms["rate"]  # the sustainable rate less the arrival rate
    return forms[MEASURE_TERM[on]], watch


def _settles(fs: dict, v: float) -> bool:
    """The path's queues settle at b = v (serving.settles) and its rate is below the sustainable one."""
    x = {k: f(v) for k, f in fs.items()}
    return not any(math.isnan(y) for y in x.values()) and x["headroom"] > 0 and settles(x)


def settled_range(watch: list[dict[str, DimExpr]], b: sp.Symbol, env: Env, lo: float, hi: float, log: bool) -> tuple[float, float, bool] | None:
    """(lo, hi, whole) of the widest run of the range where every path's queues settle; whole when
    that run is the only one; None when they settle nowhere in the range."""
    fs = [{k: real_function(e.e, b, env) for k, e in w.items()} for w in watch]
    ok = lambda v: all(_settles(f, v) for f in fs)  # noqa: E731
    xs = roots.grid(lo, hi, SETTLE_STEPS, log)
    good = [ok(x) for x in xs]
    runs: list[tuple[int, int]] = []
    for i, g in enumerate(good):
        if g and (i == 0 or not good[i - 1]):
            runs.append((i, i))
        elif g:
            runs[-1] = (runs[-1][0], i)
    if not runs:
        return None
    i, j = max(runs, key=lambda r: (r[1] - r[0], -r[0]))
    a = xs[i] if i == 0 else _edge(ok, xs[i], xs[i - 1], log)
    c = xs[j] if j == len(xs) - 1 else _edge(ok, xs[j], xs[j + 1], log)
    return a, c, len(runs) == 1


def _edge(ok, inside: float, outside: float, log: bool) -> float:
    """The settled point nearest the edge between inside (settled) and outside (not), by roots.bisect."""
    m = roots.bisect(inside, outside, ok, log)
    step = (outside - inside) * 1e-9
    while not ok(m):  # bisect's last midpoint may be the unsettled side
        m -= step
        step *= 2
    return m


def solve_handoff_breakeven(
    ctx: Context, workload: str, x: str, y: str, on: str, b: sp.Symbol, env: Env, lo: float, hi: float, log: bool, show
) -> tuple[Breakeven, DimExpr]:
    """The roots of measure_x(b) = measure_y(b) where both paths settle. Raises breakeven.Unsolvable."""
    mx, wx = path_measure(ctx, workload, x, on)
    my, wy = path_measure(ctx, workload, y, on)
    mx - my  # of one dimension
    run = settled_range([wx, wy], b, env, lo, hi, log)
    if run is None:
        result = Breakeven(x, y, str(b), lo, hi)
        result.reason = f"the queues of {workload}'s path through {x} or {y} do not settle at any {b} in its range, {show(lo)} to {show(hi)}"
        return result, mx
    a, c, whole = run
    result = solve_breakeven(x, mx.e, y, my.e, b, env, a, c, None, log, show)
    if (a, c) != (lo, hi):
        note = f"the queues of both paths settle only for {b} from {show(a)} to {show(c)}" + ("" if whole else " (the widest such run)")
        if result.reason:
            result.reason = f"{result.reason}; {note}"
        result.settled = note
    return result, mx
