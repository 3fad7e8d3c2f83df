"""ctdsl.roots, the plain-Python root finder, against scipy's brentq and hand values."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from scipy.optimize import brentq

from ctdsl.symbolic.convert import value
from ctdsl.roots import bisect, brent, changes_sign, grid, sign_changes
from ctdsl.symbolic.convert import real_function

FUNCTIONS = {
    "cubic": (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),  # Wallis's example: 2.0945514815423265
    "cos": (lambda x: math.cos(x) - x, 0.0, 1.0),  # the Dottie number, 0.7390851332151607
    "steep": (lambda x: math.exp(50 * (x - 1)) - 1, 0.0, 2.0),  # root at 1
    "flat": (lambda x: (x - 1.5) ** 5, 1.0, 3.0),  # a root of multiplicity 5 at 1.5
    "break-even": (lambda b: 0.26 + 2e9 / b - (0.085 + 2.5e8 / b) * 4, 1e9, 1e11),
    "jump": (lambda x: (1.0 if x > math.pi else -1.0), 0.0, 10.0),  # a sign change by a jump, at pi
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_brent_agrees_with_scipy(name):
    f, a, b = FUNCTIONS[name]
    root, low, high = brent(f, a, b, f(a), f(b))
    want = brentq(f, a, b, xtol=1e-300, rtol=4 * 2.0**-52, maxiter=500)
    assert low <= root <= high and (high - low) <= 8 * 2.0**-52 * abs(root) + 1e-300
    assert root == pytest.approx(want, rel=1e-12, abs=0 if name != "flat" else 1e-3)
    f_low, f_high = f(low), f(high)
    assert f_low == 0 or f_high == 0 or (f_low < 0) != (f_high < 0)  # still a bracket


def test_hand_values():
    f, a, b = FUNCTIONS["cubic"]
    assert brent(f, a, b, f(a), f(b))[0] == pytest.approx(2.0945514815423265, rel=1e-15)
    f, a, b = FUNCTIONS["cos"]
    assert brent(f, a, b, f(a), f(b))[0] == pytest.approx(0.7390851332151607, rel=1e-15)
    f, a, b = FUNCTIONS["break-even"]  # -0.08 + 1e9 / b
    assert brent(f, a, b, f(a), f(b))[0] == pytest.approx(1.25e10, rel=1e-14)
    f, a, b = FUNCTIONS["jump"]
    assert brent(f, a, b, f(a), f(b))[0] == pytest.approx(math.pi, rel=1e-15)


def test_brent_steps_round_points_it_cannot_evaluate():
    def f(x):
        return math.nan if 0.4 < x < 0.6 else x - 0.7

    root, _, _ = brent(f, 0.0, 1.0, f(0.0), f(1.0))
    assert root == pytest.approx(0.7, rel=1e-12)


def test_grid():
    assert grid(1.0, 1000.0, 3, log=True) == pytest.approx([1.0, 10.0, 100.0, 1000.0], rel=1e-15)
    assert grid(0.0, 3.0, 3, log=False) == [0.0, 1.0, 2.0, 3.0]
    assert grid(0.0, 3.0, 3, log=True) == [0.0, 1.0, 2.0, 3.0]  # log needs lo > 0
    xs = grid(0.1e9, 1000e9, 64, log=True)
    assert xs[0] == 0.1e9 and xs[-1] == 1000e9 and len(xs) == 65


def test_sign_changes_step_over_zeros_and_nans():
    xs = [0, 1, 2, 3, 4, 5, 6]
    ys = [-1.0, 0.0, 2.0, math.nan, 3.0, -1.0, -2.0]
    assert sign_changes(xs, ys) == [(0, -1.0, 2, 2.0), (4, 3.0, 5, -1.0)]
    assert sign_changes([0, 1], [0.0, 0.0]) == []


def test_real_function_is_value_with_the_other_symbols_fixed():
    b, k = sp.symbols("b k", positive=True)
    e = 3 * sp.Max(2 / b, k) + sp.ceiling(b / 7) + sp.log(k * b) / sp.log(2)
    env = {b: 5.0, k: 0.25}
    f = real_function(e, b, env)
    for v in (0.5, 3.0, 7.0, 8.0, 100.0):
        assert f(v) == value(e, {**env, b: v})  # the same evaluator, the same float
    assert math.isnan(real_function(1 / (b - 2), b, env)(2.0))  # division by zero: nan, not an exception
    assert math.isnan(real_function(sp.log(b - 10), b, env)(5.0))  # log of a negative number


def test_an_exponential_of_the_other_symbols_is_evaluated():
    """exp(-k b) with k fixed: e^-1.25 at b = 5, k = 0.25 (a colocated serving path's chance that a decode
    step is running, 1 - e^-b, went nan here and its goodput to 0, where the page found 4.57 req/s)."""
    b, k = sp.symbols("b k", positive=True)
    env = {b: 5.0, k: 0.25}
    f = real_function(1 - sp.exp(-k * b), b, env)
    assert f(5.0) == pytest.approx(1 - math.exp(-1.25), rel=1e-15)
    assert f(0.0) == 0.0
    assert value(sp.exp(k * b), {b: 1e6, k: 1.0}) == math.inf  # beyond a float: inf, not OverflowError


def test_changes_sign_is_a_crossing_not_a_touch():
    assert changes_sign(math.sin, math.pi - 1e-6, math.pi + 1e-6)  # sin crosses zero at pi
    assert not changes_sign(lambda x: x * x, -1e-6, 1e-6)  # x^2 touches zero at 0
    assert not changes_sign(lambda x: math.nan if x < 0 else x, -1.0, 1.0)  # a side that cannot be evaluated
    assert not changes_sign(lambda x: x, 0.0, 1.0)  # a zero end is no sign


@pytest.mark.parametrize("log", [False, True])
def test_bisect_finds_where_a_predicate_turns(log):
    # the boundary of x^2 < 2 on [1, 2] is sqrt(2), to the last bits of a float on either scale
    x = bisect(1.0, 2.0, lambda m: m * m < 2.0, log)
    assert x == pytest.approx(math.sqrt(2.0), rel=4e-16)
    # and a bracket with no float left inside is answered at once: its midpoint
    a = 1.0
    b = math.nextafter(a, 2.0)
    assert bisect(a, b, lambda m: pytest.fail("evaluated"), log) in (a, b)
