"""Lark's tree -> ctdsl's syntax tree (`ctdsl.syntax.ast`), each node with its source span.

The builder only builds nodes: it looks nothing up and validates nothing, except
the bounds that keep a hostile file from making the machine work hard: blocks
nested too deep (CT602), an expression nested too deep (CT602), too many
expression nodes in a file (CT603), a number with too many digits or too large
a magnitude (CT605), a string or a name longer than the limit (CT609). Each is reported once, to the sink, and the node it stops
at is replaced by a harmless one, so that building finishes.
"""

from __future__ import annotations

import re
from fractions import Fraction

from lark import Token, Tree

from ctdsl import limits
from ctdsl.diagnostics import DiagnosticSink, Span
from ctdsl.syntax import ast
from ctdsl.syntax.positions import Positions


class TreeBuilder:
    """Lark tree -> syntax tree, bounded in depth and size."""

    def __init__(self, positions: Positions, sink: DiagnosticSink):
        self.file = positions.file
        self.positions = positions
        self.sink = sink
        self.nodes = 0
        self.too_big_reported = False
        self.depth_reported = False
        self.long_names: set[str] = set()  # names already reported as too long (CT609, once each)

    def span(self, item) -> Span:
        return self.positions.span(item)

    def name(self, tok: Token) -> ast.Name:
        text = str(tok)
        if len(text) > limits.MAX_NAME_CHARS and text not in self.long_names:
            self.long_names.add(text)
            self.sink.error(
                "CT609",
                f"name '{text[:24]}...' has {len(text):,} characters; at most {limits.MAX_NAME_CHARS} are allowed",
                self.span(tok),
                help="a name is shown in tables and figures: choose a shorter one",
            )
        return ast.Name(text, self.span(tok))

    def string(self, tok: Token, item) -> str:
        """A string literal's text, without its quotes; one longer than the limit is CT609 and cut to it."""
        text = str(tok)[1:-1]
        if len(text) > limits.MAX_STRING_CHARS:
            self.sink.error(
                "CT609",
                f"a string of {len(text):,} characters; at most {limits.MAX_STRING_CHARS} are allowed",
                self.span(item),
                help="a label or a display name is shown in tables and figures: keep it short",
            )
            return text[: limits.MAX_STRING_CHARS]
        return text

    # statements
    def spec(self, tree: Tree) -> tuple[ast.Statement, ...]:
        out = []
        for child in tree.children:
            if isinstance(child, Tree):
                out.append(getattr(self, child.data)(child))
        return tuple(out)

    def import_stmt(self, t: Tree) -> ast.Import:
        (arg,) = t.children
        if isinstance(arg, Token):
            return ast.Import(str(arg)[1:-1], None, self.span(t))
        return ast.Import(None, tuple(str(p) for p in arg.children), self.span(t))

    def param_stmt(self, t: Tree) -> ast.Param:
        name, default, rng, dist, display = t.children
        return ast.Param(
            self.name(name),
            self.expr(default, 0),
            self.range(rng) if rng is not None else None,
            self.string(display, display) if display is not None else None,
            self.span(t),
            self.distribution(dist) if dist is not None else None,
        )

    def distribution(self, t: Tree) -> ast.Call:
        """`~ kind(args)`: a call whose arguments are expressions or lists (a table of samples)."""
        self._count(t)
        func, *args = t.children
        return ast.Call(self.name(func), tuple(self.value(a, 1) for a in args if a is not None), self.span(t))

    def range(self, t: Tree) -> ast.Range:
        lo, hi, spacing, count = t.children
        n = None
        if count is not None:
            digits = str(count)
            n = int(digits) if len(digits) <= 12 else 10**12
        return ast.Range(self.expr(lo, 0), self.expr(hi, 0), str(spacing) if spacing else None, n, self.span(t))

    def block(self, t: Tree) -> ast.Block:
        kind, name, base, body = t.children
        kind_tok = kind.children[0]
        return ast.Block(
            str(kind_tok),
            self.span(kind_tok),
            self.name(name),
            self.name(base) if base is not None else None,
            self.body(body, 1),
            self.span(t),
        )

    def body(self, t: Tree, depth: int) -> tuple:
        if depth > limits.MAX_NESTING:
            self.sink.error(
                "CT602",
                f"blocks nest deeper than {limits.MAX_NESTING} levels",
                self.span(t),
                help="stages are one level deep: port { ... } inside a pluggable",
            )
            return ()
        items = []
        for child in t.children:
            if not isinstance(child, Tree):
                continue
            if child.data == "field":
                key, value = child.children
                items.append(ast.Field(self.name(key.children[0]), self.value(value, 0), self.span(child)))
            elif child.data == "stage":
                name, body = child.children
                items.append(ast.Stage(self.name(name), self.body(body, depth + 1), self.span(child)))
            elif child.data == "wan_stmt":
                items.append(self.wan_stmt(child))
        return tuple(items)

    def wan_stmt(self, t: Tree) -> ast.Wan:
        a, arrow, b, link, *rest = t.children
        count = rest[-1] if rest and rest[-1] is not None else None
        return ast.Wan(
            self.name(a), self.name(b), str(arrow) == "<->", self.name(link), self.span(t),
            self.expr(count, 0) if count is not None else None,
        )

    def breakeven_stmt(self, t: Tree) -> ast.Breakeven:
        x, y, over, on = t.children
        return ast.Breakeven(self.name(x), self.name(y), self.name(over), self.span(t), self.name(on) if on is not None else None)

    def baseline_stmt(self, t: Tree) -> ast.Baseline:
        (x,) = t.children
        return ast.Baseline(self.name(x), self.span(t))

    def search_stmt(self, t: Tree) -> ast.Search:
        name, body = t.children
        return ast.Search(self.name(name), self.body(body, 1), self.span(t))

    def target_stmt(self, t: Tree) -> ast.Target:
        quantity, values, over, *schemes = t.children
        items = values.children if isinstance(values, Tree) and values.data == "target_values" else [values]
        names = tuple(self.name(n) for n in schemes if n is not None)
        return ast.Target(self.name(quantity), tuple(self.expr(v, 0) for v in items), self.name(over), names, self.span(t))

    def scenario_stmt(self, t: Tree) -> ast.Scenario:
        name, body = t.children
        return ast.Scenario(self.name(name), self.body(body, 1), self.span(t))

    def observe_stmt(self, t: Tree) -> ast.Observe:
        observable, subject, scenario, value, source = t.children
        return ast.Observe(
            self.name(observable),
            self.name(subject) if subject is not None else None,
            self.name(scenario) if scenario is not None else None,
            self.expr(value, 0),
            ast.StringValue(self.string(source, source), self.span(source)) if source is not None else None,
            self.span(t),
        )

    def fit_stmt(self, t: Tree) -> ast.Fit:
        param, scenario = t.children
        return ast.Fit(self.name(param), self.name(scenario), self.span(t))

    # values and expressions
    def value(self, item, depth: int, lists: int = 0) -> ast.Value:
        if isinstance(item, Tree) and item.data == "list":
            if lists >= limits.MAX_LIST_DEPTH:
                if not self.depth_reported:
                    self.depth_reported = True
                    self.sink.error(
                        "CT602",
                        f"lists nest deeper than {limits.MAX_LIST_DEPTH} levels",
                        self.span(item),
                        help="a field takes a flat list, e.g. ops = [dct, add]",
                    )
                return ast.ListValue((), self.span(item))
            return ast.ListValue(
                tuple(self.value(v, depth + 1, lists + 1) for v in item.children if v is not None), self.span(item)
            )
        if isinstance(item, Tree) and item.data == "string":
            return ast.StringValue(self.string(item.children[0], item), self.span(item))
        return self.expr(item, depth)

    def _count(self, item) -> None:
        self.nodes += 1
        if self.nodes > limits.MAX_EXPR_NODES and not self.too_big_reported:
            self.too_big_reported = True
            self.sink.error(
                "CT603",
                f"the file holds more than {limits.MAX_EXPR_NODES} expression nodes",
                self.span(item),
                help="split the spec, or name repeated sub-expressions as params",
            )

    def expr(self, item, depth: int) -> ast.Expr:
        self._count(item)
        if depth > limits.MAX_EXPR_DEPTH:
            if self.depth_reported:
                return ast.Number(Fraction(1), "1", None, None, self.span(item))
            self.depth_reported = True
            self.sink.error(
                "CT602",
                f"expression nests deeper than {limits.MAX_EXPR_DEPTH} levels",
                self.span(item),
                help="name intermediate results as params",
            )
            return ast.Number(Fraction(1), "1", None, None, self.span(item))
        if isinstance(item, Token):  # a bare NUMBER is always wrapped in `quantity`
            raise AssertionError(f"unexpected token {item!r}")
        kind = item.data
        if kind == "quantity":
            num, unit = item.children
            return ast.Number(
                self.number(num),
                str(num),
                str(unit) if unit is not None else None,
                self.span(unit) if unit is not None else None,
                self.span(item),
            )
        if kind == "ref":
            return ast.Ref(tuple(self.name(t) for t in item.children), self.span(item))
        if kind == "call":
            func, *args = item.children
            return ast.Call(
                self.name(func),
                tuple(self.expr(a, depth + 1) for a in args if a is not None),
                self.span(item),
            )
        if kind == "neg":
            _, operand = item.children
            return ast.Neg(self.expr(operand, depth + 1), self.span(item))
        if kind == "binop":
            left, op, right = item.children
            return ast.BinOp(
                str(op), self.expr(left, depth + 1), self.expr(right, depth + 1), self.span(item), self.span(op)
            )
        raise AssertionError(f"unexpected rule {kind}")

    _EXP = re.compile(r"[eE]([+-]?\d+)$")

    def number(self, tok: Token) -> Fraction:
        text = str(tok).replace("_", "")
        m = self._EXP.search(text)
        mantissa = text[: m.start()] if m else text
        digits = mantissa.replace(".", "")
        shown = str(tok) if len(str(tok)) <= 24 else str(tok)[:21] + "..."
        if len(digits) > limits.MAX_DIGITS:
            self.sink.error(
                "CT605",
                f"number {shown} has more than {limits.MAX_DIGITS} digits",
                self.span(tok),
                label=f"{len(digits)} digits",
                help="write it with an exponent or a unit prefix, e.g. 70.55e9 or 12.5 GB/s",
            )
            return Fraction(1)
        exp = int(m.group(1)) if m and len(m.group(1)) <= 6 else None
        whole = mantissa.split(".")[0].lstrip("0")
        # decimal magnitude of the value: the digits before the point, plus the exponent
        magnitude = (len(whole) - 1 if whole else 0) + (exp or 0)
        if (m and exp is None) or abs(exp or 0) > limits.MAX_DECIMAL_EXPONENT or magnitude > limits.MAX_DECIMAL_EXPONENT:
            self.sink.error(
                "CT605",
                f"number {shown} is out of range",
                self.span(tok),
                label=f"magnitudes go up to 1e{limits.MAX_DECIMAL_EXPONENT}",
                help="use a unit prefix (GB, TFLOP/s) rather than a huge exponent",
            )
            return Fraction(1)
        return Fraction(text)
