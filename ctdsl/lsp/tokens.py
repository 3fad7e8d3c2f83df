"""Semantic tokens: what each word of a document is, for an editor's colours.

A regular-expression scan finds comments, strings, numbers with their units,
operators and words; the index then says what each word is where the document
parses (a param, a block of some kind, a field, a stage), and the kinds and
statement keywords are keywords; the distribution named after `~` is a function
of the language's own (defaultLibrary). The result is LSP's relative encoding: five
integers per token (line delta, start delta, length, type, modifiers), with
lengths and starts in the position units agreed with the client (UTF-16 code
units by default), and lines counted as the parser counts them.
"""

from __future__ import annotations

import re

from ctdsl.check.distributions import KINDS as DIST_KINDS
from ctdsl.diagnostics.lines import split_lines
from ctdsl.language.enums import Collective, JitterKind, Operation, Payload
from ctdsl.language.schema import KINDS
from ctdsl.lsp.index import Index

TYPES = ["keyword", "class", "variable", "property", "number", "string", "comment", "operator", "enumMember", "type", "namespace", "function"]
MODIFIERS = ["declaration", "defaultLibrary"]
KEYWORDS = set(KINDS) | {"import", "param", "wan", "breakeven", "baseline", "target", "for", "search", "vs", "over", "on", "in", "lin", "log", "true", "false", "scenario", "observe", "of", "source", "fit"}
ENUMS = {str(v) for e in (Payload, Collective, JitterKind, Operation) for v in e}
_AFTER_TILDE = re.compile(r"~[ \t]*$")

_SCAN = re.compile(
    r"(?P<comment>#[^\n]*)"
    r"|(?P<string>\"[^\"\n]*\"?)"
    r"|(?P<number>\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(?:(?P<space>[ \t]*)(?P<unit>(?!(?:lin|log|in|vs|over)(?![A-Za-z]))[A-Za-z%\u00b5][A-Za-z0-9]*(?:/[A-Za-z][A-Za-z0-9]*)*))?"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<operator><->|->|\.\.|[-+*/^=:~])"
)


def _width(s: str, encoding: str) -> int:
    """The length of `s` in units of `encoding` (utf-16, utf-8 or utf-32)."""
    if encoding == "utf-32":
        return len(s)
    if encoding == "utf-8":
        return len(s.encode("utf-8", "surrogatepass"))
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _word_type(word: str, line: int, col: int, index: Index | None, file: str) -> tuple[str, int] | None:
    if word in KEYWORDS:
        return "keyword", 0
    if word.startswith("std.") or (word == "std"):
        return "namespace", 2
    if index is not None:
        occ = index.at(file, line, col)
        if occ is not None and occ.span.col == col:
            if occ.role in ("key",):
                return "property", 0
            if occ.role == "stage":
                return "property", 1
            s = index.symbols.get(occ.name)
            decl = 1 if occ.role == "def" else 0
            lib = 2 if s is not None and s.span.file.startswith("<std>") else 0
            if s is not None:
                return ("variable" if s.kind == "param" else "class"), decl | lib
    if word in ENUMS:
        return "enumMember", 0
    return None


def semantic_tokens(text: str, index: Index | None, file: str, encoding: str = "utf-16") -> list[int]:
    data: list[int] = []
    prev_line, prev_start = 0, 0

    def push(line0: int, start: int, length: int, kind: str, mods: int = 0) -> None:
        nonlocal prev_line, prev_start
        delta_line = line0 - prev_line
        delta_start = start - prev_start if delta_line == 0 else start
        data.extend([delta_line, delta_start, length, TYPES.index(kind), mods])
        prev_line, prev_start = line0, start

    def _utf16(s: str) -> int:
        return _width(s, encoding)

    for n, line in enumerate(split_lines(text)):
        for m in _SCAN.finditer(line):
            start = _utf16(line[: m.start()])
            if m.group("comment") is not None:
                push(n, start, _utf16(m.group(0)), "comment")
            elif m.group("string") is not None:
                push(n, start, _utf16(m.group(0)), "string")
            elif m.group("number") is not None:
                push(n, start, _utf16(m.group("number")), "number")
                if m.group("unit"):
                    ustart = _utf16(line[: m.start("unit")])
                    push(n, ustart, _utf16(m.group("unit")), "type")
            elif m.group("word") is not None:
                word = m.group("word")
                col = m.start() + 1
                if word in DIST_KINDS and _AFTER_TILDE.search(line[: m.start()]):
                    push(n, start, _utf16(word), "function", 2)
                    continue
                for part in word.split("."):
                    t = _word_type(part if not word.startswith("std.") else word, n + 1, col, index, file)
                    if t is not None:
                        push(n, _utf16(line[: col - 1]), _utf16(word if word.startswith("std.") else part), *t)
                    if word.startswith("std."):
                        break
                    col += len(part) + 1
            elif m.group("operator") is not None:
                push(n, start, _utf16(m.group(0)), "operator")
    return data


__all__ = ["MODIFIERS", "TYPES", "semantic_tokens"]
