"""Brent's bounded minimisation (`ctdsl.numeric.minimise`) against hand-derived minima and scipy.

The design search minimises along one param with it; scipy (a test-only
dependency) implements the same method as `minimize_scalar(method="bounded")`,
so the two must agree to the tolerance asked, on the same functions.
"""

from __future__ import annotations

import math

import pytest
from scipy.optimize import minimize_scalar

from ctdsl.numeric.minimise import SQRT_EPS, minimise

# (function, interval, where its minimum is, derived by hand)
CASES = {
    "parabola": (lambda x: (x - 0.3) ** 2 + 1.0, (0.0, 1.0), 0.3),
    "cosh_tilted": (lambda x: math.cosh(x - 2.0) + 0.1 * x, (-3.0, 3.0), 2.0 - math.asinh(0.1)),  # sinh(x - 2) = -0.1
    "kink": (lambda x: abs(x - 1.7), (0.2, 5.0), 1.7),
    "log_axis": (lambda u: math.exp(u) + 4.0 * math.exp(-u), (math.log(0.01), math.log(100.0)), math.log(2.0)),  # e^u = 4 e^-u
    "falls_to_end": (lambda x: -x, (0.0, 1.0), 1.0),
    "infeasible_below": (lambda x: math.inf if x < 0.5 else x, (0.0, 1.0), 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("xatol", [1e-3, 1e-6, 1e-9])
def test_minimum_within_the_tolerance_of_the_hand_derived_one_and_scipys(name, xatol):
    f, (a, b), expected = CASES[name]
    x, fx, calls = minimise(f, a, b, xatol * (b - a))
    assert a < x < b and fx == f(x)
    # Brent's test: the bracket is within 2 tol of x, tol = sqrt(eps) |x| + xatol / 3
    near = 3 * (SQRT_EPS * abs(expected) + xatol * (b - a))
    assert abs(x - expected) <= near
    ref = minimize_scalar(f, bounds=(a, b), method="bounded", options={"xatol": xatol * (b - a)})
    assert abs(x - ref.x) <= near
    assert calls <= ref.nfev + 2  # the same method: about as many evaluations


def test_an_empty_interval_is_an_error():
    with pytest.raises(ValueError):
        minimise(lambda x: x, 1.0, 1.0, 1e-9)
