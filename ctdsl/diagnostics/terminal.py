"""Text for a terminal: control characters shown, never sent.

Spec text (names, labels, a source line in an excerpt) may hold ESC and other
control characters: written raw, `\\x1b[31m` recolours the terminal and worse
sequences can retitle it or move the cursor. `printable` replaces each one by a
single visible character, so that columns (and an excerpt's carets) stay where
they were: C0 controls and DEL by their Unicode control pictures (ESC is
U+241B), C1 controls, the line and paragraph separators (U+2028, U+2029: not
line ends in a spec, docs/language.md, but some viewers break a line there) and
the bidirectional overrides (which reorder what a reader sees) by U+FFFD. Tab
and newline are kept.

`command_safe` (below) keeps a CI runner from obeying a line of output as a
command: the CLI writes all its human output through it (`CommandSafe`).
"""

from __future__ import annotations

import re
from typing import TextIO

_BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _picture(m: re.Match) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)
    if c == 0x7F:
        return "\u2421"
    return "\ufffd"


_BAD_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str, one_line: bool = False) -> str:
    """`text` with every control character (but tab and newline) replaced by one visible character;
    with `one_line` (a file name), tab and newline as well."""
    return (_BAD_IN_A_LINE if one_line else _BAD).sub(_picture, text)




# ---- CI logs ----------------------------------------------------------------------------------
#
# A CI runner reads the output of a step line by line (a line ends at LF, CR LF or a
# lone CR) and obeys some lines as commands. GitHub Actions takes a line whose text,
# after leading white space, starts with `::` as a workflow command (`::error ...::`,
# `::add-mask::`, `::stop-commands::` ...), and a line holding `##[` anywhere as one in
# the older form (`##[error]...`); Azure Pipelines reads `##vso[` the same way and
# TeamCity `##teamcity[`. Text from a spec (a file name, a spec line in an excerpt, a
# label) may hold either. `command_safe` puts a WORD JOINER (U+2060: no width, not
# white space to the runner) before such a line's `::` and between the two `#`s, so
# that the line reads exactly as before and is never obeyed. `CommandSafe` does the
# same to a stream, one write at a time.

_JOINER = "\u2060"
# white space as the runner trims it (.NET char.IsWhiteSpace), and as Python's str.isspace does
_SPACE = "\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_COMMAND_AT_START = re.compile(rf"\A([{_SPACE}]*)(?=::)")
_COMMAND_AT_LINE = re.compile(rf"(?<=[\r\n])([{_SPACE}]*)(?=::)")
_LEGACY = re.compile(r"#(?=#[A-Za-z]*\[)")
_OPEN_START = re.compile(rf"[{_SPACE}]*:?")  # a line's start that may still become `::`
_OPEN_LEGACY = re.compile(r"##?[A-Za-z]{0,32}\Z")  # a line's end that may still become `##[` or `##vso[`


def _encode(text: str, at_start: bool) -> str:
    if at_start:
        text = _COMMAND_AT_START.sub(lambda m: m.group(1) + _JOINER, text, count=1)
    text = _COMMAND_AT_LINE.sub(lambda m: m.group(1) + _JOINER, text)
    return _LEGACY.sub("#" + _JOINER, text)


def command_safe(text: str) -> str:
    """`text` (one or more lines) with no line a CI runner would obey as a command."""
    return _encode(text, True)


class CommandSafe:
    """A text stream that writes through `command_safe`, one write at a time.

    A write may end in the middle of what could become a command (a line's white
    space, a lone `:`, a `#` or `##vso`): that much is held back until the next
    write, or `release()`. Everything else (isatty, fileno, encoding, buffer)
    is the wrapped stream's; `raw` is the wrapped stream, for output that must
    stay byte-exact (data formats, a patch, the language server's protocol).
    """

    def __init__(self, stream: TextIO) -> None:
        self.raw = stream
        self._held = ""
        self._at_start = True  # the held text (or the next write) starts a line

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        data = self._held + s
        end = max(data.rfind("\n"), data.rfind("\r"))
        last_at_start = self._at_start if end < 0 else True
        last = data[end + 1 :]
        if last_at_start and _OPEN_START.fullmatch(last):
            held, held_at_start = last, True
        else:
            m = _OPEN_LEGACY.search(last)
            held, held_at_start = (last[m.start() :], False) if m else ("", None)
        out = data[: len(data) - len(held)]
        if out:
            self.raw.write(_encode(out, self._at_start))
        self._held = held
        if held_at_start is not None:
            self._at_start = held_at_start
        elif out:
            self._at_start = out.endswith(("\n", "\r"))
        return len(s)

    def release(self) -> None:
        """Write what is held back: no more text follows it."""
        if self._held:
            self.raw.write(_encode(self._held, self._at_start))
            self._held = ""
            self._at_start = True

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def json_command_safe(text: str) -> str:
    """A JSON document (or a piece of one made of whole values) in which no line holds `##[` or `##vso[`.

    JSON is data and is written as it is, but on stdout it lands in a CI log too,
    where a runner obeys `##[...]` and `##vso[...]` anywhere in a line; a label or a
    file name puts them in a string. A `#` occurs in JSON only inside a string, where
    `\\u0023` is JSON's own way of writing it: each `#` that follows a `#` is written
    so, and the document parses to the same value. (A `::` cannot start a line of
    JSON: a line break in a string is written `\\n`.)
    """
    return text.replace("##", "#\\u0023")


__all__ = ["CommandSafe", "command_safe", "json_command_safe", "printable"]
