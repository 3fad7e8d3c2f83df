"""The checked expression form: exact numbers in base units, params as symbols.

The checker builds these from the syntax tree once units and names are settled;
the cost formulas of the model layer (payload bytes, parameter counts) are built
from the same nodes. They are plain Python, so the linter can evaluate them
without sympy; the symbolic back end converts them node by node.

Nodes are compared by identity: a reference used twice is one shared node, so
evaluation and conversion memoise on `id`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterable, Union

from ctdsl.language.tolerances import CEIL_SLACK

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


class EvalError(ArithmeticError):
    pass


def _ceil(x: float) -> float:
    return float(math.ceil(x - CEIL_SLACK * max(1.0, abs(x))))


def evaluate(expr: Expr, env: dict[str, float]) -> float:
    """The value as a float, with params taken from `env`. Raises EvalError."""
    memo: dict[int, float] = {}

    def ev(e: Expr) -> float:
        key = id(e)
        if key in memo:
            return memo[key]
        if isinstance(e, Num):
            v = float(e.value)
        elif isinstance(e, Sym):
            if e.name not in env:
                raise EvalError(f"no value for '{e.name}'")
            v = float(env[e.name])
        elif isinstance(e, Add):
            v = ev(e.a) + ev(e.b)
        elif isinstance(e, Sub):
            v = ev(e.a) - ev(e.b)
        elif isinstance(e, Mul):
            v = ev(e.a) * ev(e.b)
        elif isinstance(e, Div):
            d = ev(e.b)
            if d == 0:
                raise EvalError("division by zero")
            v = ev(e.a) / d
        elif isinstance(e, Neg):
            v = -ev(e.a)
        elif isinstance(e, Pow):
            b = ev(e.base)
            if b == 0 and e.exp < 0:
                raise EvalError("division by zero")
            if b < 0 and e.exp.denominator != 1:
                raise EvalError("a fractional power of a negative number")
            try:
                v = b ** float(e.exp) if e.exp.denominator != 1 else b ** int(e.exp)
            except OverflowError as exc:
                raise EvalError("a power too large") from exc
        elif isinstance(e, Call):
            vals = [ev(a) for a in e.args]
            if e.fn == "min":
                v = min(vals)
            elif e.fn == "max":
                v = max(vals)
            elif e.fn == "ceil":
                if not math.isfinite(vals[0]):
                    raise EvalError("ceil of an infinite value")
                v = _ceil(vals[0])
            elif e.fn == "log2":
                if vals[0] <= 0:
                    raise EvalError("log2 of a value that is not positive")
                v = math.log2(vals[0])
            else:  # pragma: no cover
                raise EvalError(f"unknown function {e.fn}")
        else:  # pragma: no cover
            raise TypeError(type(e))
        if isinstance(v, complex) or not math.isfinite(v):
            raise EvalError("a value too large to represent")
        memo[key] = v
        return v

    try:
        return ev(expr)
    except OverflowError as exc:
        raise EvalError("a value too large to represent") from exc


def exact(expr: Expr) -> Fraction | None:
    """The exact value of a constant expression of + - * / and integer powers."""
    memo: dict[int, Fraction | None] = {}

    def ev(e: Expr) -> Fraction | None:
        key = id(e)
        if key in memo:
            return memo[key]
        r: Fraction | None
        if isinstance(e, Num):
            r = e.value
        elif isinstance(e, (Add, Sub, Mul, Div)):
            a, b = ev(e.a), ev(e.b)
            if a is None or b is None:
                r = None
            elif isinstance(e, Add):
                r = a + b
            elif isinstance(e, Sub):
                r = a - b
            elif isinstance(e, Mul):
                r = a * b
            else:
                r = a / b if b != 0 else None
        elif isinstance(e, Neg):
            a = ev(e.a)
            r = -a if a is not None else None
        elif isinstance(e, Pow) and e.exp.denominator == 1:
            a = ev(e.base)
            r = a ** int(e.exp) if a is not None and (a != 0 or e.exp > 0) else None
        elif isinstance(e, Call) and e.fn in ("min", "max"):
            vals = [ev(x) for x in e.args]
            r = None if any(v is None for v in vals) else (min if e.fn == "min" else max)(vals)  # type: ignore[type-var]
        elif isinstance(e, Call) and e.fn == "ceil":
            a = ev(e.args[0])
            r = Fraction(math.ceil(a)) if a is not None else None
        elif isinstance(e, Call) and e.fn == "log2":
            a = ev(e.args[0])
            r = None
            if a is not None and a > 0 and a.denominator == 1 and a.numerator & (a.numerator - 1) == 0:
                r = Fraction(a.numerator.bit_length() - 1)
        else:
            r = None
        memo[key] = r
        return r

    return ev(expr)


def symbols(expr: Expr) -> set[str]:
    out: set[str] = set()
    seen: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Sym):
            out.add(e.name)
        stack.extend(e.children())
    return out


def expanded_size(expr: Expr, cap: int) -> int:
    """Nodes in the tree once shared nodes are counted every time (saturates at cap)."""
    memo: dict[int, int] = {}
    order: list[Expr] = []
    stack = [expr]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        order.append(e)
        stack.extend(e.children())
    for e in reversed(order):
        memo[id(e)] = min(cap, 1 + sum(memo[id(c)] for c in e.children()))
    return memo[id(expr)]


_PREC = {"Add": 1, "Sub": 1, "Mul": 2, "Div": 2, "Neg": 3, "Pow": 4}


def _fmt_num(v: Fraction) -> str:
    if v.denominator == 1:
        return str(v.numerator)
    f = float(v)
    text = repr(f)
    if Fraction(text) == v:
        return text
    return f"{v.numerator}/{v.denominator}"


def render(expr: Expr, name_of: Callable[[str], str] = lambda s: s) -> str:
    """Infix text in base units, e.g. `max(1.2e10, wan_bw)`; for JSON and graphs."""

    def r(e: Expr, parent: int) -> str:
        if isinstance(e, Num):
            text = _fmt_num(e.value)
            return f"({text})" if (e.value < 0 or "/" in text) and parent > 1 else text
        if isinstance(e, Sym):
            return name_of(e.name)
        if isinstance(e, Call):
            return f"{e.fn}({', '.join(r(a, 0) for a in e.args)})"
        kind = type(e).__name__
        p = _PREC[kind]
        if isinstance(e, Neg):
            text = f"-{r(e.a, p)}"
        elif isinstance(e, Pow):
            text = f"{r(e.base, p + 1)}^{_fmt_num(e.exp) if e.exp >= 0 else '(' + _fmt_num(e.exp) + ')'}"
        else:
            op = {"Add": " + ", "Sub": " - ", "Mul": " * ", "Div": " / "}[kind]
            text = f"{r(e.a, p)}{op}{r(e.b, p + (kind in ('Sub', 'Div')))}"
        return f"({text})" if p < parent else text

    return r(expr, 0)


def total(terms: Iterable[Expr]) -> Expr:
    out: Expr | None = None
    for t in terms:
        out = t if out is None else Add(out, t)
    return out if out is not None else Num(Fraction(0))
