"""Interval bounds of a sympy form over a box of its params: what prunes a design search.

`interval(expr, box)` returns (lo, hi) with lo <= expr(x) <= hi for every x in
the box (each symbol's (lo, hi)). It is natural interval arithmetic, node by
node: a sum adds the bounds, a product takes the least and greatest of the four
products of the ends, x^e with a constant e is monotone on a positive interval
(and even powers are handled through |x|), max and min take them of the bounds,
ceiling (with the evaluators' slack), floor and log are monotone. Each step keeps every value the node can
take, so the result encloses the form's range; it can be wider than the range
(a symbol that appears twice is treated as two), never narrower. A node it does
not know gives (-inf, inf): no pruning, never a wrong one.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl.language.tolerances import CEIL_SLACK

INF = math.inf
WHOLE = (-INF, INF)


def _mul(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    ps = []
    for x in a:
        for y in b:
            p = 0.0 if (x == 0 or y == 0) else x * y  # 0 x inf: the end is 0 (the interval holds no inf)
            ps.append(p)
    if any(math.isnan(p) for p in ps):
        return WHOLE
    return min(ps), max(ps)


def _pow(base: tuple[float, float], e: float) -> tuple[float, float]:
    lo, hi = base
    if float(e).is_integer():
        n = int(e)
        if n == 0:
            return 1.0, 1.0
        if n > 0:
            if n % 2 == 0 and lo < 0 < hi:
                return 0.0, max(lo**n, hi**n)
            ends = [lo**n if abs(lo) < INF else math.copysign(INF, lo) ** n, hi**n]
            return min(ends), max(ends)
    if lo <= 0:  # a negative or fractional power of an interval that reaches 0 or below
        return WHOLE
    ends = [_safe_pow(lo, e), _safe_pow(hi, e)]
    return min(ends), max(ends)


def _safe_pow(x: float, e: float) -> float:
    try:
        return x**e
    except OverflowError:
        return INF


def interval(expr: sp.Expr, box: dict[sp.Symbol, tuple[float, float]]) -> tuple[float, float]:
    """Bounds of `expr` over `box`; see the module docstring."""
    try:
        return _interval(expr, box)
    except (OverflowError, ValueError, ZeroDivisionError, TypeError):
        return WHOLE


def _interval(e: sp.Basic, box) -> tuple[float, float]:
    if e.is_Number:
        v = float(e)
        return v, v
    if e.is_Symbol:
        return box.get(e, WHOLE)
    if e.is_Add:
        lo = hi = 0.0
        for a in e.args:
            alo, ahi = _interval(a, box)
            lo, hi = lo + alo, hi + ahi
        return (lo, hi) if not (math.isnan(lo) or math.isnan(hi)) else WHOLE
    if e.is_Mul:
        out = (1.0, 1.0)
        for a in e.args:
            out = _mul(out, _interval(a, box))
        return out
    if e.is_Pow and e.exp.is_Number:
        return _pow(_interval(e.base, box), float(e.exp))
    if isinstance(e, (sp.Max, sp.Min)):
        parts = [_interval(a, box) for a in e.args]
        pick = max if isinstance(e, sp.Max) else min
        return pick(p[0] for p in parts), pick(p[1] for p in parts)
    if isinstance(e, (sp.ceiling, sp.floor)):
        lo, hi = _interval(e.args[0], box)
        if isinstance(e, sp.floor):
            return (math.floor(lo) if abs(lo) < INF else lo), (math.floor(hi) if abs(hi) < INF else hi)
        # the evaluators take ceil(x - CEIL_SLACK max(1, |x|)) (ctdsl.numeric.forms): the low end may be one less
        low = math.ceil(lo - CEIL_SLACK * max(1.0, abs(lo))) if abs(lo) < INF else lo
        return low, (math.ceil(hi) if abs(hi) < INF else hi)
    if isinstance(e, sp.log) and len(e.args) == 1:
        lo, hi = _interval(e.args[0], box)
        if lo <= 0:
            return (-INF, math.log(hi) if hi > 0 else -INF) if hi > 0 else WHOLE
        return math.log(lo), math.log(hi) if hi < INF else INF
    return WHOLE


__all__ = ["interval"]
