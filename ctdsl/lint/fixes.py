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
diagnostic and the file's text; nothing else is read. Whether it is safe or
unsafe (a change of meaning, applied only with `--unsafe-fixes`) is its rule's
(`Rule.fix`, in the rule catalogue).

Positions are the parser's (`ctdsl.diagnostics.lines`: a line ends at LF, CR LF
or a lone CR; columns are code points). Each edit also carries the text it
replaces as the fix read it; `apply_fixes` refuses a fix whose text is not
there any more (the file changed since it was linted), rather than rewrite
something else.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ctdsl.diagnostics import Diagnostic
from ctdsl.diagnostics.lines import LineIndex
from ctdsl.lint.catalogue import RULES

_WRITE = re.compile(r"^write ([A-Za-z_][A-Za-z0-9_.]*) = (.+?)(?: \(or [^()]*\))?$")
_DIRECTIVE = re.compile(r"\s*#?\s*ctdsl:\s*ignore\[[^\]\r\n]*\]")


@dataclass(frozen=True)
class Edit:
    """Replace `line:col` to `end_line:end_col` (1-based, end exclusive), which reads `expect`, with `text`."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    expect: str


@dataclass(frozen=True)
class Fix:
    title: str
    file: str
    edits: tuple[Edit, ...]
    safe: bool = True  # False: a change of meaning, applied only with --unsafe-fixes


def _field_fix(d: Diagnostic, index: LineIndex) -> Fix | None:
    m = _WRITE.match(d.help or "")
    s = d.span
    if m is None or s is None or s.line != s.end_line:
        return None
    line = index.line(s.line)
    if line is None or not 1 <= s.col < s.end_col <= len(line) + 1:
        return None
    key, value = m.group(1).split(".")[-1], m.group(2)
    written = line[s.col - 1 : s.end_col - 1]
    if not re.fullmatch(rf"{re.escape(key)}\s*=\s*\S.*", written):
        return None
    return Fix(f"write {key} = {value}", s.file, (Edit(s.line, s.col, s.line, s.end_col, f"{key} = {value}", written),))


def _suppression_fix(d: Diagnostic, index: LineIndex) -> Fix | None:
    s = d.span
    if s is None or s.line != s.end_line:
        return None
    line = index.line(s.line)
    if line is None:
        return None
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
            return Fix("remove the unused suppression", s.file, (Edit(s.line, 1, s.line, len(line) + 1, new, line),))
        rest = ", ".join(c for c in codes if c != code)
        old = line[inner_start : m.end() - 1]
        return Fix(f"remove {code} from the suppression", s.file, (Edit(s.line, inner_start + 1, s.line, m.end(), rest, old),))
    return None


def fix_for(d: Diagnostic, text: str | LineIndex) -> Fix | None:
    """The fix of `d` in `text` (the text of d's file), or None when its rule has no fix or its help names no exact edit."""
    rule = RULES.get(d.code)
    if rule is None or rule.fix is None:
        return None
    index = text if isinstance(text, LineIndex) else LineIndex(text)
    if d.code == "CTL011":
        if not (d.message.startswith("unused suppression") or d.message.startswith("suppression names no code")):
            return None
        fix = _suppression_fix(d, index)
    else:
        fix = _field_fix(d, index)
    return None if fix is None else Fix(fix.title, fix.file, fix.edits, safe=rule.fix == "safe")


@dataclass
class Applied:
    """What `apply_fixes` did: the new text, the fixes applied, and those refused."""

    text: str
    applied: list[Fix] = field(default_factory=list)
    overlapping: list[Fix] = field(default_factory=list)  # left for the next run: they overlap one applied
    stale: list[Fix] = field(default_factory=list)  # refused: the text they replace is not there


def apply_fixes(text: str, fixes: list[Fix]) -> Applied:
    """`text` with `fixes` applied, in order; a fix overlapping one applied before is skipped,
    and a fix whose edits do not find the text they expect is refused."""
    index = LineIndex(text)
    out = Applied(text)
    spans: list[tuple[int, int, str]] = []
    for f in fixes:
        parts = []
        for e in f.edits:
            a, b = index.offset(e.line, e.col), index.offset(e.end_line, e.end_col)
            if a is None or b is None or b < a or text[a:b] != e.expect:
                parts = None
                break
            parts.append((a, b, e.text))
        if parts is None:
            out.stale.append(f)
            continue
        if any(a < y and x < b for a, b, _ in parts for x, y, _t in spans):
            out.overlapping.append(f)
            continue
        spans += parts
        out.applied.append(f)
    new = text
    for a, b, t in sorted(spans, reverse=True):
        new = new[:a] + t + new[b:]
    out.text = new
    return out


def _patch_lines(text: str) -> list[str]:
    """Lines as patch and git apply count them: ended by LF, a CR kept in its line."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff from `before` to `after` that patch and git apply take (lines counted at LF)."""
    return "".join(difflib.unified_diff(_patch_lines(before), _patch_lines(after), f"a/{path}", f"b/{path}"))


__all__ = ["Applied", "Edit", "Fix", "apply_fixes", "fix_for", "unified_diff"]
