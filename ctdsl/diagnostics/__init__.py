"""Diagnostics: one type for the parser, the checker and the linter, and one renderer.

- `core`: Severity, Span, Label, Diagnostic, Sources, DiagnosticSink, Report.
- `text`: one diagnostic as ruff-like text with excerpts, or one concise line.
- `report`: a whole report in any of the five formats (text, concise, json,
  sarif, github), for `ctdsl check` and `ctdsl lint` alike.
- `rules`: what a renderer knows about a code; `sarif`, `github`: those formats.

A base module: it imports nothing of ctdsl above ctdsl.codes. The linter passes
its rules in as data (`RuleInfo`).
"""

from ctdsl.diagnostics.core import (
    Diagnostic,
    DiagnosticSink,
    Label,
    Report,
    Severity,
    Sources,
    Span,
    did_you_mean,
    sort_diagnostics,
    summary_line,
)
from ctdsl.diagnostics.formats import FORMATS, Format
from ctdsl.diagnostics.report import render, render_json
from ctdsl.diagnostics.rules import RuleInfo
from ctdsl.diagnostics.text import render_concise, render_text

__all__ = [
    "Diagnostic",
    "DiagnosticSink",
    "FORMATS",
    "Format",
    "Label",
    "Report",
    "RuleInfo",
    "Severity",
    "Sources",
    "Span",
    "did_you_mean",
    "render",
    "render_concise",
    "render_json",
    "render_text",
    "sort_diagnostics",
    "summary_line",
]
