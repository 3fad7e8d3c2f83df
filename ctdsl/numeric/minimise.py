"""The minimum of a function of one variable on an interval, by Brent's method.

`minimise(f, a, b, xatol)` is Brent's `localmin` (R. P. Brent, *Algorithms for
Minimization without Derivatives*, 1973, chapter 5): golden-section steps,
replaced by a parabola through the three best points whenever that parabola's
vertex lies inside the bracket and moves less than half the step before last.
It never evaluates f outside [a, b] nor at the ends themselves, and stops when
the bracket around the best point is within 2 tol of it, tol = sqrt(eps) |x| +
xatol / 3: the best point is then within about xatol of a local minimum (the
global one for a unimodal f). The design search (`ctdsl.numeric.search`) calls
it along one param at a time.

The method is the one of `scipy.optimize.minimize_scalar(method="bounded")`;
ctdsl needs this one function, so it does not make scipy (tens of megabytes) a
dependency of every install. The tests compare the two on the same functions.
"""

from __future__ import annotations

import math
from typing import Callable

GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))  # the golden section's smaller part, 0.381966...
SQRT_EPS = math.sqrt(2.0**-52)
MAX_MINIMISE_STEPS = 500  # a golden step shrinks the bracket by 0.618: 500 of them are far more than a float needs


def minimise(f: Callable[[float], float], a: float, b: float, xatol: float) -> tuple[float, float, int]:
    """(x, f(x), evaluations): the best point found for f in the open interval (a, b)."""
    if not a < b:
        raise ValueError(f"the interval must have a < b, got [{a!r}, {b!r}]")
    x = w = v = a + GOLDEN * (b - a)
    fx = fw = fv = f(x)
    calls = 1
    d = e = 0.0  # the last step and the one before it
    for _ in range(MAX_MINIMISE_STEPS):
        m = 0.5 * (a + b)
        tol = SQRT_EPS * abs(x) + xatol / 3.0
        if abs(x - m) <= 2.0 * tol - 0.5 * (b - a):
            break
        golden = True
        if abs(e) > tol:  # try a parabola through x, w and v
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            last, e = e, d
            if abs(p) < abs(0.5 * q * last) and q * (a - x) < p < q * (b - x):
                d = p / q
                u = x + d
                if u - a < 2.0 * tol or b - u < 2.0 * tol:  # not too near an end
                    d = tol if x < m else -tol
                golden = False
        if golden:
            e = (b - x) if x < m else (a - x)
            d = GOLDEN * e
        u = x + (d if abs(d) >= tol else math.copysign(tol, d))  # never closer than tol to x
        fu = f(u)
        calls += 1
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return x, fx, calls
