"""Real roots of a function of one variable, found numerically, in plain Python.

The break-even solver finds roots exactly where sympy can. This module is what
it checks them with, and what it falls back on where sympy gives up or may have
dropped a root:

- `real_function(expr, x, env)`: expr as a float function of x, evaluated by
  `convert.value` (so with the same arithmetic as every other figure); what does
  not depend on x is evaluated once, up front. It returns nan where expr cannot
  be evaluated (division by zero, overflow, a complex value).
- `grid(lo, hi, n, log)`: the points of a scan, log-spaced for a log param.
- `sign_changes(xs, ys)`: the brackets where the samples change sign (points
  where the function is zero or cannot be evaluated are stepped over).
- `brent(f, a, b, fa, fb)`: a bracket narrowed to a root by Brent's method
  (bisection, secant and inverse quadratic steps; it never leaves the bracket,
  so it also finds where a step function such as ceil() jumps across zero).

scipy is a test-only dependency: nothing here imports it; the tests check this
module's roots against `scipy.optimize.brentq`.
"""

from __future__ import annotations

import math
from typing import Callable

import sympy as sp

from ctdsl.symbolic.convert import Env, NumericError, value

EPS = 2.0**-52  # the spacing of floats at 1.0
_FAILURES = (NumericError, ArithmeticError, ValueError, TypeError)  # what evaluating can raise
MAX_BRENT_STEPS = 200  # Brent halves the bracket at least every few steps: 200 is far more than a float needs


def real_function(expr: sp.Expr, x: sp.Symbol, env: dict) -> Callable[[float], float]:
    """expr as a function of x, the other symbols at `env`; nan where it cannot be evaluated."""
    const = Env({k: v for k, v in env.items() if k != x})
    known: dict[sp.Basic, float] = {}  # the value of each largest part without x

    def seed(e: sp.Basic) -> None:
        if not e.has(x):
            try:
                known[e] = value(e, const)
            except _FAILURES:
                pass  # evaluating expr fails at every x: f gives nan
            return
        for a in e.args:
            seed(a)

    if isinstance(expr, sp.Basic):
        seed(expr)

    def f(v: float) -> float:
        at = Env({x: v})
        at.memo = dict(known)
        try:
            r = value(expr, at)
        except _FAILURES:
            return math.nan
        return r if math.isfinite(r) else math.nan

    return f


def grid(lo: float, hi: float, n: int, log: bool) -> list[float]:
    """n + 1 points from lo to hi (both included): log-spaced when `log` and lo > 0."""
    if log and lo > 0:
        ratio = math.log(hi / lo)
        xs = [lo * math.exp(ratio * i / n) for i in range(n + 1)]
    else:
        xs = [lo + (hi - lo) * i / n for i in range(n + 1)]
    xs[0], xs[-1] = lo, hi
    return xs


def sign_changes(xs: list[float], ys: list[float]) -> list[tuple[float, float, float, float]]:
    """(a, f(a), b, f(b)) for each pair of neighbouring usable samples of opposite sign.

    Samples that are zero or nan are stepped over: a bracket then spans them.
    """
    out = []
    prev = None
    for x, y in zip(xs, ys):
        if math.isnan(y) or y == 0:
            continue
        if prev is not None and (prev[1] < 0) != (y < 0):
            out.append((prev[0], prev[1], x, y))
        prev = (x, y)
    return out


def brent(f: Callable[[float], float], a: float, b: float, fa: float, fb: float) -> tuple[float, float, float]:
    """A root of f in the bracket [a, b] (fa, fb of opposite signs), to a few units of the last place.

    Returns (root, low, high): the root and the final bracket around it.
    Brent's method as in Brent (1973), ch. 4, `zero`; a nan inside the bracket is
    treated as a failed step and the bracket is bisected instead.
    """
    if fa == 0:
        return a, a, a
    if fb == 0:
        return b, b, b
    c, fc = a, fa
    d = e = b - a
    for _ in range(MAX_BRENT_STEPS):
        if (fb < 0) == (fc < 0):  # keep the root between b and c
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2 * EPS * abs(b) + 1e-300
        m = (c - b) / 2
        if fb == 0:
            return b, b, b
        if abs(m) <= tol:
            break
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant
                p, q = 2 * m * s, 1 - s
            else:  # inverse quadratic interpolation
                qa, r = fa / fc, fb / fc
                p = s * (2 * m * qa * (qa - r) - (b - a) * (r - 1))
                q = (qa - 1) * (r - 1) * (s - 1)
            if p > 0:
                q = -q
            else:
                p = -p
            if 2 * p < min(3 * m * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = m
        else:
            d = e = m
        a, fa = b, fb
        b = b + d if abs(d) > tol else b + math.copysign(tol, m)
        fb = f(b)
        if math.isnan(fb):  # cannot be evaluated here: bisect instead
            b = a + m
            fb = f(b)
            d = e = m
            if math.isnan(fb):
                break
    lo, hi = sorted((b, c))
    return b, lo, hi


__all__ = ["real_function", "grid", "sign_changes", "brent", "EPS"]
