"""Text -> syntax tree, with Lark LALR and positions.

One cached parser serves every file (`lark_parser`). Lark's exceptions are
turned into diagnostics in `errors.py` and nowhere else; the tree is turned into
ctdsl's syntax tree in `builder.py`, which only builds nodes. Here: the size
bound on a whole file (CT601), and the two entry points, a spec file and a lone
expression (a `--set` value).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Tree
from lark.exceptions import UnexpectedInput

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Span
from ctdsl.syntax import ast
from ctdsl.syntax.builder import TreeBuilder
from ctdsl.syntax.positions import Positions
from ctdsl.syntax.errors import syntax_diagnostic


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
    positions = Positions(file, text)
    try:
        tree = lark_parser().parse(text, start="start")
    except UnexpectedInput as err:
        sink.add(syntax_diagnostic(err, positions))
        return None
    builder = TreeBuilder(positions, sink)
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
    positions = Positions(file, text)
    try:
        tree = lark_parser().parse(text, start="expr_only")
    except UnexpectedInput as err:
        diag = syntax_diagnostic(err, positions)
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
    builder = TreeBuilder(positions, sink)
    before = len(sink.items)
    (inner,) = [c for c in tree.children if isinstance(c, Tree)]
    expr = builder.expr(inner, 0)
    return None if len(sink.items) > before else expr
