"""maxmin: max and min of cost terms, settled exactly where two terms differ only by a positive
factor, wrapped unevaluated otherwise. Expected forms are written out by hand."""

from __future__ import annotations

import sympy as sp

from ctdsl.symbolic.maxmin import emax, emin

b, x = sp.symbols("b x", positive=True)
y = sp.Symbol("y", real=True)  # not known positive: 2 y may be below y


def test_terms_that_differ_by_a_positive_factor_are_settled():
    assert emax(2 / b, 3 / b) == 3 / b and emin(2 / b, 3 / b) == 2 / b
    assert emax(sp.Integer(2), sp.Integer(5), 4 * x) == sp.Max(sp.Integer(5), 4 * x, evaluate=False)
    # sympy writes 2 (x + 1) as 2 x + 2, whose factor is 1: two different rests, both kept
    assert sp.srepr(emax(x + 1, 2 * (x + 1))) == sp.srepr(sp.Max(x + 1, 2 * x + 2, evaluate=False))
    assert emax(x * b, 3 * x * b) == 3 * x * b


def test_a_rest_not_known_positive_is_not_settled():
    assert sp.srepr(emax(y, 2 * y)) == sp.srepr(sp.Max(y, 2 * y, evaluate=False))
    assert sp.srepr(emin(sp.Integer(1), y, 2 * y)) == sp.srepr(sp.Min(sp.Integer(1), y, 2 * y, evaluate=False))


def test_an_argument_alone_with_its_rest_keeps_its_place():
    got = emax(y, 2 * b, sp.Integer(3), 5 * b)
    assert sp.srepr(got) == sp.srepr(sp.Max(y, 5 * b, sp.Integer(3), evaluate=False))
