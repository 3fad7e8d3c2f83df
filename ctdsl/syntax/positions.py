"""Where a Lark token or tree sits in its file, as a `Span` (lines and columns from 1, end exclusive)."""

from __future__ import annotations

from lark import Token

from ctdsl.diagnostics import Span


def span_of(file: str, item) -> Span:
    """The span of a token, or of a tree from its positions (the first character when it has none)."""
    if isinstance(item, Token):
        return Span(file, item.line, item.column, item.end_line or item.line, item.end_column or item.column + 1)
    meta = item.meta
    if getattr(meta, "empty", True):
        return Span(file, 1, 1, 1, 2)
    return Span(file, meta.line, meta.column, meta.end_line, meta.end_column)
