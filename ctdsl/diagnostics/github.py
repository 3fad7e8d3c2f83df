"""GitHub Actions workflow commands: one per finding, which the runner turns into
an annotation on the pull request.

    ::warning file=specs/x.ct,line=12,col=3,endLine=12,endColumn=12,title=ctdsl (CTL003)::message

Columns are left out for a span over several lines, as GitHub requires; `%` and
newlines, and in properties `:` and `,`, are escaped; every other control character
(ESC, BEL, C1, bidi overrides) is shown as a visible one (`printable`), so that a
name or an excerpt never writes an escape sequence into the CI log. Notes and help
follow the message on lines of their own.
"""

from __future__ import annotations

from ctdsl.diagnostics.core import Diagnostic, Report, Severity
from ctdsl.diagnostics.sarif import full_message
from ctdsl.diagnostics.terminal import printable

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return printable(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic, file: str | None) -> str:
    """The workflow command for one finding; `file` names the file of one without a span."""
    props = []
    s = d.span
    if s is not None:
        file = s.file
    if file:
        props.append(f"file={_escape_property(file)}")
    if s is not None:
        one_line = s.end_line == s.line
        props.append(f"line={s.line}")
        if one_line:
            props.append(f"col={s.col}")
        props.append(f"endLine={s.end_line}")
        if one_line:
            props.append(f"endColumn={max(s.end_col, s.col + 1)}")
    props.append(f"title={_escape_property(f'ctdsl ({d.code})')}")
    return f"::{LEVEL[d.severity]} {','.join(props)}::{_escape_data(full_message(d))}"


def render_github(report: Report) -> str:
    return "".join(annotation(d, report.file_of(d)) + "\n" for d in report.all())


__all__ = ["annotation", "render_github"]
