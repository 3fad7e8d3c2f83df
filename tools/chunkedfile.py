"""Chunked test files: many small specs in one file, each with the diagnostics it must give.

After starlark-go's internal/chunkedfile. A file is split into chunks at lines
that are exactly `---`; each chunk is checked on its own, as a spec named
`spec.ct` in the chunk file's directory (so `import "imports/x.ct"` finds files
next to it). Line numbers are counted from the chunk's first line.

Expectations are comments that start with `#!`:

    link l { bandwidth = 5 ms; latency = 1 us }   #! CT202:22 "must be data rate"

- at the end of a line: a diagnostic with that code whose primary span starts
  on this line; `:COL` also fixes its column; each double-quoted text after it
  must appear in the finding itself: one of its message, label, secondary labels'
  texts, notes or help (`finding_text`, from the diagnostic's JSON form), never
  the printed source excerpt, which holds the spec's own text (a comment saying
  what the rule should find would otherwise pass for the finding);
- on a line of its own: a diagnostic with that code anywhere, in another file,
  or with no location at all (e.g. a limit on the whole topology).

One line may carry several expectations: `#! CT201 #! CT202`. A chunk passes
when every expectation is met and every diagnostic was expected, so a chunk
also pins down that one mistake gives one message. Text before the first `---`
is a header, not a chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SEPARATOR = "---"
_EXPECT = re.compile(r'#!\s*(CTL?\d{3})(?::(\d+))?((?:\s+"[^"]*")*)')  # checker and lint codes
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class Expectation:
    code: str
    line: int | None  # None: anywhere
    col: int | None = None
    texts: tuple[str, ...] = ()

    def describe(self) -> str:
        where = "anywhere" if self.line is None else f"line {self.line}" + (f":{self.col}" if self.col else "")
        return f"{self.code} at {where}" + "".join(f' with "{t}"' for t in self.texts)


@dataclass
class Chunk:
    file: Path
    index: int  # 1-based position in the file
    first_line: int  # line of the chunk's first line in the file
    text: str
    expectations: list[Expectation] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.file.stem}#{self.index}@{self.first_line}"

    @property
    def codes(self) -> set[str]:
        return {e.code for e in self.expectations}


def parse_expectations(text: str) -> list[Expectation]:
    out: list[Expectation] = []
    for n, line in enumerate(text.splitlines(), start=1):
        at = line.find("#!")
        if at < 0:
            continue
        own_line = not line[:at].strip()
        for m in _EXPECT.finditer(line[at:]):
            code, col, wants = m.group(1), m.group(2), tuple(_QUOTED.findall(m.group(3)))
            out.append(Expectation(code, None if own_line else n, int(col) if col else None, wants))
    return out


def read_chunks(path: Path) -> list[Chunk]:
    lines = path.read_text(encoding="utf-8").split("\n")
    chunks: list[Chunk] = []
    current: list[str] | None = None
    start = 0
    for n, line in enumerate(lines, start=1):
        if line.rstrip("\r") == SEPARATOR:
            if current is not None:
                chunks.append(_chunk(path, len(chunks) + 1, start, current))
            current, start = [], n + 1
        elif current is not None:
            current.append(line)
    if current is not None:
        chunks.append(_chunk(path, len(chunks) + 1, start, current))
    return chunks


def _chunk(path: Path, index: int, start: int, lines: list[str]) -> Chunk:
    text = "\n".join(lines).rstrip("\n") + "\n"
    return Chunk(path, index, start, text, parse_expectations(text))


SPEC_NAME = "spec.ct"  # the name each chunk is checked under, in the chunk file's directory


def finding_text(diag) -> str:
    """The words of a finding, as its JSON form (`Diagnostic.to_json`, what `--format json` prints) has them:
    message, label, secondary labels' texts, notes and help, one a line; no source excerpt, no file name."""
    j = diag.to_json()
    parts = [j["message"], j["label"], *(s["text"] for s in j["secondary"]), *j["notes"], j["help"] or ""]
    return "\n".join(p for p in parts if p)


def mismatches(chunk: Chunk, diagnostics, render=finding_text, spec_file: str = SPEC_NAME) -> list[str]:
    """What differs between the chunk's expectations and `diagnostics` (empty: it passes).

    `render(diag) -> str` gives the text that quoted expectations search: the finding's own words
    (`finding_text`) unless a caller says otherwise. A quoted text (one line) lies within one of them.
    """
    problems: list[str] = []
    remaining = list(diagnostics)
    # located expectations first, so that an `anywhere` one does not take their match
    ordered = sorted(chunk.expectations, key=lambda e: e.line is None)
    for exp in ordered:
        found = None
        for d in remaining:
            if d.code != exp.code:
                continue
            if exp.line is not None:
                if d.span is None or d.span.file != spec_file or d.span.line != exp.line:
                    continue
                if exp.col is not None and d.span.col != exp.col:
                    continue
            text = render(d) if exp.texts else ""
            if any(want not in text for want in exp.texts):
                continue
            found = d
            break
        if found is None:
            near = [f"{d.code} at {_where(d)}" for d in diagnostics if d.code == exp.code]
            problems.append(f"expected {exp.describe()}" + (f"; got {', '.join(near)}" if near else ""))
        else:
            remaining.remove(found)
    # a diagnostic repeated at an expected place is not a surprise
    expected_at = {(e.code, e.line) for e in chunk.expectations}
    for d in remaining:
        line = d.span.line if d.span is not None and d.span.file == spec_file else None
        if (d.code, line) in expected_at or (d.code, None) in expected_at:
            continue
        problems.append(f"unexpected {d.code} at {_where(d)}: {d.message}")
    return problems


def _where(d) -> str:
    if d.span is None:
        return "no location"
    return f"{d.span.file}:{d.span.line}:{d.span.col}"


__all__ = ["Chunk", "Expectation", "read_chunks", "parse_expectations", "finding_text", "mismatches", "SEPARATOR",
           "SPEC_NAME"]
