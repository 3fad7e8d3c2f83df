"""The checked expression form: exact numbers in base units, params as symbols.

This module is the form's public face: the nodes and the helpers that build
formulas (`ctdsl.model.nodes`), the text printer (`ctdsl.model.printers`), and
the evaluators the checker and the linter use without sympy. Each evaluator is
a table of handlers for the one walk in `ctdsl.model.visit`, which visits a
shared node once and keeps its own stack, so deep chains are safe.
"""

from __future__ import annotations

import math
from math import isfinite
from fractions import Fraction

from ctdsl.language.tolerances import CEIL_SLACK
from ctdsl.model import cost as C
from ctdsl.model.nodes import (
    FUNCTIONS,
    Add,
    Call,
    Div,
    Expr,
    Mul,
    Neg,
    Num,
    Number,
    Pow,
    Sub,
    Sym,
    ceil,
    emax,
    emin,
    lift,
    log2,
    num,
    total,
)
from ctdsl.model.printers import render
from ctdsl.model.visit import Visitor, post_order

__all__ = [
    "FUNCTIONS",
    "Add",
    "Call",
    "Div",
    "EvalError",
    "Expr",
    "MESSAGES",
    "Mul",
    "Neg",
    "Num",
    "Number",
    "Pow",
    "Sub",
    "Sym",
    "ceil",
    "emax",
    "emin",
    "evaluate",
    "exact",
    "expanded_size",
    "lift",
    "log2",
    "num",
    "render",
    "symbols",
    "total",
]


class EvalError(ArithmeticError):
    pass


# ---- float evaluation -------------------------------------------------------------------------
#
# A failure is a value (`_Fail`) that travels up the fold, and each handler
# decides which of its operands' failures wins: the left one before the right
# one, except that a division looks at its divisor first (a zero divisor is
# reported before anything wrong in the numerator). So the error reported is
# the one a depth-first evaluation that stops at the first failure would meet.


class _Fail:
    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


def _fail(message: str) -> _Fail:
    return _Fail(EvalError(message))


# why a value cannot be evaluated, by kind (the explorer's page prints the same words)
MESSAGES = {
    "too_large": "a value too large to represent",
    "division": "division by zero",
    "negative_root": "a fractional power of a negative number",
    "power": "a power too large",
    "ceil": "ceil of an infinite value",
    "log2": "log2 of a value that is not positive",
}
_TOO_LARGE = MESSAGES["too_large"]


def _finite(v: float) -> float | _Fail:
    return v if math.isfinite(v) else _fail(_TOO_LARGE)


def _ceil(x: float) -> float:
    return float(math.ceil(x - CEIL_SLACK * max(1.0, abs(x))))


def _strict(op):
    """A handler that passes on its operands' first failure, else applies `op`.

    `op(node, *values)` may raise EvalError; an overflow is a value too large.
    """

    def handler(_env, e, *xs):
        for x in xs:
            if type(x) is _Fail:
                return x
        try:
            return _finite(op(e, *xs))
        except EvalError as err:
            return _Fail(err)
        except OverflowError:
            return _fail(_TOO_LARGE)

    return handler


def _num(_env, e: Num):
    try:
        return _finite(float(e.value))
    except OverflowError:
        return _fail(_TOO_LARGE)


def _sym(env, e: Sym):
    if e.name not in env:
        return _fail(f"no value for '{e.name}'")
    try:
        return _finite(float(env[e.name]))
    except OverflowError:
        return _fail(_TOO_LARGE)
    except (TypeError, ValueError) as err:  # not a number: raised as it is, in its turn
        return _Fail(err)


def _add(_env, e, a, b):  # float + and * give inf, never raise, on overflow
    if type(a) is _Fail:
        return a
    if type(b) is _Fail:
        return b
    v = a + b
    return v if isfinite(v) else _fail(_TOO_LARGE)


def _sub(_env, e, a, b):
    if type(a) is _Fail:
        return a
    if type(b) is _Fail:
        return b
    v = a - b
    return v if isfinite(v) else _fail(_TOO_LARGE)


def _mul(_env, e, a, b):
    if type(a) is _Fail:
        return a
    if type(b) is _Fail:
        return b
    v = a * b
    return v if isfinite(v) else _fail(_TOO_LARGE)


def _div(_env, e, a, b):
    if type(b) is _Fail:
        return b
    if b == 0:
        return _fail(MESSAGES["division"])
    return a if type(a) is _Fail else _finite(a / b)


# negation, min and max of finite values are finite


def _neg(_env, e, a):
    return a if type(a) is _Fail else -a


def _min(_env, e, *xs):
    for x in xs:
        if type(x) is _Fail:
            return x
    return min(xs)


def _max(_env, e, *xs):
    for x in xs:
        if type(x) is _Fail:
            return x
    return max(xs)


def _pow(e: Pow, b: float) -> float:
    if b == 0 and e.exp < 0:
        raise EvalError(MESSAGES["division"])
    if b < 0 and e.exp.denominator != 1:
        raise EvalError(MESSAGES["negative_root"])
    try:
        v = b ** float(e.exp) if e.exp.denominator != 1 else b ** int(e.exp)
    except OverflowError as exc:
        raise EvalError(MESSAGES["power"]) from exc
    if isinstance(v, complex):
        raise EvalError(_TOO_LARGE)
    return v


def _ceil_op(e, x: float) -> float:
    if not math.isfinite(x):
        raise EvalError(MESSAGES["ceil"])
    return _ceil(x)


def _log2_op(e, x: float) -> float:
    if x <= 0:
        raise EvalError(MESSAGES["log2"])
    return math.log2(x)


_EVALUATE = Visitor(
    {
        "Num": _num,
        "Sym": _sym,
        "Add": _add,
        "Sub": _sub,
        "Mul": _mul,
        "Div": _div,
        "Neg": _neg,
        "Pow": _strict(_pow),
        "min": _min,
        "max": _max,
        "ceil": _strict(_ceil_op),
        "log2": _strict(_log2_op),
    }
)


def evaluate(expr: Expr, env: dict[str, float]) -> float:
    """The value as a float, with params taken from `env`. Raises EvalError (also for a field that has no
    expression: one refused where it was typed, already reported there)."""
    if expr is None:
        raise EvalError("no value: the field was refused where it was typed")
    v = _EVALUATE(expr, env)
    if type(v) is _Fail:
        raise v.error
    return v


def value_or_none(expr: Expr | None, env: dict[str, float]) -> float | None:
    """`evaluate`, or None for an absent expression or one that cannot be evaluated."""
    if expr is None:
        return None
    try:
        return evaluate(expr, env)
    except EvalError:
        return None


# ---- exact evaluation ---------------------------------------------------------------------------


def _exact_op(op):
    """A handler that is None when an operand is, else `op(node, *values)`."""

    def handler(_ctx, e, *xs):
        for x in xs:
            if x is None:
                return None
        return op(e, *xs)

    return handler


def _exact_pow(e: Pow, a: Fraction) -> Fraction | None:
    if e.exp.denominator != 1 or (a == 0 and e.exp <= 0):
        return None
    return C.exact_pow(a, int(e.exp))  # sized by logarithms first: TooCostly over the bound


def _exact_log2(e, a: Fraction) -> Fraction | None:
    if a > 0 and a.denominator == 1 and a.numerator & (a.numerator - 1) == 0:
        return Fraction(a.numerator.bit_length() - 1)
    return None


_EXACT = Visitor(
    {
        "Num": lambda _ctx, e: e.value,
        "Sym": lambda _ctx, e: None,
        "Add": lambda _ctx, e, a, b: None if a is None or b is None else C.exact_add(a, b),
        "Sub": lambda _ctx, e, a, b: None if a is None or b is None else C.exact_sub(a, b),
        "Mul": lambda _ctx, e, a, b: None if a is None or b is None else C.exact_mul(a, b),
        "Div": lambda _ctx, e, a, b: None if a is None or b is None or b == 0 else C.exact_div(a, b),
        "Neg": lambda _ctx, e, a: None if a is None else -a,
        "Pow": _exact_op(_exact_pow),
        "min": _exact_op(lambda e, *xs: min(xs)),
        "max": _exact_op(lambda e, *xs: max(xs)),
        "ceil": _exact_op(lambda e, a: Fraction(math.ceil(a))),
        "log2": _exact_op(_exact_log2),
    }
)


def exact(expr: Expr) -> Fraction | None:
    """The exact value of a constant expression of + - * / and integer powers.

    Raises `ctdsl.model.cost.TooCostly` rather than build a number over
    `MAX_EXACT_BITS` (a power is sized before it is computed); the checker
    refuses such an expression first (CT610), so a checked one never raises.
    """
    return _EXACT(expr)


# ---- structure ----------------------------------------------------------------------------------

_EXPANDED_SIZE = Visitor.every(lambda cap, e, *kids: min(cap, 1 + sum(kids)))


def symbols(expr: Expr) -> set[str]:
    """The names of the params an expression uses."""
    return {e.name for e, _ in post_order(expr) if type(e) is Sym}


def expanded_size(expr: Expr, cap: int) -> int:
    """Nodes in the tree once shared nodes are counted every time (saturates at cap)."""
    return _EXPANDED_SIZE(expr, cap)
