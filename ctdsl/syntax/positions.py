"""Where a Lark token or tree sits in its file, as a `Span` (lines and columns from 1, end exclusive).

Positions come from Lark's offsets into the text, counted into lines by the one
notion of a line (`ctdsl.diagnostics.lines`), never from Lark's own line and
column numbers: Lark counts lines at LF only, where a line also ends at a lone
CR (an editor's line, and the grammar's newline).
"""

from __future__ import annotations

from lark import Token

from ctdsl.diagnostics import Span
from ctdsl.diagnostics.lines import LineIndex


class Positions:
    """Spans in one file's text."""

    def __init__(self, file: str, text: str | LineIndex) -> None:
        self.file = file
        self.index = text if isinstance(text, LineIndex) else LineIndex(text)

    def between(self, start: int, end: int) -> Span:
        """The span from offset `start` to offset `end` (exclusive); an empty one covers one column."""
        line, col = self.index.position(start)
        if end <= start:
            return Span(self.file, line, col, line, col + 1)
        end_line, end_col = self.index.position(end)
        return Span(self.file, line, col, end_line, end_col)

    def at(self, offset: int) -> Span:
        """The one character at `offset`."""
        return self.between(offset, offset)

    def span(self, item) -> Span:
        """The span of a token, or of a tree from its positions (the first character when it has none)."""
        if isinstance(item, Token):
            if item.start_pos is None:
                return Span(self.file, 1, 1, 1, 2)
            return self.between(item.start_pos, item.end_pos if item.end_pos is not None else item.start_pos)
        meta = item.meta
        if getattr(meta, "empty", True):
            return Span(self.file, 1, 1, 1, 2)
        return self.between(meta.start_pos, meta.end_pos)

    def end_of(self, item) -> int | None:
        """The offset just after a token or a tree, or None when it has no position."""
        if isinstance(item, Token):
            return item.end_pos
        meta = getattr(item, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return None
        return meta.end_pos


__all__ = ["Positions"]
