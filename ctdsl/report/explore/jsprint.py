"""JavaScript printed from the sympy expressions of a solution, never from spec text.

`js_function(name, args, exprs)` prints one JavaScript function that evaluates
every expression of `exprs` at once, sharing their common subexpressions
(`sympy.cse`, as the numeric back end's `lambdify(..., cse=True)` does):

    function NAME(a, out) { const a0 = a[0], ...; const t0 = ...; out[0] = ...; }

`a` holds the params' values in base units, in the order of `args`; the
function writes one float per expression into `out`. The params print as
`a0, a1, ...` and the temporaries as `t0, t1, ...`, and any other symbol is
refused, so that no name from a spec ever becomes a JavaScript identifier; the printer (sympy's JavaScript printer, with three
changes) then only meets sympy objects that ctdsl built:

- numbers print to full precision: a Float as Python's `repr` of its double,
  an exact p/q as the division `p/q` when both fit a double exactly, and
  otherwise as the correctly rounded quotient (`Infinity` beyond the range);
- `ceiling(x)` prints as `ceilTol(x)`, the ceiling with the solver's tolerance
  (`CEIL_SLACK`, ctdsl.language.tolerances), defined in the page's script;
- anything the printer does not know raises `Unprintable` instead of printing
  a comment.

Max and Min print as `Math.max` / `Math.min`, Piecewise as nested `?:`, so
every regime is exact.
"""

from __future__ import annotations

import math
import re

import sympy as sp
from sympy.printing.jscode import JavascriptCodePrinter

_EXACT = 2**53  # the integers a double holds exactly


class Unprintable(Exception):
    """An expression holds something with no JavaScript form here."""


def _number(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "(-Infinity)"
    text = repr(x)
    return f"({text})" if x < 0 else text


def _quotient(p: int, q: int) -> float:
    try:
        return p / q  # int / int is correctly rounded in Python
    except OverflowError:
        return math.inf if (p > 0) == (q > 0) else -math.inf


class JsPrinter(JavascriptCodePrinter):
    """sympy's JavaScript printer with full-precision numbers and the tolerant ceiling."""

    def __init__(self, names: dict[sp.Symbol, str]) -> None:
        super().__init__({"strict": True})
        self._names = names  # each param's symbol -> a0, a1, ...

    def _print_Symbol(self, expr) -> str:
        name = self._names.get(expr)
        if name is not None:
            return name
        if re.fullmatch(r"t[0-9]+", expr.name) is None:
            raise Unprintable(f"a symbol that is not a param: {expr.name}")
        return expr.name  # a common subexpression's temporary

    def _print_Float(self, expr) -> str:
        return _number(float(expr))

    def _print_Integer(self, expr) -> str:
        p = int(expr)
        return str(p) if abs(p) < _EXACT else _number(_quotient(p, 1))

    def _print_Rational(self, expr) -> str:
        p, q = int(expr.p), int(expr.q)
        if abs(p) < _EXACT and q < _EXACT:
            return f"({p}/{q})"
        return _number(_quotient(p, q))

    def _print_Infinity(self, expr) -> str:
        return "Infinity"

    def _print_NegativeInfinity(self, expr) -> str:
        return "(-Infinity)"

    def _print_NaN(self, expr) -> str:
        return "NaN"

    def _print_ComplexInfinity(self, expr) -> str:
        return "NaN"  # 1/0 of exact numbers: no value, as the solver's value() gives nan

    def _print_ceiling(self, expr) -> str:
        return f"ceilTol({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr) -> str:
        if expr.args[-1].cond != True:  # noqa: E712 (a sympy boolean)
            raise Unprintable("a piecewise expression without an otherwise branch")
        out = self._print(expr.args[-1].expr)
        for e, c in reversed(expr.args[:-1]):
            out = f"(({self._print(c)}) ? ({self._print(e)}) : ({out}))"
        return out

    def emptyPrinter(self, expr):  # noqa: N802 (sympy's name)
        raise Unprintable(f"no JavaScript form for {type(expr).__name__}")

    def _print_not_supported(self, expr):
        raise Unprintable(f"no JavaScript form for {type(expr).__name__}")


def _needed(subs, exprs) -> list:
    """The temporaries of `subs` that `exprs` use, directly or through other temporaries, in order."""
    index = {sym: k for k, (sym, _) in enumerate(subs)}
    keep: set[int] = set()
    todo = [e for e in exprs if e is not None]
    while todo:
        e = todo.pop()
        for s in e.free_symbols:
            k = index.get(s)
            if k is not None and k not in keep:
                keep.add(k)
                todo.append(subs[k][1])
    return [subs[k] for k in sorted(keep)]


def js_functions(args: tuple[sp.Symbol, ...], groups: dict[str, list]) -> str:
    """One JavaScript function `NAME(a, out)` per group, evaluating its expressions (None: NaN).

    One `sympy.cse` over every group's expressions; each function then computes
    only the temporaries its own outputs need.
    """
    names = {s: f"a{i}" for i, s in enumerate(args)}
    unique = list(dict.fromkeys(e for exprs in groups.values() for e in exprs if e is not None))
    temps = sp.numbered_symbols("t", exclude=set(args))
    subs, reduced = sp.cse(unique, symbols=temps, order="none")
    by_expr = dict(zip(unique, reduced))
    printer = JsPrinter(names)
    out = []
    for name, exprs in groups.items():
        mine = [None if e is None else by_expr[e] for e in exprs]
        lines = [f"function {name}(a, out) {{"]
        if args:
            lines.append("  const " + ", ".join(f"a{i} = a[{i}]" for i in range(len(args))) + ";")
        for sym, e in _needed(subs, mine):
            lines.append(f"  const {printer.doprint(sym)} = {printer.doprint(e)};")
        for k, e in enumerate(mine):
            lines.append(f"  out[{k}] = {'NaN' if e is None else printer.doprint(e)};")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n".join(out)


def js_function(name: str, args: tuple[sp.Symbol, ...], exprs: list) -> str:
    """One JavaScript function `name(a, out)` evaluating every expression of `exprs` (None: NaN)."""
    return js_functions(args, {name: exprs})
