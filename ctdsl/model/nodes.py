"""The nodes of the checked expression form, and helpers that build formulas from them.

A checked expression holds exact numbers in base units and params as symbols.
The checker builds these from the syntax tree once units and names are settled;
the cost formulas of the model layer (payload bytes, parameter counts) are built
from the same nodes. Nodes are frozen and compared by identity: a reference used
twice is one shared node. Walking them is `ctdsl.model.visit`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable, Union

Number = Union[int, Fraction]


class Expr:
    __slots__ = ()

    # building formulas in code reads like the maths
    def __add__(self, other) -> "Expr":
        return Add(self, lift(other))

    def __radd__(self, other) -> "Expr":
        return Add(lift(other), self)

    def __sub__(self, other) -> "Expr":
        return Sub(self, lift(other))

    def __rsub__(self, other) -> "Expr":
        return Sub(lift(other), self)

    def __mul__(self, other) -> "Expr":
        return Mul(self, lift(other))

    def __rmul__(self, other) -> "Expr":
        return Mul(lift(other), self)

    def __truediv__(self, other) -> "Expr":
        return Div(self, lift(other))

    def __rtruediv__(self, other) -> "Expr":
        return Div(lift(other), self)

    def __neg__(self) -> "Expr":
        return Neg(self)

    def children(self) -> tuple["Expr", ...]:
        return ()


@dataclass(frozen=True, eq=False)
class Num(Expr):
    value: Fraction


@dataclass(frozen=True, eq=False)
class Sym(Expr):
    """A param: a free symbol of the symbolic back end."""

    name: str


@dataclass(frozen=True, eq=False)
class Add(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)


@dataclass(frozen=True, eq=False)
class Sub(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)


@dataclass(frozen=True, eq=False)
class Mul(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)


@dataclass(frozen=True, eq=False)
class Div(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)


@dataclass(frozen=True, eq=False)
class Neg(Expr):
    a: Expr

    def children(self):
        return (self.a,)


@dataclass(frozen=True, eq=False)
class Pow(Expr):
    base: Expr
    exp: Fraction  # a constant; the checker bounds its magnitude

    def children(self):
        return (self.base,)


@dataclass(frozen=True, eq=False)
class Call(Expr):
    fn: str  # min, max, ceil, log2
    args: tuple[Expr, ...]

    def children(self):
        return self.args


FUNCTIONS = {"min": (1, None), "max": (1, None), "ceil": (1, 1), "log2": (1, 1)}


def lift(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, (int, Fraction)):
        return Num(Fraction(x))
    raise TypeError(f"cannot use {x!r} in an expression")


def num(x: Number) -> Num:
    return Num(Fraction(x))


def emin(*args: Expr) -> Expr:
    return args[0] if len(args) == 1 else Call("min", tuple(lift(a) for a in args))


def emax(*args: Expr) -> Expr:
    return args[0] if len(args) == 1 else Call("max", tuple(lift(a) for a in args))


def ceil(a: Expr) -> Expr:
    return Call("ceil", (lift(a),))


def log2(a: Expr) -> Expr:
    return Call("log2", (lift(a),))


def total(terms: Iterable[Expr]) -> Expr:
    out: Expr | None = None
    for t in terms:
        out = t if out is None else Add(out, t)
    return out if out is not None else Num(Fraction(0))
