"""Checked expressions -> sympy, node by node; and a fast float evaluator (`value`, and
`real_function`: an expression as a float function of one param, what ctdsl.roots finds roots of).

Sympy never sees spec text: every sympy object is built here from a checked
expression node (exact rationals, params as symbols). A param becomes a Symbol
with `positive=True` when its default and range are positive, so that
simplification and solving can use the sign. `Symbols` (ctdsl.results.params, re-
exported here) keeps, for each symbol, the param's unit and display name.
"""

from __future__ import annotations

import math
from typing import Callable

import sympy as sp

from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.model import cost as C
from ctdsl.model import expr as E
from ctdsl.model.visit import Visitor
from ctdsl.results.params import SymbolInfo, Symbols  # noqa: F401  (the solver's symbols)
from ctdsl.symbolic.dimensioned import DimExpr


def _rational(q) -> sp.Rational:
    return sp.Rational(q.numerator, q.denominator)


def _power(_symbols, e: E.Pow, base: sp.Expr) -> sp.Expr:
    """base ^ e.exp, sized first: sympy folds a number's power (and a product's number, 2 x)
    exactly, so the number's bits times |p| are checked against the bound before it does.
    The checker refuses such a power in a spec (CT610); this keeps the conversion safe for
    an expression built elsewhere."""
    coeff = base if base.is_Rational else (base.args[0] if base.is_Mul and base.args[0].is_Rational else None)
    if coeff is not None:
        bits = C.pow_bits(C.rational(int(coeff.p), int(coeff.q)).bits, e.exp)
        if bits > C.MAX_BITS:
            raise C.TooCostly("a power", bits)
    return base ** _rational(e.exp)


# The sympy printer: one handler per kind of node, the context is the `Symbols`.
SYMPY = Visitor(
    {
        "Num": lambda _symbols, e: _rational(e.value),
        "Sym": lambda symbols, e: symbols[e.name],
        "Add": lambda _symbols, e, a, b: a + b,
        "Sub": lambda _symbols, e, a, b: a - b,
        "Mul": lambda _symbols, e, a, b: a * b,
        "Div": lambda _symbols, e, a, b: a / b,
        "Neg": lambda _symbols, e, a: -a,
        "Pow": _power,
        "min": lambda _symbols, e, *args: sp.Min(*args),
        "max": lambda _symbols, e, *args: sp.Max(*args),
        "ceil": lambda _symbols, e, a: sp.ceiling(a),
        "log2": lambda _symbols, e, a: sp.log(a, 2),
    }
)


def to_sympy(expr: E.Expr, symbols: Symbols, memo: dict[int, tuple] | None = None) -> sp.Expr:
    """Convert a checked expression; shared nodes are converted once.

    `memo` maps id(node) -> (node, sympy): holding the node keeps its id from
    being reused by another object while the memo lives, so callers share one
    memo across calls.
    """
    return SYMPY(expr, symbols, memo)


class NumericError(ArithmeticError):
    pass


class Env(dict):
    """Param values for `value`, with a memo of the subexpressions already evaluated at them.

    The solver evaluates thousands of expressions that share subexpressions (a
    link's load, a phase's time) at the same values; an Env keeps what one call
    computed for the next. It must not be changed once used.
    """

    def __init__(self, *args: object, **kw: float):
        super().__init__(*args, **kw)
        self.memo: dict[sp.Basic, float] = {}


def _to_float(x) -> float:
    """float(x) for an exact or sympy number; +/-inf where its magnitude is beyond a float."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _sum(xs: list[float]) -> float:
    """An exact sum of floats (fsum); inf + -inf is nan and an overflowing sum is +/-inf, never an exception."""
    if all(math.isfinite(x) for x in xs):
        try:
            return math.fsum(xs)
        except OverflowError:  # the partial sums leave the float range
            pass
    return sum(xs, 0.0) if not any(math.isnan(x) for x in xs) else math.nan


def _pow(base: float, exp: float) -> float:
    if base == 0 and exp < 0:
        return math.inf
    try:
        return base**exp
    except OverflowError:  # |base ^ exp| beyond a float: the sign of an odd whole power of a negative base
        odd = base < 0 and float(exp).is_integer() and int(exp) % 2 == 1
        return -math.inf if odd else math.inf


def _extreme(xs: list[float], pick) -> float:
    """max or min, nan if any argument is nan (the builtins answer by the arguments' order)."""
    return math.nan if any(math.isnan(x) for x in xs) else pick(xs)


def _round(x: float, up: bool) -> float:
    if not math.isfinite(x):
        return x
    return float(math.ceil(x - CEIL_SLACK * max(1.0, abs(x)))) if up else float(math.floor(x))


def _log(x: float) -> float:
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:  # e^x beyond a float
        return math.inf


def value(expr: sp.Expr, env: dict[sp.Symbol, float]) -> float:
    """Evaluate a sympy expression to a float, fast (no subs, no evalf).

    Never raises for a value beyond the float range: a magnitude too large is
    +/-inf, inf - inf and 0 x inf are nan, the log of 0 is -inf, of a negative
    number nan, the same on every run. A complex value raises NumericError.
    """
    memo: dict[sp.Basic, float] = env.memo if isinstance(env, Env) else {}

    def ev(e: sp.Basic) -> float:
        if e in memo:
            return memo[e]
        if e.is_Rational:
            # int / int is correctly rounded, as float(Rational) is, without mpmath
            try:
                r = e.p / e.q
            except OverflowError:
                r = math.inf if (e.p > 0) == (e.q > 0) else -math.inf
        elif e is sp.zoo or e is sp.oo:
            r = math.inf
        elif e is sp.nan:
            r = math.nan
        elif e.is_Number:
            r = _to_float(e)
        elif e.is_Symbol:
            if e not in env:
                raise NumericError(f"no value for {e}")
            r = _to_float(env[e])
        elif e.is_Add:
            r = _sum([ev(a) for a in e.args])
        elif e.is_Mul:
            r = 1.0
            for a in e.args:
                r *= ev(a)
        elif e.is_Pow:
            r = _pow(ev(e.args[0]), ev(e.args[1]))
        elif isinstance(e, (sp.Max, sp.Min)):
            r = _extreme([ev(a) for a in e.args], max if isinstance(e, sp.Max) else min)
        elif isinstance(e, (sp.ceiling, sp.floor)):
            r = _round(ev(e.args[0]), isinstance(e, sp.ceiling))
        elif isinstance(e, sp.log):
            r = _log(ev(e.args[0]))
        elif isinstance(e, sp.exp):
            r = _exp(ev(e.args[0]))
        else:
            r = _to_float(e.evalf(subs=env))
        if isinstance(r, complex):
            # the message names the kind, not the expression: printing a cubic's root took 15 ms
            # (2.2 CPU-seconds for one break-even's roots, seed 34 input 57932 of the fuzz campaign)
            raise NumericError(f"complex value of a {type(e).__name__}")
        memo[e] = r
        return r

    if isinstance(expr, DimExpr):
        expr = expr.e
    if not isinstance(expr, sp.Basic):
        return _to_float(expr)
    return ev(expr)


_FAILURES = (NumericError, ArithmeticError, ValueError, TypeError)  # what evaluating can raise


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
