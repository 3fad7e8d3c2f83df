"""Checking a param's distribution: `param eff = 0.4 in 0.2 .. 0.6 ~ triangular(0.3, 0.4, 0.55)`.

A distribution names one of `KINDS` and gives its arguments as constants with
units. Each argument has the dimension of the param's default, except
lognormal's sigma, a plain number (the sd of ln x). The bounds each kind needs
are checked here, at the argument that breaks them: lo < hi, lo <= mode <= hi,
sd > 0, median > 0, sigma > 0; a bounded distribution (uniform, triangular) must
lie inside the param's declared range, when it has one, so that the range keeps
meaning "every value the study considers". The checked arguments, in base
units, become a frozen `Distribution` on the `Param`.
"""

from __future__ import annotations

from collections.abc import Callable

from ctdsl import units as U
from ctdsl.check.exprs import Typed
from ctdsl.diagnostics import DiagnosticSink, Label, did_you_mean
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.syntax import ast

# kind -> the names of its arguments, in order; the last flag: whether the last is a plain number
KINDS: dict[str, tuple[tuple[str, ...], bool]] = {
    "uniform": (("lo", "hi"), False),
    "triangular": (("lo", "mode", "hi"), False),
    "normal": (("mean", "sd"), False),
    "lognormal": (("median", "sigma"), True),
}


def check_distribution(
    sink: DiagnosticSink,
    const: Callable[[ast.Expr, str], Typed | None],
    node: ast.Param,
    default: Typed,
    rng: tuple[float | None, float | None],
) -> M.Distribution | None:
    """The param's checked distribution, or None (no `~`, or a diagnostic was given)."""
    call, name = node.dist, node.name.text
    if call is None:
        return None
    kind = call.func.text
    if kind not in KINDS:
        sink.error(
            "CT313",
            f"param '{name}': unknown distribution '{kind}'",
            call.func.span,
            help=did_you_mean(kind, list(KINDS)) or f"distributions are: {', '.join(KINDS)}",
        )
        return None
    names, plain_last = KINDS[kind]
    if len(call.args) != len(names):
        sink.error(
            "CT313",
            f"param '{name}': {kind} takes {len(names)} arguments ({', '.join(names)}), not {len(call.args)}",
            call.span,
            help=f"e.g. ~ {kind}({', '.join(names)})",
        )
        return None
    values = []
    for i, (arg, what) in enumerate(zip(call.args, names)):
        typed = const(arg, f"param '{name}': the {what} of its {kind}")
        if typed is None:
            return None
        want = U.ONE if plain_last and i == len(names) - 1 else default.dim
        if typed.dim != want:
            sink.error(
                "CT208",
                f"param '{name}': the {what} of its {kind} is {typed.dim.describe()}, but it must be {want.describe()}",
                arg.span,
                label=typed.dim.describe(),
                secondary=(Label(node.default.span, default.dim.describe()),) if want == default.dim else (),
                help="sigma is the sd of ln x: a plain number" if want != default.dim else None,
            )
            return None
        values.append(E.evaluate(typed.expr, {}))
    if not _bounds(sink, node, kind, names, values, default.dim, rng):
        return None
    return M.Distribution(kind=kind, args=tuple(values), span=call.span)


def _bounds(sink, node: ast.Param, kind: str, names, values: list[float], dim, rng) -> bool:
    call, name = node.dist, node.name.text
    args = dict(zip(names, values))
    spans = dict(zip(names, (a.span for a in call.args)))
    problems: list[tuple[str, str, str]] = []  # (argument, message, help)
    if "hi" in args and not args["lo"] < args["hi"]:
        problems.append(("hi", "lo must be below hi", "write the smaller end first"))
    if kind == "triangular" and not args["lo"] <= args["mode"] <= args["hi"]:
        problems.append(("mode", "the mode must lie between lo and hi", "lo <= mode <= hi"))
    for arg in ("sd", "median", "sigma"):
        if arg in args and not args[arg] > 0:
            problems.append((arg, f"the {arg} must be positive", None))
    lo, hi = rng
    if not problems and "hi" in args and lo is not None and not lo <= args["lo"] <= args["hi"] <= hi:
        problems.append(
            ("lo" if args["lo"] < lo else "hi", "a bounded distribution must lie inside the param's range",
             f"the range is {U.format_quantity(lo, dim)} .. {U.format_quantity(hi, dim)}: widen it, or narrow the distribution"),
        )
    for arg, message, hint in problems[:1]:
        shown = U.format_quantity(args[arg], U.ONE if arg == "sigma" else dim)
        sink.error("CT314", f"param '{name}': {kind}: {message}", spans[arg], label=shown, help=hint)
    return not problems


__all__ = ["KINDS", "check_distribution"]
