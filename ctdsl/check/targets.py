"""Checking `target` statements: `target QUANTITY = VALUE | [VALUES] over PARAM [for SCHEME, ...]`.

A target asks for the value of a param at which a scheme's quantity reaches a
value. The checker makes sure the question can be asked:

- the quantity is one of `model.targets.QUANTITIES` (CT108, with a near name);
- the param exists (CT101/CT102) and has a range to look in (CT430): the
  solver brackets its roots inside that range and nowhere else;
- each scheme named exists (CT101/CT102); without `for`, every scheme is asked;
- each value is a constant (CT431: a target in terms of params would move with
  the very param being solved for), of the quantity's dimension (CT202), and
  reachable in kind: a utilisation in (0, 1] (CT302), anything else above 0 (CT301);
- the statements together ask for at most `limits.MAX_TARGETS` roots (CT628).

Each statement becomes one frozen `model.targets.Target` per value and scheme.
"""

from __future__ import annotations

from fractions import Fraction

from ctdsl import limits
from ctdsl import units as U
from ctdsl.check.exprs import ExprTyper, constant_value
from ctdsl.diagnostics import DiagnosticSink, did_you_mean
from ctdsl.model.targets import QUANTITIES, Target
from ctdsl.syntax import ast

DIMS = {
    "utilisation": U.ONE,
    "step_time": U.TIME,
    "time": U.TIME,
    "energy": U.ENERGY,
    "cost": U.MONEY,
    "co2e": U.CARBON,
}


def check_targets(ns, sink: DiagnosticSink, draft) -> None:
    """Check every `target` statement in `ns` and append its targets to `draft.targets`."""
    count = 0
    for stmt in ns.targets:
        found = _statement(ns, sink, draft, stmt)
        count += len(found)
        if count > limits.MAX_TARGETS:
            sink.error(
                "CT628",
                f"the target statements ask for more than {limits.MAX_TARGETS} targets (values x schemes)",
                stmt.span,
                help="ask for fewer values, or name the schemes with `for`",
            )
            return
        draft.targets.extend(found)


def _statement(ns, sink: DiagnosticSink, draft, stmt: ast.Target) -> list[Target]:
    q = stmt.quantity.text
    ok = True
    if q not in QUANTITIES:
        sink.error(
            "CT108",
            f"a target is one of {', '.join(QUANTITIES)}, not '{q}'",
            stmt.quantity.span,
            help=did_you_mean(q, QUANTITIES),
        )
        ok = False
    if ns.expect(stmt.over, "param"):
        p = draft.params.get(stmt.over.text)
        if p is not None and p.lo is None:
            sink.error(
                "CT430",
                f"param '{p.name}' has no range to look for the target in",
                stmt.over.span,
                label="no range",
                help=f"give {p.name} a range: add `in LOW .. HIGH` after its default",
            )
            ok = False
        ok &= p is not None
    else:
        ok = False
    schemes = [n.text for n in stmt.schemes] if stmt.schemes else list(draft.schemes)
    for n in stmt.schemes:
        ok &= ns.expect(n, "scheme")
    values = [_value(sink, v, DIMS.get(q)) for v in stmt.values]
    if not ok or any(v is None for v in values):
        return []
    texts = [_text(v) for v in stmt.values]
    return [
        Target(q, float(v), v, t, stmt.over.text, s, stmt.span)
        for v, t in zip(values, texts)
        for s in schemes
        if s in draft.schemes
    ]


def _refuse(sink: DiagnosticSink):
    def resolve(r: ast.Ref):
        sink.error(
            "CT431",
            "a target is a constant: it cannot name a param or a field",
            r.span,
            label="not a constant",
            help="write the target as a number with its unit, e.g. 0.95 or 720 h",
        )
        return None

    return resolve


def _value(sink: DiagnosticSink, node: ast.Expr, want: U.Dim | None) -> Fraction | None:
    typed = ExprTyper(sink, _refuse(sink)).type(node)
    if typed is None:
        return None
    exact = constant_value(typed)
    if exact is None:  # pragma: no cover  (refs are refused above; ceil/log2 of constants fold)
        return None
    if want is None:
        return exact
    if typed.dim != want:
        sink.error(
            "CT202",
            f"this target must be {want.describe()}, not {typed.dim.describe()}",
            node.span,
            label=f"{typed.dim.describe()}",
        )
        return None
    v = float(exact)
    if want == U.ONE and not 0 < v <= 1:
        sink.error("CT302", f"a utilisation target must be in (0, 1], not {v:g}", node.span, help="utilisation is compute time over step time, e.g. 0.95")
        return None
    if v <= 0:
        sink.error("CT301", f"a target must be above 0, not {v:g}", node.span)
        return None
    return exact


def _text(node: ast.Expr) -> str:
    if isinstance(node, ast.Number):
        return node.text + (f" {node.unit}" if node.unit else "")
    return ""


__all__ = ["check_targets", "DIMS"]
