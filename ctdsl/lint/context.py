"""What a rule sees: the checked spec, the syntax trees it came from, and the text.

Rules read the checked model (`ctdsl.model.entities`) for meaning and numbers, the
syntax trees for what the model no longer keeps (which block extends which, how
a value was written), and the source text for comments. Numbers are the checked
expressions evaluated at the params' defaults; nothing here imports sympy.
"""

from __future__ import annotations

from typing import Iterator

from ctdsl.check.loader import STD_PREFIX
from ctdsl.diagnostics import Sources, Span
from ctdsl.diagnostics.lines import split_lines
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.syntax import ast


def scan_comments(text: str) -> dict[int, tuple[int, str]]:
    """line -> (column of '#', the comment text from '#' on). Strings are skipped."""
    out: dict[int, tuple[int, str]] = {}
    for n, line in enumerate(split_lines(text), start=1):  # the parser's lines, not str.splitlines()
        if "#" not in line:
            continue
        in_string = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_string = not in_string
            elif ch == "#" and not in_string:
                out[n] = (i + 1, line[i:])
                break
    return out


def _contains(outer: Span, inner: Span) -> bool:
    return (
        outer.file == inner.file
        and (outer.line, outer.col) <= (inner.line, inner.col)
        and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)
    )


def iter_refs(value: object) -> Iterator[ast.Ref]:
    """Every name reference inside a field value (expressions and lists)."""
    return (v for v in ast.nodes(value) if isinstance(v, ast.Ref))


def iter_fields(items, stage: str | None = None) -> Iterator[tuple[str | None, ast.Field]]:
    """(stage name or None, field) for every field of a block, stages included."""
    for item in items:
        if isinstance(item, ast.Field):
            yield stage, item
        elif isinstance(item, ast.Stage):
            yield from iter_fields(item.items, item.name.text if stage is None else f"{stage}.{item.name.text}")


class Context:
    def __init__(self, spec: M.Spec, files: list[ast.SpecFile], sources: Sources, std: set[str]):
        self.spec = spec
        self.files = files
        self.sources = sources
        self.std = set(std)
        self.root = spec.root
        self.env = spec.defaults()
        self.blocks: dict[str, ast.Block] = {}
        self.param_nodes: dict[str, ast.Param] = {}
        self.block_file: dict[str, str] = {}
        for f in files:
            for st in f.statements:
                if isinstance(st, ast.Block):
                    self.blocks.setdefault(st.name.text, st)
                    self.block_file.setdefault(st.name.text, f.path)
                elif isinstance(st, ast.Param):
                    self.param_nodes.setdefault(st.name.text, st)
        self._comments: dict[str, dict[int, tuple[int, str]]] = {}

    # ---- numbers ----------------------------------------------------------------

    def value(self, expr: E.Expr | None) -> float | None:
        """The value at the params' defaults, or None if absent or not computable."""
        if expr is None:
            return None
        try:
            return E.evaluate(expr, self.env)
        except (E.EvalError, TypeError):
            return None

    # ---- where to point -----------------------------------------------------------

    def is_std(self, file: str) -> bool:
        return file in self.std or file.startswith(STD_PREFIX)

    def shown(self, span: Span | None) -> bool:
        """A span in a user's file whose text we have: one a finding may point at."""
        return span is not None and not self.is_std(span.file) and self.sources.line(span.file, span.line) is not None

    def own_span(self, d: M.Definition, key: str) -> Span | None:
        """The span of `key = value` if written in d's own block (not inherited from a base)."""
        span = d.spans.get(key)
        block = self.blocks.get(d.name)
        if span is None or block is None or not _contains(block.span, span):
            return None
        return span if self.shown(span) else None

    def field_span(self, d: M.Definition, key: str) -> Span | None:
        """The span of `key = value` wherever it was written in a user's file (a base included)."""
        span = d.spans.get(key)
        return span if self.shown(span) else None

    def at(self, d: M.Definition, *keys: str) -> Span:
        """Where to report about d: the first of `keys` written in d's block, else d's name."""
        for k in keys:
            s = self.own_span(d, k)
            if s is not None:
                return s
        return d.span

    def bases(self, name: str) -> list[str]:
        """The chain of bases of a block, nearest first."""
        out: list[str] = []
        block = self.blocks.get(name)
        while block is not None and block.base is not None and block.base.text not in out:
            out.append(block.base.text)
            block = self.blocks.get(block.base.text)
        return out

    # ---- comments -------------------------------------------------------------------

    def comments(self, file: str) -> dict[int, tuple[int, str]]:
        if file not in self._comments:
            text = self.sources.text(file)
            self._comments[file] = scan_comments(text) if text is not None else {}
        return self._comments[file]

    def comments_of(self, block: ast.Block) -> list[tuple[Span, str]]:
        """Comments on a block's lines, and on the comment-only lines just above it."""
        file = block.span.file
        table = self.comments(file)
        out: list[tuple[Span, str]] = []
        line = block.span.line - 1
        above: list[tuple[Span, str]] = []
        while line >= 1 and line in table:
            col, text = table[line]
            src = self.sources.line(file, line) or ""
            if src[: col - 1].strip():  # code before the comment: not a comment-only line
                break
            above.append((Span(file, line, col, line, col + len(text)), text))
            line -= 1
        out += reversed(above)
        for n in range(block.span.line, block.span.end_line + 1):
            if n in table:
                col, text = table[n]
                out.append((Span(file, n, col, n, col + len(text)), text))
        return out


__all__ = ["Context", "scan_comments", "iter_refs", "iter_fields"]
