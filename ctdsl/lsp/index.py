"""Where every name of a loaded spec is defined and used: the editor's index.

Built from the syntax trees of the root and its imports (the standard library's
included), so that go-to-definition and find-references work across files. A
spec has one namespace (params and definitions), so a name refers to its one
definition wherever it is written. Spans are ctdsl's (1-based, code points).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ctdsl.diagnostics import Span
from ctdsl.lint.context import iter_refs
from ctdsl.syntax import ast


@dataclass(frozen=True)
class Symbol:
    name: str
    kind: str  # "param" or a block kind (link, dc, ...)
    span: Span  # the name where it is defined
    node: ast.Block | ast.Param


@dataclass(frozen=True)
class Occurrence:
    name: str
    span: Span
    role: str  # def | ref | base | key | stage | kind | import
    block: str | None = None  # the block it is written in (for keys), or the import's target for an import
    owner: str | None = None  # for a dotted ref's field part (`ib.bandwidth`): the definition named


def contains(span: Span, line: int, col: int) -> bool:
    """Whether (line, col) is in `span`, its end included (a cursor just after a name is on it)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def _value_refs(value, block: str | None) -> Iterator[Occurrence]:
    for v in iter_refs(value):
        yield Occurrence(v.parts[0].text, v.parts[0].span, "ref", block)
        for part in v.parts[1:]:
            yield Occurrence(part.text, part.span, "key", None, owner=v.parts[0].text)


def _items(items, block: str) -> Iterator[Occurrence]:
    for item in items:
        if isinstance(item, ast.Field):
            yield Occurrence(item.key.text, item.key.span, "key", block)
            yield from _value_refs(item.value, block)
        elif isinstance(item, ast.Stage):
            yield Occurrence(item.name.text, item.name.span, "stage", block)
            yield from _items(item.items, block)


def occurrences(f: ast.SpecFile) -> Iterator[Occurrence]:
    for st in f.statements:
        if isinstance(st, ast.Param):
            yield Occurrence(st.name.text, st.name.span, "def")
            yield from _value_refs(st.default, None)
            if st.range is not None:
                yield from _value_refs(st.range.lo, None)
                yield from _value_refs(st.range.hi, None)
        elif isinstance(st, ast.Block):
            yield Occurrence(st.kind, st.kind_span, "kind")
            yield Occurrence(st.name.text, st.name.span, "def")
            if st.base is not None:
                yield Occurrence(st.base.text, st.base.span, "base", st.kind)
            yield from _items(st.items, st.name.text)
        elif isinstance(st, ast.Wan):
            for n in (st.a, st.b, st.link):
                yield Occurrence(n.text, n.span, "ref")
        elif isinstance(st, ast.Breakeven):
            for n in (st.x, st.y, st.over):
                yield Occurrence(n.text, n.span, "ref")
        elif isinstance(st, ast.Baseline):
            yield Occurrence(st.scheme.text, st.scheme.span, "ref")
        elif isinstance(st, ast.Scenario):  # its keys are params: references to them
            for item in st.items:
                if isinstance(item, ast.Field):
                    yield Occurrence(item.key.text, item.key.span, "ref")
        elif isinstance(st, ast.Observe) and st.subject is not None:
            yield Occurrence(st.subject.text, st.subject.span, "ref")
        elif isinstance(st, ast.Fit):
            yield Occurrence(st.param.text, st.param.span, "ref")
        elif isinstance(st, ast.Import):
            target = ".".join(st.module) if st.module else st.path
            yield Occurrence(target or "", st.span, "import", target)


class Index:
    def __init__(self, files: list[ast.SpecFile]):
        self.files = files
        self.symbols: dict[str, Symbol] = {}
        self.blocks: list[ast.Block] = []
        self.by_file: dict[str, list[Occurrence]] = {}
        for f in files:
            for st in f.statements:
                if isinstance(st, ast.Block):
                    self.blocks.append(st)
                    self.symbols.setdefault(st.name.text, Symbol(st.name.text, st.kind, st.name.span, st))
                elif isinstance(st, ast.Param):
                    self.symbols.setdefault(st.name.text, Symbol(st.name.text, "param", st.name.span, st))
            self.by_file[f.path] = list(occurrences(f))

    def at(self, file: str, line: int, col: int) -> Occurrence | None:
        """The occurrence under the cursor; the narrowest when spans nest (an import's whole statement)."""
        hits = [o for o in self.by_file.get(file, []) if contains(o.span, line, col)]
        if not hits:
            return None
        return min(hits, key=lambda o: (o.span.end_line - o.span.line, o.span.end_col - o.span.col))

    def block_named(self, name: str) -> ast.Block | None:
        s = self.symbols.get(name)
        return s.node if s is not None and isinstance(s.node, ast.Block) else None

    def block_at(self, span: Span) -> ast.Block | None:
        """The block whose text holds `span` (where an inherited field was written)."""
        for b in self.blocks:
            if b.span.file == span.file and (b.span.line, b.span.col) <= (span.line, span.col) <= (b.span.end_line, b.span.end_col):
                return b
        return None

    def field_span(self, block_name: str, key: str) -> Span | None:
        """Where `key` is written for a block: its own, else the nearest base's."""
        seen: set[str] = set()
        b = self.block_named(block_name)
        while b is not None and b.name.text not in seen:
            seen.add(b.name.text)
            for item in b.items:
                if isinstance(item, (ast.Field,)) and item.key.text == key:
                    return item.key.span
                if isinstance(item, ast.Stage) and item.name.text == key:
                    return item.name.span
            b = self.block_named(b.base.text) if b.base is not None else None
        return None

    def definition_of(self, occ: Occurrence) -> Span | None:
        if occ.role == "key":
            owner = occ.owner or occ.block
            if owner is None:
                return None
            if occ.owner is None:  # a key in its own block: its definition is in a base, if any
                b = self.block_named(owner)
                base = b.base.text if b is not None and b.base is not None else None
                return self.field_span(base, occ.name) if base else None
            return self.field_span(owner, occ.name)
        s = self.symbols.get(occ.name)
        return s.span if s is not None else None

    def references(self, name: str) -> list[Span]:
        """Every place `name` is defined or named, across the loaded files."""
        out = []
        for occs in self.by_file.values():
            out += [o.span for o in occs if o.name == name and o.role in ("def", "ref", "base")]
        return out

    def names(self, kind: str | None = None) -> list[Symbol]:
        return [s for s in self.symbols.values() if kind is None or s.kind == kind]


__all__ = ["Index", "Occurrence", "Symbol", "contains", "occurrences"]
