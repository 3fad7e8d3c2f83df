"""The checker's bounds, for the page: a reader's values are refused as `ctdsl solve --set` refuses them.

The checker keeps each bound it tested on an expression of params
(`Spec.bounds`: the field, its bound, the expression, where it was written).
`checks_model(spec, names)` gives the page

- the bounds themselves and their messages, from `ctdsl.language.bounds`, the
  table the checker reads (HTML-encoded, as all text the script inserts);
- each bound's expression printed as a JavaScript function of the params'
  values, `function (a) { ... }`, that evaluates it as `ctdsl.model.expr`
  evaluates it: a failure (division by zero, a value too large) is a value
  that travels up, the first one met winning and a division's divisor first,
  through the page's helpers `X.add`, `X.div`, ... (`core.js`), which give the
  same words (`ctdsl.model.expr.MESSAGES`);
- for each bound, the declared range of each param it names, sorted by name:
  the checker also tests a bound with each such param at each end of its range.

The expressions are the checker's, built from numbers and params only; a param
prints as `a[K]` (K: its place on the page) and a number as its double, so no
spec text is printed as code.
"""

from __future__ import annotations

import math

from ctdsl.language import bounds as B
from ctdsl.language.tolerances import REL
from ctdsl.model import expr as E
from ctdsl.model.visit import Visitor
from ctdsl.report.encode import html_text


def _number(value) -> str:
    try:
        x = float(value)
    except OverflowError:
        return "X.big()"
    if math.isinf(x):
        return "X.big()"
    text = repr(x)
    return f"({text})" if x < 0 else text


def _binary(op: str):
    def handler(ctx, e, a, b):
        return ctx.emit(f"X.{op}({a}, {b})")

    return handler


def _pow(ctx, e, base):
    exp = e.exp
    return ctx.emit(f"X.pow({base}, {_number(exp)}, {'true' if exp.denominator == 1 else 'false'})")


class _Lines:
    """The temporaries of one function: each node once, children first (the walk of ctdsl.model.visit)."""

    def __init__(self, index: dict[str, int]) -> None:
        self.index = index
        self.lines: list[str] = []

    def emit(self, code: str) -> str:
        name = f"v{len(self.lines)}"
        self.lines.append(f"const {name} = {code};")
        return name


_JS = Visitor(
    {
        "Num": lambda ctx, e: ctx.emit(_number(e.value)),
        "Sym": lambda ctx, e: ctx.emit(f"X.fin(a[{ctx.index[e.name]}])"),
        "Add": _binary("add"),
        "Sub": _binary("sub"),
        "Mul": _binary("mul"),
        "Div": _binary("div"),
        "Neg": lambda ctx, e, a: ctx.emit(f"X.neg({a})"),
        "Pow": _pow,
        "min": lambda ctx, e, *xs: ctx.emit(f"X.min({', '.join(xs)})"),
        "max": lambda ctx, e, *xs: ctx.emit(f"X.max({', '.join(xs)})"),
        "ceil": lambda ctx, e, a: ctx.emit(f"X.ceil({a})"),
        "log2": lambda ctx, e, a: ctx.emit(f"X.log2({a})"),
    }
)


def js_check(expr: E.Expr, index: dict[str, int]) -> str:
    """`function (a) { ... }`: the value of `expr` at the params' values `a` (base units), or a failure."""
    lines = _Lines(index)
    last = _JS(expr, lines)
    return "function (a) { " + " ".join(lines.lines) + f" return {last}; }}"


def _kind(b: B.Bound) -> dict:
    return {
        "code": b.code,
        "words": html_text(b.words),
        "message": html_text(b.message),
        "low": b.low,
        "lowClosed": b.low_closed,
        "high": b.high,
        "highClosed": b.high_closed,
        "values": list(b.values) if b.values is not None else None,
        "whole": b.whole,
        "countsOnly": b.counts_only,
    }


def checks_model(spec, names: list[str]) -> tuple[dict, str]:
    """(the page's data of the bounds on its params, `const CHECKS = [...]`: one function per bound)."""
    index = {n: k for k, n in enumerate(names)}
    items, fns = [], []
    for b in spec.bounds:
        used = sorted(E.symbols(b.expr))
        if not used or any(n not in index for n in used):
            continue
        ends = [[index[n], spec.params[n].lo, spec.params[n].hi] for n in used if spec.params[n].lo is not None]
        items.append(
            {
                "owner": html_text(b.owner),
                "bound": b.bound,
                "dim": list(b.dim.exps),
                "at": html_text(f"{b.span.file}:{b.span.line}:{b.span.col}"),
                "help": html_text(b.help) if b.help else None,
                "field": b.field,
                "ends": ends,
                "params": [index[n] for n in used],
            }
        )
        fns.append(js_check(b.expr, index))
    text = lambda t: [html_text(x) for x in t]  # noqa: E731
    data = {
        "kinds": {k: _kind(v) for k, v in B.BOUNDS.items()},
        "when": html_text(B.WHEN),
        "notWhole": text(B.NOT_WHOLE),
        "belowOne": text(B.BELOW_ONE),
        "notEvaluated": text(B.NOT_EVALUATED),
        "outside": text(B.OUTSIDE_RANGE),
        "errors": {k: html_text(v) for k, v in E.MESSAGES.items()},
        "rel": REL,
        "list": items,
    }
    code = "const CHECKS = [\n" + ",\n".join(f"  {f}" for f in fns) + "\n];"
    return data, code


__all__ = ["checks_model", "js_check"]
