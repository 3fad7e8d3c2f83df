"""The diagnostic as data: one type for the parser, the checker and the linter.

A diagnostic has a severity, a stable code, a message that makes sense on its own,
a primary span with its label, secondary labels, notes and help. A `Report` is
what one command found: the diagnostics, the text of the files they quote, the
files it was given and those it could not read. The renderers (`text`, `report`,
`sarif`, `github`) only read these.

Everything here is plain Python: the linter imports it and must stay fast.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Sequence

from ctdsl.diagnostics.lines import LineIndex


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
    """The text of every file read, so that diagnostics can quote it.

    Lines are counted as the parser counts them (`ctdsl.diagnostics.lines`): the
    excerpts, the fixer and the language server read a line here, and `text`
    gives a file's text exactly as it was read.
    """

    def __init__(self) -> None:
        self._index: dict[str, LineIndex] = {}

    def add(self, file: str, text: str) -> None:
        self._index[file] = LineIndex(text)

    def index(self, file: str) -> LineIndex | None:
        """The file's lines and offsets, or None for a file not read."""
        return self._index.get(file)

    def line(self, file: str, n: int) -> str | None:
        index = self._index.get(file)
        return None if index is None else index.line(n)

    def text(self, file: str) -> str | None:
        index = self._index.get(file)
        return None if index is None else index.text

    def files(self) -> list[str]:
        return list(self._index)

    def merge(self, other: "Sources") -> None:
        """Add the files of `other` not read here yet."""
        for file, index in other._index.items():  # noqa: SLF001 - the same class
            self._index.setdefault(file, index)


def summary_line(diags: Sequence[Diagnostic]) -> str:
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    warnings = sum(1 for d in diags if d.severity is Severity.WARNING)
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' * (errors != 1)}")
    if warnings:
        parts.append(f"{warnings} warning{'s' * (warnings != 1)}")
    return "Found " + " and ".join(parts) + "." if parts else "All checks passed."


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


@dataclass
class Report:
    """What one command found, ready to render in any format.

    `unreadable` holds a CT001 diagnostic (without a span) for each file given that
    could not be read: machine formats list them after the findings, the text format
    counts them in its summary (the command says so on stderr). `origin` names the
    file given for each diagnostic without a span. `suppressed` counts findings
    silenced by comments (lint only). `tool` is the command, for SARIF's tool name.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: Sources = field(default_factory=Sources)
    files: list[str] = field(default_factory=list)  # the files given, as shown
    unreadable: list[Diagnostic] = field(default_factory=list)
    origin: dict[Diagnostic, str] = field(default_factory=dict)
    suppressed: int = 0
    tool: str = "ctdsl"
    exit_code: int | None = None  # the command's exit status, once decided (SARIF's invocation)

    def all(self) -> list[Diagnostic]:
        """The findings, then the files that could not be read."""
        return [*self.diagnostics, *self.unreadable]

    def file_of(self, d: Diagnostic) -> str | None:
        """The file a diagnostic is about: its span's, or for one without a span, the file given."""
        return d.span.file if d.span is not None else self.origin.get(d)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.all() if d.severity is severity)
