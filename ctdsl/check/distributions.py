"""Checking a param's distribution: `param eff = 0.4 in 0.2 .. 0.6 ~ triangular(0.3, 0.4, 0.55)`.

A distribution names one of `KINDS` and gives its arguments as constants with
units. Each argument has the dimension of the param's default, except
lognormal's sigma, a plain number (the sd of ln x). The bounds each kind needs
are checked here, at the argument that breaks them: lo < hi, lo <= mode <= hi,
sd > 0, median > 0, sigma > 0; a bounded distribution (uniform, triangular) must
lie inside the param's declared range, when it has one, so that the range keeps
meaning "every value the study considers". The checked arguments, in base
units, become a frozen `Distribution` on the `Param`.

`samples([v1, v2, ...])` takes one argument, a table of samples (a list): the
empirical distribution of those values. Each sample is a constant with the
param's dimension (CT208) inside its range (CT314); a string or a list in the
table is CT314, a name CT309; a table needs at least two samples (CT314) and
holds at most `limits.MAX_DIST_SAMPLES`, each written with at most
`limits.MAX_SAMPLE_NODES` expression nodes (CT629), counted before anything is
evaluated.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from ctdsl import limits
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
    "samples": (("table",), False),  # one argument: a table of samples, `[v1, v2, ...]`
}
TABLE = "samples"  # the kind whose argument is a table of samples
MIN_SAMPLES = 2  # a table of one sample is a constant: the param's value


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
    if kind == TABLE:
        return _table(sink, const, node, default, rng)
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
        if isinstance(arg, ast.ListValue):
            sink.error(
                "CT313",
                f"param '{name}': the {what} of its {kind} is one value, not a list",
                arg.span,
                help="a list is a table of samples: ~ samples([v1, v2, ...])",
            )
            return None
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


def _table(sink: DiagnosticSink, const, node: ast.Param, default: Typed, rng) -> M.Distribution | None:
    """`samples([v1, v2, ...])`: every sample checked, in base units; None after a diagnostic."""
    call, name = node.dist, node.name.text
    if len(call.args) != 1 or not isinstance(call.args[0], ast.ListValue):
        sink.error(
            "CT313",
            f"param '{name}': samples takes one table of samples, in brackets",
            call.span,
            help="e.g. ~ samples([1.02, 1.08, 1.3]), each sample with the param's unit",
        )
        return None
    table = call.args[0]
    items = table.items
    if len(items) < MIN_SAMPLES:
        sink.error(
            "CT314",
            f"param '{name}': a table of samples needs at least {MIN_SAMPLES} samples, not {len(items)}",
            table.span,
            help="a table of one sample is a constant: make it the param's value, without ~",
        )
        return None
    if len(items) > limits.MAX_DIST_SAMPLES:
        sink.error(
            "CT629",
            f"param '{name}': a table of {len(items):,} samples; at most {limits.MAX_DIST_SAMPLES:,} are allowed",
            table.span,
            help="keep a subsample, or fit a distribution (normal, lognormal, triangular) to the measurements",
        )
        return None
    for item in items:
        if isinstance(item, (ast.StringValue, ast.ListValue)):
            what = "a string" if isinstance(item, ast.StringValue) else "a list"
            sink.error(
                "CT314",
                f"param '{name}': a sample is a number with the param's unit, not {what}",
                item.span,
                help="e.g. ~ samples([1.02, 1.08, 1.3])",
            )
            return None
        nodes = _nodes(item, limits.MAX_SAMPLE_NODES + 1)
        if nodes > limits.MAX_SAMPLE_NODES:
            sink.error(
                "CT629",
                f"param '{name}': a sample written with more than {limits.MAX_SAMPLE_NODES} expression nodes",
                item.span,
                help="a sample is a number with its unit, e.g. 12.5 GB/s",
            )
            return None
    values = []
    for item in items:
        typed = const(item, f"param '{name}': a sample of its table")
        if typed is None:
            return None
        if typed.dim != default.dim:
            sink.error(
                "CT208",
                f"param '{name}': a sample of its table is {typed.dim.describe()}, but it must be {default.dim.describe()}",
                item.span,
                label=typed.dim.describe(),
                secondary=(Label(node.default.span, default.dim.describe()),),
            )
            return None
        values.append(E.evaluate(typed.expr, {}))
    lo, hi = rng
    outside = [i for i, v in enumerate(values) if lo is not None and not lo <= v <= hi]
    if outside:
        first, dim = outside[0], default.dim
        more = f" ({len(outside)} of its {len(values)} samples do)" if len(outside) > 1 else ""
        sink.error(
            "CT314",
            f"param '{name}': samples: a sample lies outside the param's range{more}",
            items[first].span,
            label=U.format_quantity(values[first], dim),
            help=f"the range is {U.format_quantity(lo, dim)} .. {U.format_quantity(hi, dim)}: widen it, or correct the sample",
        )
        return None
    return M.Distribution(kind=TABLE, args=tuple(values), span=call.span)


def _nodes(expr: ast.Expr, stop: int) -> int:
    """Expression nodes of `expr`, counted up to `stop`."""
    return sum(1 for _ in islice(ast.nodes(expr), stop))


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


__all__ = ["KINDS", "MIN_SAMPLES", "TABLE", "check_distribution"]
