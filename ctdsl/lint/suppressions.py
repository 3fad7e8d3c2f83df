"""Per-line suppressions: `# ctdsl: ignore[CTL003]` silences CTL003 on its own line.

A suppression names one or more lint codes, separated by commas or spaces:
`# ctdsl: ignore[CTL003, CTL007]`. It may follow other comment text
(`# deliberate: the study is about this  # ctdsl: ignore[CTL003]`). It applies to
findings whose primary location starts on the comment's line. A suppression that
suppresses nothing is itself a finding (CTL011), as is one that names no code,
an unknown code, or a checker code (checker errors cannot be suppressed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ctdsl.diagnostics import Span
from ctdsl.lint.context import scan_comments

_DIRECTIVE = re.compile(r"ctdsl:\s*ignore(\[([^\]\n]*)\]?)?")
_CODE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass
class Suppression:
    file: str
    line: int
    span: Span  # the `ctdsl: ignore[...]` text
    codes: dict[str, Span]  # code as written -> where it is written
    used: set[str] = field(default_factory=set)


def find_suppressions(file: str, text: str) -> list[Suppression]:
    out: list[Suppression] = []
    for line, (col, comment) in sorted(scan_comments(text).items()):
        for m in _DIRECTIVE.finditer(comment):
            start = col + m.start()
            span = Span(file, line, start, line, col + m.end())
            codes: dict[str, Span] = {}
            if m.group(2) is not None:
                inner_start = col + m.start(2)
                for cm in _CODE.finditer(m.group(2)):
                    c0 = inner_start + cm.start()
                    codes.setdefault(cm.group(0), Span(file, line, c0, line, c0 + len(cm.group(0))))
            out.append(Suppression(file, line, span, codes))
    return out


__all__ = ["Suppression", "find_suppressions"]
