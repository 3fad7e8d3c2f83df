"""Typing expressions: syntax tree -> checked expression and its dimension.

Each node's dimension follows from its operands; sums, min and max need equal
dimensions, exponents are dimensionless constants, ceil and log2 take pure
numbers. Each node built is measured (`ctdsl.model.cost`): an exact value, a
degree in the params or a count of terms once multiplied out over the bound is
reported at that node (CT610-CT612) before anything computes it. Names resolve through a callback that the checker provides (a param is
a symbol; `ib.bandwidth` is that field's checked value). Errors are reported and
typing goes on with an "unknown" result so that one mistake gives one message.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Optional

from ctdsl import limits
from ctdsl import units as U
from ctdsl.diagnostics import DiagnosticSink, Label, did_you_mean
from ctdsl.model import cost as C
from ctdsl.model import expr as E
from ctdsl.model.visit import Memo
from ctdsl.syntax import ast


@dataclass(frozen=True)
class Typed:
    expr: E.Expr
    dim: U.Dim


Resolver = Callable[[ast.Ref], Optional[Typed]]


def _dims_text(d: U.Dim) -> str:
    return d.describe()


class ExprTyper:
    """Types expressions; `costs` is the memo of measured nodes, shared by the typers of one
    spec so that a field read by many others is measured once."""

    def __init__(self, sink: DiagnosticSink, resolve: Resolver, costs: Memo | None = None):
        self.sink = sink
        self.resolve = resolve
        self.costs: Memo = {} if costs is None else costs

    def type(self, node: ast.Expr) -> Typed | None:
        method = getattr(self, "_" + type(node).__name__)
        typed = method(node)
        if typed is None or type(node) is ast.Ref:
            return typed  # a reference's value was measured where it was typed
        return self._measured(typed, node.span)

    def _measured(self, typed: Typed, span) -> Typed | None:
        over = C.measure(typed.expr, self.costs).over()
        if over is None:
            return typed
        code, message, label, hint = over
        self.sink.error(code, message, span, label=label, help=hint)
        return None

    def _Number(self, n: ast.Number) -> Typed | None:
        if n.unit is None:
            return Typed(E.Num(n.value), U.ONE)
        try:
            unit = U.parse_unit(n.unit)
        except U.UnitError as err:
            self.sink.error("CT205", str(err), n.unit_span, label="not a unit ctdsl knows", help=err.help)
            return None
        return Typed(E.Num(n.value * unit.scale), unit.dim)

    def _Ref(self, r: ast.Ref) -> Typed | None:
        return self.resolve(r)

    def _Neg(self, n: ast.Neg) -> Typed | None:
        inner = self.type(n.operand)
        return Typed(E.Neg(inner.expr), inner.dim) if inner else None

    def _BinOp(self, b: ast.BinOp) -> Typed | None:
        left = self.type(b.left)
        right = self.type(b.right)
        if b.op == "^":
            return self._pow(b, left, right)
        if left is None or right is None:
            return None
        if b.op in "+-":
            if left.dim != right.dim:
                verb = "add" if b.op == "+" else "subtract"
                self.sink.error(
                    "CT201",
                    f"cannot {verb} {_dims_text(left.dim)} and {_dims_text(right.dim)}",
                    b.op_span,
                    label="dimensions differ",
                    secondary=(
                        Label(b.left.span, _dims_text(left.dim)),
                        Label(b.right.span, _dims_text(right.dim)),
                    ),
                    help="both sides of + and - need the same dimension",
                )
                return None
            node = E.Add(left.expr, right.expr) if b.op == "+" else E.Sub(left.expr, right.expr)
            return Typed(node, left.dim)
        if b.op == "*":
            return Typed(E.Mul(left.expr, right.expr), left.dim * right.dim)
        return Typed(E.Div(left.expr, right.expr), left.dim / right.dim)

    def _pow(self, b: ast.BinOp, base: Typed | None, exp: Typed | None) -> Typed | None:
        if exp is None:
            return None
        value = E.exact(exp.expr) if exp.dim.dimensionless else None
        if value is None:
            self.sink.error(
                "CT203",
                "an exponent must be a constant number",
                b.right.span,
                label=("has dimension " + _dims_text(exp.dim)) if not exp.dim.dimensionless else "depends on a param",
                help="write a number, e.g. x ^ 2",
            )
            return None
        if abs(value) > limits.MAX_EXPONENT or value.denominator > 64:
            self.sink.error(
                "CT604",
                f"exponent {float(value):g} is out of bounds" if abs(value) < 10**300 else "exponent is out of bounds (over 1e300)",
                b.right.span,
                label=f"exponents stay within +/-{limits.MAX_EXPONENT}",
            )
            return None
        if base is None:
            return None
        if value.denominator != 1 and not base.dim.dimensionless:
            if any(e * value.numerator % value.denominator for e in base.dim.exps):
                self.sink.error(
                    "CT203",
                    f"cannot raise {_dims_text(base.dim)} to a fractional power",
                    b.span,
                    help="fractional powers apply to numbers without units",
                )
                return None
        new_exps = tuple(int(e * value) for e in base.dim.exps)
        return Typed(E.Pow(base.expr, value), U.Dim(new_exps))  # type: ignore[arg-type]

    def _Call(self, c: ast.Call) -> Typed | None:
        fn = c.func.text
        if fn not in E.FUNCTIONS:
            self.sink.error(
                "CT107",
                f"unknown function '{fn}'",
                c.func.span,
                help=did_you_mean(fn, E.FUNCTIONS) or "functions are min, max, ceil and log2",
            )
            for a in c.args:
                self.type(a)
            return None
        lo, hi = E.FUNCTIONS[fn]
        n = len(c.args)
        if n < lo or (hi is not None and n > hi):
            want = f"exactly {lo}" if lo == hi else f"at least {lo}"
            self.sink.error(
                "CT112",
                f"{fn}() takes {want} argument{'s' * (lo != 1)}, got {n}",
                c.span,
            )
            return None
        args = [self.type(a) for a in c.args]
        if any(a is None for a in args):
            return None
        typed = [a for a in args if a is not None]
        if fn in ("min", "max"):
            first = typed[0].dim
            for node, a in zip(c.args[1:], typed[1:]):
                if a.dim != first:
                    self.sink.error(
                        "CT201",
                        f"{fn}() mixes {_dims_text(first)} and {_dims_text(a.dim)}",
                        node.span,
                        label=_dims_text(a.dim),
                        secondary=(Label(c.args[0].span, _dims_text(first)),),
                        help=f"every argument of {fn}() needs the same dimension",
                    )
                    return None
            return Typed(E.Call(fn, tuple(a.expr for a in typed)), first)
        (a,) = typed
        if not a.dim.dimensionless:
            self.sink.error(
                "CT204",
                f"{fn}() takes a plain number, not {_dims_text(a.dim)}",
                c.args[0].span,
                label=_dims_text(a.dim),
                help="divide by a unit first, e.g. log2(size / 1 B)",
            )
            return None
        return Typed(E.Call(fn, (a.expr,)), U.ONE)


def constant_value(t: Typed) -> Fraction | None:
    return E.exact(t.expr)
