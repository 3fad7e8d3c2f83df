"""Diagnostics: one type for the parser, the checker and the linter.

A diagnostic is data (severity, stable code, message, a primary span, secondary
labels, notes and help), rendered in one place, like ruff or rustc:

    specs/x.ct:12:9: CT104 unknown link 'wan2'
       |
    12 |   link = wan2
       |          ^^^^ not defined
       |
       = help: did you mean 'wan'?

Everything here is plain Python: the linter imports it and must stay fast.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


@dataclass(frozen=True, order=True)
class Span:
    """A region of one source file; lines and columns start at 1, end is exclusive."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int

    @staticmethod
    def point(file: str, line: int, col: int) -> "Span":
        return Span(file, line, col, line, col + 1)

    def to_json(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }


@dataclass(frozen=True)
class Label:
    span: Span
    text: str = ""


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    span: Span | None
    severity: Severity = Severity.ERROR
    label: str = ""
    secondary: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None

    def sort_key(self):
        s = self.span
        return (s.file, s.line, s.col, self.code) if s else ("", 0, 0, self.code)

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "span": self.span.to_json() if self.span else None,
            "label": self.label,
            "secondary": [{"span": l.span.to_json(), "text": l.text} for l in self.secondary],
            "notes": list(self.notes),
            "help": self.help,
        }


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A hint naming the closest candidate, or None."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    return f"did you mean '{close[0]}'?" if close else None


class Sources:
    """The text of every file read, so that diagnostics can quote it."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}

    def add(self, file: str, text: str) -> None:
        self._lines[file] = text.splitlines()

    def line(self, file: str, n: int) -> str | None:
        lines = self._lines.get(file)
        if lines is None or not 1 <= n <= len(lines):
            return None
        return lines[n - 1]

    def text(self, file: str) -> str | None:
        lines = self._lines.get(file)
        return None if lines is None else "\n".join(lines)


def _underline(src: str, span: Span, mark: str, text: str, pad: str) -> str:
    end_col = span.end_col if span.end_line == span.line else len(src) + 1
    start = max(span.col, 1)
    stop = end_col if end_col > start else start + 1
    stop = min(stop, max(len(src) + 1, start + 1))
    under = " " * (start - 1) + mark * (stop - start)
    return f"{pad} | {under}" + (f" {text}" if text else "")


_MAX_EXCERPT = 160  # characters of one source line shown in an excerpt


def _window(src: str, spans: Sequence[Span], anchor: Span | None = None) -> tuple[str, int]:
    """A long source line cut down around `anchor` (or the first label): (text, columns removed at the left)."""
    if len(src) <= _MAX_EXCERPT:
        return src, 0
    first = anchor.col if anchor is not None else min(s.col for s in spans)
    start = max(0, first - 1 - 40)
    text = src[start : start + _MAX_EXCERPT]
    if start + _MAX_EXCERPT < len(src):
        text += "..."
    if start > 0:
        text = "..." + text
        return text, start - 3
    return text, 0


def _shifted(span: Span, shift: int) -> Span:
    if not shift:
        return span
    return Span(span.file, span.line, span.col - shift, span.end_line, span.end_col - shift)


def render_text(diag: Diagnostic, sources: Sources, color: bool = False) -> str:
    """Render one diagnostic the way ruff does, with excerpts for every span.

    Labels on the same source line share one copy of it; labels in another file
    get a `:::` line naming where they are.
    """
    sev = diag.severity.value
    head_code = diag.code if sev == "error" else f"{diag.code} [{sev}]"
    where = f"{diag.span.file}:{diag.span.line}:{diag.span.col}: " if diag.span else ""
    head = f"{where}{head_code} {diag.message}"
    if color:
        tint = {"error": "31", "warning": "33", "info": "36"}[sev]
        head = f"\x1b[1m{where}\x1b[{tint}m{head_code}\x1b[0m\x1b[1m {diag.message}\x1b[0m"
    labels: list[tuple[Span, str, str]] = []
    if diag.span:
        labels.append((diag.span, "^", diag.label))
    labels += [(l.span, "-", l.text) for l in diag.secondary]
    shown = [(s, m, t) for s, m, t in labels if sources.line(s.file, s.line) is not None]
    gutter = max([len(str(s.line)) for s, _, _ in shown] or [1])
    pad = " " * gutter
    out = [head]
    body: list[str] = []
    groups: dict[tuple[str, int], list[tuple[Span, str, str]]] = {}
    for item in shown:
        groups.setdefault((item[0].file, item[0].line), []).append(item)
    primary_file = diag.span.file if diag.span else None
    # the primary file first, then the others in order of appearance; lines in order
    files = list(dict.fromkeys(f for f, _ in groups))
    rank = {f: (f != primary_file, i) for i, f in enumerate(files)}
    for (file, line), items in sorted(groups.items(), key=lambda kv: (rank[kv[0][0]], kv[0][1])):
        src = (sources.line(file, line) or "").replace("\t", " ")
        primary = next((span for span, mark, _ in items if mark == "^"), None)
        src, shift = _window(src, [span for span, _, _ in items], primary)
        if file != primary_file:
            first = items[0][0]
            body.append(f"{pad} ::: {file}:{first.line}:{first.col}")
        body.append(f"{str(line).rjust(gutter)} | {src}")
        for span, mark, text in sorted(items, key=lambda item: item[0].col):
            body.append(_underline(src, _shifted(span, shift), mark, text, pad))
    if body:
        out.append(f"{pad} |")
        out += body
        out.append(f"{pad} |")
    for note in diag.notes:
        out.append(f"{pad} = note: {note}")
    if diag.help:
        out.append(f"{pad} = help: {diag.help}")
    return "\n".join(out)


def render_concise(diag: Diagnostic) -> str:
    s = diag.span
    where = f"{s.file}:{s.line}:{s.col}: " if s else ""
    return f"{where}{diag.code} {diag.message}"


def summary_line(diags: Sequence[Diagnostic]) -> str:
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    warnings = sum(1 for d in diags if d.severity is Severity.WARNING)
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' * (errors != 1)}")
    if warnings:
        parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return "Found " + " and ".join(parts) + "." if parts else "All checks passed."


def render_json(diags: Sequence[Diagnostic]) -> str:
    return json.dumps(
        {"version": 1, "diagnostics": [d.to_json() for d in diags]}, indent=2, sort_keys=True
    )


def sort_diagnostics(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    unique: dict[tuple, Diagnostic] = {}
    for d in diags:
        unique.setdefault((d.code, d.span, d.message), d)
    return sorted(unique.values(), key=Diagnostic.sort_key)


@dataclass
class DiagnosticSink:
    """Collects diagnostics; phases keep going after an error."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diag: Diagnostic) -> None:
        self.items.append(diag)

    def error(self, code: str, message: str, span: Span | None, **kw) -> None:
        self.items.append(Diagnostic(code, message, span, Severity.ERROR, **kw))

    def warning(self, code: str, message: str, span: Span | None, **kw) -> None:
        self.items.append(Diagnostic(code, message, span, Severity.WARNING, **kw))

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.items)
