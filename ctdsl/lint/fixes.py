"""Fixes: the findings whose help names one exact edit, as text edits.

Two kinds of help name an exact edit, and only these are fixed (by `ctdsl lint
--fix`, previewed by `--diff`, offered as quick fixes by the language server):

- `write KEY = VALUE` on a finding whose span is the field `KEY = ...` as
  written (CTL006, a rate 8x off): the field is replaced by `KEY = VALUE`. A
  parenthesised alternative after it (`(or 100 Gb/s)`) is the same figure in
  other units; the first one is written.
- an unused suppression (CTL011) whose span is a code in `ignore[...]`: the
  code is removed, and the whole `# ctdsl: ignore[...]` comment when it named
  only that code.

Help that offers a choice ("remove it, or use it", "if the figure is per bit")
is not an exact edit, and is left to the author. A fix is computed from the
diagnostic and the file's text; nothing else is read.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ctdsl.diagnostics import Diagnostic

_WRITE = re.compile(r"^write ([A-Za-z_][A-Za-z0-9_.]*) = (.+?)(?: \(or [^()]*\))?$")
_DIRECTIVE = re.compile(r"\s*#?\s*ctdsl:\s*ignore\[[^\]\n]*\]")


@dataclass(frozen=True)
class Edit:
    """Replace `line:col` to `end_line:end_col` (1-based, end exclusive) with `text`."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    file: str
    edits: tuple[Edit, ...]


def _field_fix(d: Diagnostic, lines: list[str]) -> Fix | None:
    m = _WRITE.match(d.help or "")
    s = d.span
    if m is None or s is None or s.line != s.end_line or not 1 <= s.line <= len(lines):
        return None
    key, value = m.group(1).split(".")[-1], m.group(2)
    written = lines[s.line - 1][s.col - 1 : s.end_col - 1]
    if not re.match(rf"{re.escape(key)}\s*=", written):
        return None
    return Fix(f"write {key} = {value}", s.file, (Edit(s.line, s.col, s.line, s.end_col, f"{key} = {value}"),))


def _suppression_fix(d: Diagnostic, lines: list[str]) -> Fix | None:
    s = d.span
    if s is None or s.line != s.end_line or not 1 <= s.line <= len(lines):
        return None
    line = lines[s.line - 1]
    for m in _DIRECTIVE.finditer(line):
        if not m.start() < s.col - 1 < m.end():
            continue
        inner_start = line.index("[", m.start()) + 1
        inner = line[inner_start : m.end() - 1]
        codes = [c for c in re.findall(r"[A-Za-z0-9_-]+", inner)]
        code = line[s.col - 1 : s.end_col - 1]
        if len(codes) <= 1:
            start, end = m.start(), m.end()
            before = line[:start]
            if "#" not in m.group(0) and before.rstrip().endswith("#"):  # `# note  # ctdsl: ...`
                start = len(before.rstrip()) - 1
            new = line[:start].rstrip() + line[end:]
            return Fix("remove the unused suppression", s.file, (Edit(s.line, 1, s.line, len(line) + 1, new),))
        rest = ", ".join(c for c in codes if c != code)
        return Fix(f"remove {code} from the suppression", s.file, (Edit(s.line, inner_start + 1, s.line, m.end(), rest),))
    return None


def fix_for(d: Diagnostic, text: str) -> Fix | None:
    """The fix of `d` in `text` (the text of d's file), or None when its help names no exact edit."""
    lines = text.splitlines()
    if d.code == "CTL011" and (d.message.startswith("unused suppression") or d.message.startswith("suppression names no code")):
        return _suppression_fix(d, lines)
    return _field_fix(d, lines)


def _offset(starts: list[int], line: int, col: int) -> int:
    return starts[line - 1] + col - 1


def apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, int]:
    """The text with `fixes` applied, and how many were; a fix overlapping one applied before is skipped."""
    starts, pos = [], 0
    for ln in text.splitlines(keepends=True) or [""]:
        starts.append(pos)
        pos += len(ln)
    starts.append(pos)
    spans: list[tuple[int, int, str]] = []
    applied = 0
    for f in fixes:
        parts = [(_offset(starts, e.line, e.col), _offset(starts, e.end_line, e.end_col), e.text) for e in f.edits]
        if any(a < y and x < b for a, b, _ in parts for x, y, _t in spans):
            continue
        spans += parts
        applied += 1
    out = text
    for a, b, t in sorted(spans, reverse=True):
        out = out[:a] + t + out[b:]
    return out, applied


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}")
    )


__all__ = ["Edit", "Fix", "apply_fixes", "fix_for", "unified_diff"]
