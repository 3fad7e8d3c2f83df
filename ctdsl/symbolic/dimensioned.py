"""Cost expressions that carry their dimension, as brian2 keeps units on every equation.

A `DimExpr` is a sympy expression in base units (B, s, FLOP, J, m) and the
dimension it has. Arithmetic combines the dimensions: a product multiplies
them, a quotient divides them, and a sum, a difference, a max, a min or a
comparison of two different dimensions raises `DimensionError`. Every cost term
of the back end is built this way from fields whose dimension the language's
schema declares (`Context.field`), so a dimensionally wrong formula fails the
first time it is built, in a test, not in a figure; and every output takes its
unit from its expression.

Plain numbers (int, Fraction, sympy numbers) combine as dimensionless.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from ctdsl import units as U
from ctdsl.symbolic import maxmin


class DimensionError(TypeError):
    """Two terms of different dimensions were added, compared or set against each other."""


def _lift(x) -> "DimExpr":
    if isinstance(x, DimExpr):
        return x
    if isinstance(x, bool):  # pragma: no cover - a bool is never a cost
        raise TypeError("a bool is not a quantity")
    if isinstance(x, int):
        return DimExpr(sp.Integer(x), U.ONE)
    if isinstance(x, Fraction):
        return DimExpr(sp.Rational(x.numerator, x.denominator), U.ONE)
    if isinstance(x, sp.Expr) and x.is_Number:
        return DimExpr(x, U.ONE)
    raise TypeError(f"cannot use {x!r} in a dimensioned expression")


def _same(a: "DimExpr", b: "DimExpr", what: str) -> U.Dim:
    if a.dim != b.dim:
        raise DimensionError(f"{what} of {a.dim.describe()} and {b.dim.describe()}: {a.e} vs {b.e}")
    return a.dim


class DimExpr:
    __slots__ = ("e", "dim")

    def __init__(self, e: sp.Expr, dim: U.Dim):
        self.e = e
        self.dim = dim

    def __repr__(self) -> str:
        return f"DimExpr({self.e}, {self.dim.describe()})"

    # equality and hashing follow the expression and the dimension, so a DimExpr
    # can key a dict as its sympy expression did
    def __eq__(self, other) -> bool:
        if isinstance(other, DimExpr):
            return self.dim == other.dim and self.e == other.e
        if isinstance(other, (int, Fraction)) and other == 0:
            return self.e == 0  # "is this term zero?", whatever its dimension
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.e, self.dim))

    @property
    def free_symbols(self):
        return self.e.free_symbols

    def __add__(self, other) -> "DimExpr":
        if not isinstance(other, DimExpr) and other == 0:  # a plain 0 is the empty sum, of any dimension
            return self
        o = _lift(other)
        return DimExpr(self.e + o.e, _same(self, o, "a sum"))

    def __radd__(self, other) -> "DimExpr":
        if not isinstance(other, DimExpr) and other == 0:  # sum() starts from 0
            return self
        return _lift(other).__add__(self)

    def __sub__(self, other) -> "DimExpr":
        o = _lift(other)
        return DimExpr(self.e - o.e, _same(self, o, "a difference"))

    def __rsub__(self, other) -> "DimExpr":
        return _lift(other).__sub__(self)

    def __mul__(self, other) -> "DimExpr":
        o = _lift(other)
        return DimExpr(_times(self.e, o.e), self.dim * o.dim)

    def __rmul__(self, other) -> "DimExpr":
        return _lift(other).__mul__(self)

    def __truediv__(self, other) -> "DimExpr":
        o = _lift(other)
        return DimExpr(self.e / o.e, self.dim / o.dim)

    def __rtruediv__(self, other) -> "DimExpr":
        return _lift(other).__truediv__(self)

    def __neg__(self) -> "DimExpr":
        return DimExpr(-self.e, self.dim)


_INFINITE = (sp.oo, -sp.oo, sp.zoo, sp.nan)


def _times(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """a * b, with a zero factor short-cut: sympy's Mul gives 0 * x = 0 unless x.is_finite is
    False (then NaN), and asks x.is_finite of the whole of x to know. Of a step time that
    question was 0.13 of the 0.6 CPU-seconds of the flagship's solve (an energy part with no
    modules or switches, zero watts times the step). x.is_finite is False only where x holds
    an infinity or NaN (a param's symbol is positive or real, so finite), which `has` sees
    without asking; then sympy decides as before."""
    if a is sp.S.Zero and isinstance(b, sp.Basic) and not b.has(*_INFINITE):
        return a
    if b is sp.S.Zero and isinstance(a, sp.Basic) and not a.has(*_INFINITE):
        return b
    return a * b  # a plain number (a count a caller gave as int) is multiplied as it was


def zero(dim: U.Dim) -> DimExpr:
    return DimExpr(sp.Integer(0), dim)


def one() -> DimExpr:
    """The plain number 1 (a count of one)."""
    return DimExpr(sp.Integer(1), U.ONE)


def is_one(x: DimExpr) -> bool:
    return x.dim == U.ONE and x.e == 1


def _common(args, what: str) -> U.Dim:
    qs = [_lift(a) for a in args]
    for q in qs[1:]:
        _same(qs[0], q, what)
    return qs[0].dim


def emax(*args) -> DimExpr:
    dim = _common(args, "a max")
    return DimExpr(maxmin.emax(*[_lift(a).e for a in args]), dim)


def emin(*args) -> DimExpr:
    dim = _common(args, "a min")
    return DimExpr(maxmin.emin(*[_lift(a).e for a in args]), dim)


def total(terms, dim: U.Dim) -> DimExpr:
    """The sum of `terms`, all of dimension `dim` (zero of `dim` when there are none)."""
    qs = [_lift(t) for t in terms]
    for q in qs:
        if q.dim != dim:
            raise DimensionError(f"a sum of {dim.describe()} with a term of {q.dim.describe()}: {q.e}")
    return DimExpr(sp.Add(*[q.e for q in qs]), dim)


def ceiling(a: DimExpr) -> DimExpr:
    if a.dim != U.ONE:
        raise DimensionError(f"ceil of {a.dim.describe()}: {a.e}")
    return DimExpr(sp.ceiling(a.e), U.ONE)


def log2(a: DimExpr) -> DimExpr:
    if a.dim != U.ONE:
        raise DimensionError(f"log2 of {a.dim.describe()}: {a.e}")
    return DimExpr(sp.log(a.e, 2), U.ONE)


def per_dc_max(per_dc: dict[str, DimExpr], label: str, labels: dict) -> DimExpr:
    """The slowest dc's term; alike dcs give one term, unlike ones a max whose arguments `labels`
    names after their dcs (`label` formatted with the dc: what the break-even tables say binds)."""
    unique: dict[DimExpr, str] = {}
    for dc, e in per_dc.items():
        unique.setdefault(e, label.format(dc))
    if len(unique) == 1:
        return next(iter(unique))
    labels.update({q.e: text for q, text in unique.items()})
    return emax(*unique)


class FieldAlgebra:
    """The model's formulas (ctdsl.model.payload) in dimensioned sympy: each field a
    DimExpr with the dimension the language's schema gives it (`field(entity, name)`)."""

    byte = DimExpr(sp.Integer(1), U.DATA)

    def __init__(self, field, shape):
        self.get = field  # (entity, attribute) -> DimExpr
        self.shape = shape  # (model, shape key) -> DimExpr

    @staticmethod
    def num(n: int) -> DimExpr:
        return DimExpr(sp.Integer(n), U.ONE)

    ceil = staticmethod(ceiling)
    log2 = staticmethod(log2)
