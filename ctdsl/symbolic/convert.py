"""Checked expressions -> sympy, node by node; and a fast float evaluator.

Sympy never sees spec text: every sympy object is built here from a checked
expression node (exact rationals, params as symbols). A param becomes a Symbol
with `positive=True` when its default and range are positive, so that
simplification and solving can use the sign. `Symbols` keeps, for each symbol,
the param's unit and display name for printing.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.model import expr as E
from ctdsl.model.visit import Visitor
from ctdsl.results.params import SymbolInfo, Symbols  # noqa: F401  (the solver's symbols)
from ctdsl.symbolic.dimensioned import DimExpr


def _rational(q) -> sp.Rational:
    return sp.Rational(q.numerator, q.denominator)


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
        "Pow": lambda _symbols, e, base: base ** _rational(e.exp),
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

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.memo: dict[sp.Basic, float] = {}


def value(expr: sp.Expr, env: dict[sp.Symbol, float]) -> float:
    """Evaluate a sympy expression to a float, fast (no subs, no evalf)."""
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
        elif e.is_Number:
            r = float(e)
        elif e.is_Symbol:
            if e not in env:
                raise NumericError(f"no value for {e}")
            r = float(env[e])
        elif e.is_Add:
            r = math.fsum(ev(a) for a in e.args)
        elif e.is_Mul:
            r = 1.0
            for a in e.args:
                r *= ev(a)
        elif e.is_Pow:
            base, exp = ev(e.args[0]), ev(e.args[1])
            if base == 0 and exp < 0:
                r = math.inf
            else:
                r = base**exp
        elif isinstance(e, sp.Max):
            r = max(ev(a) for a in e.args)
        elif isinstance(e, sp.Min):
            r = min(ev(a) for a in e.args)
        elif isinstance(e, sp.ceiling):
            x = ev(e.args[0])
            r = float(math.ceil(x - CEIL_SLACK * max(1.0, abs(x))))
        elif isinstance(e, sp.floor):
            r = float(math.floor(ev(e.args[0])))
        elif isinstance(e, sp.log):
            r = math.log(ev(e.args[0]))
        elif e is sp.zoo or e is sp.oo:
            r = math.inf
        elif e is sp.nan:
            r = math.nan
        else:
            r = float(e.evalf(subs=env))
        if isinstance(r, complex):
            raise NumericError(f"complex value of {e}")
        memo[e] = r
        return r

    if isinstance(expr, DimExpr):
        expr = expr.e
    if not isinstance(expr, sp.Basic):
        return float(expr)
    return ev(expr)
