"""Text for a terminal: control characters shown, never sent.

Spec text (names, labels, a source line in an excerpt) may hold ESC and other
control characters: written raw, `\\x1b[31m` recolours the terminal and worse
sequences can retitle it or move the cursor. `printable` replaces each one by a
single visible character, so that columns (and an excerpt's carets) stay where
they were: C0 controls and DEL by their Unicode control pictures (ESC is
U+241B), C1 controls and the bidirectional overrides (which reorder what a
reader sees) by U+FFFD. Tab and newline are kept.
"""

from __future__ import annotations

import re

_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _picture(m: re.Match) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)
    if c == 0x7F:
        return "\u2421"
    return "\ufffd"


def printable(text: str) -> str:
    """`text` with every control character (but tab and newline) replaced by one visible character."""
    return _BAD.sub(_picture, text)


__all__ = ["printable"]
