"""regimes.coeff_exponent: a term's coefficient and power of b, read off its factors,
is what sympy's own `as_coeff_exponent` gives, structure and all (srepr)."""

from __future__ import annotations

import pytest
import sympy as sp

from ctdsl.symbolic.regimes import coeff_exponent

b, x, y = sp.symbols("b x y", positive=True)
k = sp.Dummy("k", positive=True)


@pytest.mark.parametrize(
    "term",
    [
        b, b**-1, b**3, x, sp.Integer(7), sp.Rational(-3, 4), 3 * x * b, -2 * x * y / b, 5 * x * k / b**2,
        sp.Max(x, y) * b, sp.sqrt(b) * x, x / (x * b + b), x / (b + 1), sp.log(b) * x, b * sp.ceiling(b),
        x * b**sp.Rational(1, 2), sp.Max(x, 2) * 3,
    ],
)
def test_coeff_exponent_is_sympys(term):
    assert sp.srepr(coeff_exponent(term, b)) == sp.srepr(term.as_coeff_exponent(b))


def test_exact_roots_from_remembered_sides_are_the_roots_of_the_difference():
    """A pair's sides expanded apart (and remembered) give the roots the difference gives."""
    from ctdsl.symbolic.regimes import exact_roots

    x_side = 3 * x / b + (x + y) * (2 + 1 / b) + k
    for y_side in (7 * y / b + x * y, (y + 1) * (x / b + 3), 5 + k / b):
        whole = exact_roots(x_side - y_side, b, {}, {x: 2.0, y: 3.0, k: 1.0})
        parted = exact_roots(x_side - y_side, b, {}, {x: 2.0, y: 3.0, k: 1.0}, parts=(x_side, y_side))
        assert sp.srepr(parted) == sp.srepr(whole) and whole[0]
