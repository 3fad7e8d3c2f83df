"""Text -> syntax tree, with Lark LALR and positions.

One cached parser serves every file. Lark's exceptions are turned into
diagnostics here and nowhere else. The tree builder only builds nodes: it looks
nothing up and validates nothing, except the bounds that keep a hostile file from
making the machine work hard (size, nesting, expression size, number magnitude).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Label, Span
from ctdsl.syntax import ast

RESERVED = {
    "model", "device", "link", "pluggable", "switch", "dc", "scheme", "simulation",
    "wan", "param", "baseline", "breakeven", "import", "in", "vs", "over", "lin", "log",
}

_TOKEN_WORDS = {
    "_NL": "a newline",
    "SEMICOLON": "';'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "EQUAL": "'='",
    "COLON": "':'",
    "DOT": "'.'",
    "__ANON_0": "'..'",
    "NAME": "a name",
    "NUMBER": "a number",
    "UNIT": "a unit",
    "STRING": "a string",
    "INT": "a whole number",
    "ARROW": "'<->' or '->'",
    "SPACING": "'lin' or 'log'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "CARET": "'^'",
    "$END": "the end of the file",
}


def grammar_text() -> str:
    """The grammar: shipped inside the wheel, or read from the source tree."""
    try:
        shipped = resources.files("ctdsl") / "grammar" / "ctdsl.lark"
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):  # pragma: no cover
        pass
    return (Path(__file__).resolve().parents[2] / "grammar" / "ctdsl.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def lark_parser() -> Lark:
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        start=["start", "expr_only"],
        cache=True,
    )


def _span(file: str, item) -> Span:
    if isinstance(item, Token):
        return Span(file, item.line, item.column, item.end_line or item.line, item.end_column or item.column + 1)
    meta = item.meta
    if getattr(meta, "empty", True):
        return Span(file, 1, 1, 1, 2)
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)


def _describe(token_type: str) -> str:
    if token_type in _TOKEN_WORDS:
        return _TOKEN_WORDS[token_type]
    if token_type.isupper() and token_type.lower() in RESERVED:
        return f"'{token_type.lower()}'"
    return token_type.lower()


_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "CARET"}


def _expected_words(expected) -> str:
    kinds = set(expected)
    if "NAME" in kinds:  # a name may be any word, reserved ones included
        kinds = {k for k in kinds if k.lower() not in RESERVED}
    if "_NL" in kinds:
        kinds.discard("$END")
    words = set()
    if len(kinds & _OPERATORS) > 1:
        kinds -= _OPERATORS
        words.add("an operator")
    words |= {_describe(t) for t in kinds}
    ordered = sorted(words)
    if len(ordered) > 6:
        ordered = ordered[:6] + ["..."]
    return ", ".join(ordered)


def _acceptable(err: UnexpectedInput) -> set[str]:
    """The tokens the parser would take here: exact, unlike LALR's merged `expected`."""
    interactive = getattr(err, "interactive_parser", None)
    if interactive is not None:
        accepted = set(interactive.accepts())
        if accepted:
            return accepted
    return set(getattr(err, "expected", None) or ())


def _unclosed_brace(text: str, upto: int) -> tuple[int, int] | None:
    """Line and column of the last '{' not closed before offset `upto`."""
    stack: list[tuple[int, int]] = []
    line, col, in_comment, in_string = 1, 1, False, False
    for ch in text[:upto]:
        if ch == "\n":
            line, col, in_comment, in_string = line + 1, 1, False, False
            continue
        if not in_comment and not in_string:
            if ch == "#":
                in_comment = True
            elif ch == '"':
                in_string = True
            elif ch == "{":
                stack.append((line, col))
            elif ch == "}" and stack:
                stack.pop()
        elif in_string and ch == '"':
            in_string = False
        col += 1
    return stack[-1] if stack else None


def _end_of_last(err: UnexpectedInput) -> tuple[int, int] | None:
    """Line and column just after the last thing the parser took before `err`."""
    interactive = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(interactive, "parser_state", None), "value_stack", None) or []
    if not stack:
        return None
    last = stack[-1]
    if isinstance(last, Token):
        if last.end_line is None or last.end_column is None:
            return None
        return last.end_line, last.end_column
    meta = getattr(last, "meta", None)
    if meta is None or getattr(meta, "empty", True):
        return None
    return meta.end_line, meta.end_column


def _is_unit(word: str) -> bool:
    from ctdsl.units import UnitError, parse_unit

    try:
        parse_unit(word)
    except UnitError:
        return False
    return True


def _after_a_value(err: UnexpectedInput) -> bool:
    """Whether the parser had just read a name, a call or a bracketed expression."""
    interactive = getattr(err, "interactive_parser", None)
    stack = getattr(getattr(interactive, "parser_state", None), "value_stack", None) or []
    if not stack:
        return False
    last = stack[-1]
    if isinstance(last, Token):
        return last.type in ("NAME", "RPAR")
    return getattr(last, "data", None) in ("ref", "call")


def syntax_diagnostic(err: UnexpectedInput, file: str, text: str) -> Diagnostic:
    """Turn one of Lark's exceptions into a diagnostic with a clear message."""
    if isinstance(err, UnexpectedCharacters):
        ch = text[err.pos_in_stream] if err.pos_in_stream < len(text) else "?"
        span = Span(file, err.line, err.column, err.line, err.column + 1)
        rest = text[err.pos_in_stream :].split("\n", 1)[0]
        if ch == '"' and '"' not in rest[1:]:
            return Diagnostic(
                "CT006",
                "unterminated string",
                Span(file, err.line, err.column, err.line, err.column + len(rest.rstrip("\r"))),
                label="no closing '\"' on this line",
                help='close the string on the same line: "like this"',
            )
        help_ = None
        if ch == "=" and text[err.pos_in_stream - 1 : err.pos_in_stream + 1] == "==":
            help_ = "fields take a single '='"
        elif ch in "'`":
            help_ = 'strings are written in double quotes: "like this"'
        elif "UNIT" in (err.allowed or ()) and ch == " ":
            help_ = "write the unit right after the number, e.g. 12.5 GB/s"
        return Diagnostic(
            "CT003",
            f"unexpected character {ch!r}",
            span,
            label="not part of the language",
            help=help_,
        )
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        lines = text.splitlines() or [""]
        last = len(lines)
        span = Span(file, last, len(lines[-1]) + 1, last, len(lines[-1]) + 2)
        open_at = _unclosed_brace(text, len(text))
        secondary = ()
        msg = "unexpected end of file"
        if open_at:
            msg = "unexpected end of file: a '{' is never closed"
            secondary = (Label(Span(file, open_at[0], open_at[1], open_at[0], open_at[1] + 1), "opened here"),)
        expected = _acceptable(err)
        return Diagnostic(
            "CT004",
            msg,
            span,
            label="expected '}'" if open_at else (f"expected {_expected_words(expected)}" if expected else ""),
            secondary=secondary,
            help="add the missing '}'" if open_at else None,
        )
    assert isinstance(err, UnexpectedToken)
    tok = err.token
    span = _span(file, tok)
    expected = _acceptable(err)
    word = str(tok)
    help_ = None
    label = f"expected {_expected_words(expected)}"
    wordlike = tok.type in ("NAME", "UNIT") or word in RESERVED
    shown = word if len(word) <= 24 else word[:21] + "..."
    history = getattr(err, "token_history", None) or []
    prev = history[-1] if history else None
    if (
        prev is not None
        and prev.type == "UNIT"
        and (tok.type in ("EQUAL", "LBRACE", "COLON") or str(prev) in RESERVED)
    ):
        # `workers = 4 device = g`: the word after the number was read as its unit
        return Diagnostic(
            "CT005",
            f"missing ';' or a newline before '{prev}'",
            _span(file, prev),
            label="expected a newline or ';' before this",
            help="put each field or statement on its own line, or separate them with ';'",
        )
    if tok.type == "_NL":
        # point just after the last token, not past a comment at the end of the line
        end = _end_of_last(err)
        if end is not None:
            span = Span(file, end[0], end[1], end[0], end[1] + 1)
    before_equals = text[tok.end_pos :].lstrip(" \t").startswith("=") if tok.end_pos is not None else False
    if wordlike and _is_unit(word) and _after_a_value(err) and not before_equals:
        # `bandwidth = x GB/s`: a unit after a name or a bracket, not after a number
        return Diagnostic(
            "CT002",
            f"unexpected unit '{shown}'",
            span,
            label="a unit follows a number",
            help=f"multiply by a quantity: write ... * 1 {shown}",
        )
    if wordlike and expected & {"_NL", "SEMICOLON"}:
        return Diagnostic(
            "CT005",
            f"missing ';' or a newline before '{shown}'",
            span,
            label="expected a newline or ';' before this",
            help="put each field or statement on its own line, or separate them with ';'",
        )
    if tok.type == "SLASH" and "UNIT" in expected:
        help_ = "write compound units without spaces, e.g. GB/s"
    elif tok.type == "EQUAL" and "EQUAL" not in expected:
        help_ = "'=' only appears in 'key = value' fields and params"
    elif wordlike and "EQUAL" in expected:
        help_ = "a field is written 'key = value'"
    if wordlike:
        what = f"{'word' if word in RESERVED else 'name'} '{shown}'"
    elif tok.type == "_NL":
        what = "end of line"
    elif tok.type == "NUMBER":
        what = f"number {shown}"
    elif tok.type == "STRING":
        what = f"string {shown}"
    else:
        what = f"'{shown}'"
    return Diagnostic("CT002", f"unexpected {what}", span, label=label, help=help_)


class _Builder:
    """Lark tree -> syntax tree, bounded in depth and size."""

    def __init__(self, file: str, sink: DiagnosticSink):
        self.file = file
        self.sink = sink
        self.nodes = 0
        self.too_big_reported = False
        self.depth_reported = False

    def span(self, item) -> Span:
        return _span(self.file, item)

    def name(self, tok: Token) -> ast.Name:
        return ast.Name(str(tok), self.span(tok))

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
        name, default, rng, display = t.children
        return ast.Param(
            self.name(name),
            self.expr(default, 0),
            self.range(rng) if rng is not None else None,
            str(display)[1:-1] if display is not None else None,
            self.span(t),
        )

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
        return tuple(items)

    def wan_stmt(self, t: Tree) -> ast.Wan:
        a, arrow, b, link = t.children
        return ast.Wan(self.name(a), self.name(b), str(arrow) == "<->", self.name(link), self.span(t))

    def breakeven_stmt(self, t: Tree) -> ast.Breakeven:
        x, y, over = t.children
        return ast.Breakeven(self.name(x), self.name(y), self.name(over), self.span(t))

    def baseline_stmt(self, t: Tree) -> ast.Baseline:
        (x,) = t.children
        return ast.Baseline(self.name(x), self.span(t))

    # values and expressions
    def value(self, item, depth: int) -> ast.Value:
        if isinstance(item, Tree) and item.data == "list":
            return ast.ListValue(
                tuple(self.value(v, depth + 1) for v in item.children if v is not None), self.span(item)
            )
        if isinstance(item, Tree) and item.data == "string":
            return ast.StringValue(str(item.children[0])[1:-1], self.span(item))
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


def parse_text(text: str, file: str, sink: DiagnosticSink) -> ast.SpecFile | None:
    """Parse one file's text. Syntax errors go to `sink`; then the result is None."""
    if len(text.encode("utf-8", "surrogatepass")) > limits.MAX_FILE_BYTES:
        sink.error(
            "CT601",
            f"file is larger than {limits.MAX_FILE_BYTES // 1024} KiB",
            Span(file, 1, 1, 1, 2),
            help="a spec is a page of definitions; split it with imports",
        )
        return None
    try:
        tree = lark_parser().parse(text, start="start")
    except UnexpectedInput as err:
        sink.add(syntax_diagnostic(err, file, text))
        return None
    builder = _Builder(file, sink)
    before = len(sink.items)
    statements = builder.spec(tree)
    if len(sink.items) > before:
        return None
    return ast.SpecFile(file, statements)


def parse_expression(text: str, file: str, sink: DiagnosticSink) -> ast.Expr | None:
    """Parse a lone expression, e.g. the value of `--set wan_bw=25 GB/s`."""
    if len(text) > 10_000:
        sink.error("CT601", "expression is too long", Span(file, 1, 1, 1, 2))
        return None
    try:
        tree = lark_parser().parse(text, start="expr_only")
    except UnexpectedInput as err:
        diag = syntax_diagnostic(err, file, text)
        if diag.code == "CT005":  # there are no statements to separate in a lone value
            diag = Diagnostic(
                "CT002",
                f"unexpected '{text[diag.span.col - 1 : diag.span.end_col - 1]}' after the value",
                diag.span,
                label="the value ends before this",
                help="give one value with its unit, e.g. 25 GB/s",
            )
        sink.add(diag)
        return None
    builder = _Builder(file, sink)
    before = len(sink.items)
    (inner,) = [c for c in tree.children if isinstance(c, Tree)]
    expr = builder.expr(inner, 0)
    return None if len(sink.items) > before else expr
