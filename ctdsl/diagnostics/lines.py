"""Lines and columns: the one notion of a position every part of ctdsl shares.

A line ends at LF, at CR LF, or at a CR that no LF follows, and nowhere else.
These are the line ends of the Language Server Protocol, so an editor and ctdsl
count the same lines; they are what the grammar's newline token matches and
where a comment or a string ends. A form feed, a vertical tab, U+0085 (NEL),
U+2028 (LINE SEPARATOR), U+2029 (PARAGRAPH SEPARATOR) and the file, group and
record separators (U+001C..U+001E) are characters inside a line, although
Python's `str.splitlines()` breaks at every one of them: nothing in ctdsl may
split a spec with it, or a diagnostic and the fix it offers would count lines
differently (a fix would rewrite the line after the one flagged).

Columns count Unicode code points from 1; a span's end is exclusive. So do the
parser's spans, the diagnostics, SARIF (`columnKind: unicodeCodePoints`), the
excerpts and the fixer. An LSP client counts UTF-16 code units by default, or
UTF-8 bytes or code points if both sides agree (`positionEncoding`):
`LineIndex.units` and `LineIndex.column` convert, and nothing else does.

`LineIndex` is built once per text; offsets are indices into that `str`.
"""

from __future__ import annotations

import re
from bisect import bisect_right

LINE_END = re.compile(r"\r\n|\r|\n")
ENCODINGS = ("utf-16", "utf-8", "utf-32")  # an LSP position's units: UTF-16 code units, UTF-8 bytes, code points


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their ends; a last line end does not start another line."""
    if not text:
        return []
    lines = LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()
    return lines


def _width(text: str, encoding: str) -> int:
    """How many units of `encoding` `text` takes."""
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


class LineIndex:
    """Where each line of one text starts and ends, for offsets <-> (line, column)."""

    __slots__ = ("text", "_starts", "_ends")

    def __init__(self, text: str) -> None:
        self.text = text
        starts, ends = [0], []
        for m in LINE_END.finditer(text):
            ends.append(m.start())
            starts.append(m.end())
        ends.append(len(text))
        self._starts = starts
        self._ends = ends

    @property
    def count(self) -> int:
        """The number of lines (as `split_lines` counts them)."""
        n = len(self._starts)
        if not self.text:
            return 0
        return n - 1 if self._starts[-1] == len(self.text) else n

    def line(self, n: int) -> str | None:
        """Line `n` (from 1) without its end, or None past the last line."""
        if not 1 <= n <= self.count:
            return None
        return self.text[self._starts[n - 1] : self._ends[n - 1]]

    def lines(self) -> list[str]:
        return [self.text[a:b] for a, b in zip(self._starts[: self.count], self._ends)]

    def position(self, offset: int) -> tuple[int, int]:
        """The (line, column), both from 1, of `offset` (0 <= offset <= len(text))."""
        offset = max(0, min(offset, len(self.text)))
        i = bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def offset(self, line: int, col: int) -> int | None:
        """The offset of (line, col), or None when the line does not have that column.

        A column may be one past the line's last character (the end of the line),
        and line count + 1, column 1, is the end of a text that ends with a line end.
        """
        if not 1 <= line <= len(self._starts) or col < 1:
            return None
        start = self._starts[line - 1]
        if start + col - 1 > self._ends[line - 1]:
            return None
        return start + col - 1

    def line_span(self, n: int) -> tuple[int, int]:
        """The offsets of line `n`'s first character and of its end (before the line end)."""
        return self._starts[n - 1], self._ends[n - 1]

    # ---- LSP ------------------------------------------------------------------------

    def units(self, line: int, col: int, encoding: str = "utf-16") -> int:
        """Column `col` of `line` as an LSP character offset: units of `encoding` before it."""
        text = self.line(line) or ""
        return _width(text[: max(col - 1, 0)], encoding)

    def column(self, line: int, units: int, encoding: str = "utf-16") -> int:
        """An LSP character offset on `line` as a column from 1 (a position inside a character rounds down)."""
        text = self.line(line) or ""
        if encoding == "utf-32":
            return min(units, len(text)) + 1
        seen, col = 0, 0
        while col < len(text):
            step = _width(text[col], encoding)
            if seen + step > units:
                break
            seen += step
            col += 1
        return col + 1


__all__ = ["ENCODINGS", "LINE_END", "LineIndex", "split_lines"]
