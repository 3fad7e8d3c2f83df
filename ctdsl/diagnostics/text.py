"""The human forms of one diagnostic: ruff-like text with excerpts, and one concise line.

    specs/x.ct:12:9: CT104 unknown link 'wan2'
       |
    12 |   link = wan2
       |          ^^^^ not defined
       |
       = help: did you mean 'wan'?
"""

from __future__ import annotations

from typing import Sequence

from ctdsl.diagnostics.core import Diagnostic, Sources, Span
from ctdsl.diagnostics.terminal import printable


def _underline(src: str, span: Span, mark: str, text: str, pad: str) -> str:
    end_col = span.end_col if span.end_line == span.line else len(src) + 1
    start = max(span.col, 1)
    stop = end_col if end_col > start else start + 1
    stop = min(stop, max(len(src) + 1, start + 1))
    under = " " * (start - 1) + mark * (stop - start)
    return f"{pad} | {under}" + (f" {printable(text)}" if text else "")


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
    where = f"{printable(diag.span.file, one_line=True)}:{diag.span.line}:{diag.span.col}: " if diag.span else ""
    message = printable(diag.message)  # spec text in a message or an excerpt never reaches the terminal raw
    head = f"{where}{head_code} {message}"
    if color:
        tint = {"error": "31", "warning": "33", "info": "36"}[sev]
        head = f"\x1b[1m{where}\x1b[{tint}m{head_code}\x1b[0m\x1b[1m {message}\x1b[0m"
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
        src = printable((sources.line(file, line) or "").replace("\t", " "))
        primary = next((span for span, mark, _ in items if mark == "^"), None)
        src, shift = _window(src, [span for span, _, _ in items], primary)
        if file != primary_file:
            first = items[0][0]
            body.append(f"{pad} ::: {printable(file, one_line=True)}:{first.line}:{first.col}")
        body.append(f"{str(line).rjust(gutter)} | {src}")
        for span, mark, text in sorted(items, key=lambda item: item[0].col):
            body.append(_underline(src, _shifted(span, shift), mark, text, pad))
    if body:
        out.append(f"{pad} |")
        out += body
        out.append(f"{pad} |")
    for note in diag.notes:
        out.append(f"{pad} = note: {printable(note)}")
    if diag.help:
        out.append(f"{pad} = help: {printable(diag.help)}")
    return "\n".join(out)


def render_concise(diag: Diagnostic) -> str:
    s = diag.span
    where = f"{printable(s.file, one_line=True)}:{s.line}:{s.col}: " if s else ""
    return where + printable(f"{diag.code} {diag.message}")


__all__ = ["render_text", "render_concise"]
