"""Real roots of a function of one variable, numerically, in plain Python: the one root finder.

Every place that looks for where a quantity crosses a value uses this module: break-evens
and targets (`ctdsl.symbolic.breakeven`, which checks its exact roots with it and falls back
on it where sympy cannot solve), the design search's constraint boundaries
(`ctdsl.numeric.search`), the binding changes of the sweeps (`ctdsl.numeric.crossings`), the regimes
the paper's forms write out (`ctdsl.report.paper_cases`) and the simulation's Student-t
quantile (`ctdsl.simulate.stats`):

- `grid(lo, hi, n, log)`: the points of a scan, log-spaced for a log param;
- `sign_changes(xs, ys)`: the brackets where the samples change sign (points where the
  function is zero or cannot be evaluated are stepped over); no bracket in a scan of the
  whole range is what "never in range" means, with the signs at its two ends saying which
  side holds throughout;
- `changes_sign(f, a, b)`: whether f has opposite signs at a and b, just either side of a
  root (a crossing, not a touch): how an exact root is verified;
- `brent(f, a, b, fa, fb)`: a bracket narrowed to a root by Brent's method (bisection,
  secant and inverse quadratic steps; it never leaves the bracket, so it also finds where
  a step function such as ceil() jumps across zero);
- `bisect(a, b, stays, log)`: a bracket halved to where a predicate turns false (a
  boundary that is no zero of a function: the point where the binding component changes).

It imports nothing (floats in, floats out), so that every layer may use it. scipy is a
test-only dependency: the tests check these roots against `scipy.optimize.brentq`.
"""

from __future__ import annotations

import math
from typing import Callable

EPS = 2.0**-52  # the spacing of floats at 1.0
MAX_BRENT_STEPS = 200  # Brent halves the bracket at least every few steps: 200 is far more than a float needs
BISECTIONS = 60  # halvings of a bracket at most: far below a float's resolution on any range


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


def changes_sign(f: Callable[[float], float], a: float, b: float) -> bool:
    """Whether f(a) and f(b) are both usable (not zero, not nan) and of opposite signs."""
    fa, fb = f(a), f(b)
    return not (math.isnan(fa) or math.isnan(fb)) and fa != 0 and fb != 0 and (fa < 0) != (fb < 0)


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


def midpoint(a: float, b: float, log: bool) -> float:
    """The middle of [a, b]: geometric on a log scale, arithmetic otherwise."""
    return math.sqrt(a * b) if log else (a + b) / 2


def bisect(a: float, b: float, stays: Callable[[float], bool], log: bool = False, steps: int = BISECTIONS) -> float:
    """The point between a and b where `stays` (true at a, false at b) turns false: the bracket
    halved `steps` times at most, or until its midpoint is one of its ends; its last midpoint."""
    for _ in range(steps):
        m = midpoint(a, b, log)
        if m in (a, b):
            break
        if stays(m):
            a = m
        else:
            b = m
    return midpoint(a, b, log)


__all__ = ["grid", "sign_changes", "changes_sign", "brent", "bisect", "midpoint", "EPS", "BISECTIONS", "MAX_BRENT_STEPS"]
