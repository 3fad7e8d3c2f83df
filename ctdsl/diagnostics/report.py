"""A whole report in one of five formats: text, concise, json, sarif, github.

- text: ruff-like, a source excerpt with carets for each finding, then a summary.
- concise: one line per finding, `path:line:col: CODE message`.
- json: the findings as data (schema: ctdsl/diagnostics/output.schema.json,
  described in docs/ci.md).
- sarif: SARIF 2.1.0 for code scanning (`ctdsl.diagnostics.sarif`).
- github: one GitHub Actions workflow command per finding (`ctdsl.diagnostics.github`).

`ctdsl check` and `ctdsl lint` both render here; what differs is the report and
the rules they pass. Every format is deterministic: the report's order is kept
(the commands sort it), and JSON keys are sorted.
"""

from __future__ import annotations

import json
from typing import Iterable

from ctdsl.diagnostics.core import Diagnostic, Report, Severity, summary_line
from ctdsl.diagnostics.github import render_github
from ctdsl.diagnostics.rules import Rules, describe, rule_name
from ctdsl.diagnostics.sarif import render_sarif
from ctdsl.diagnostics.terminal import json_command_safe, printable
from ctdsl.diagnostics.text import render_concise, render_text

JSON_VERSION = 1


from ctdsl.diagnostics.formats import FORMATS, Format  # noqa: E402,F401  (re-exported)


def render_text_report(report: Report, color: bool = False) -> str:
    """Each finding with its excerpt and a blank line, then the summary."""
    out = []
    for d in report.diagnostics:
        text = render_text(d, report.sources, color=color)
        if d.span is None and d in report.origin:  # about a whole spec: say which
            text = f"{printable(report.origin[d], one_line=True)}: {text}"
        out.append(text)
        out.append("")
    line = summary_line(report.all())
    if report.suppressed:
        line += f" ({report.suppressed} suppressed)"
    out.append(line)
    return "\n".join(out) + "\n"


def render_concise_report(report: Report) -> str:
    lines = []
    for d in report.all():
        if d.span is None and d in report.origin:
            lines.append(f"{printable(report.origin[d], one_line=True)}: {printable(f'{d.code} {d.message}')}")
        else:
            lines.append(render_concise(d))
    return "".join(line + "\n" for line in lines)


def json_document(report: Report, rules: Rules) -> dict:
    diags = []
    for d in report.all():
        item = d.to_json()
        item["name"] = rule_name(d.code, rules)
        item["source"] = describe(d.code, rules).source
        item["file"] = report.file_of(d)
        diags.append(item)
    return {
        "version": JSON_VERSION,
        "files": list(report.files),
        "summary": {
            "errors": report.count(Severity.ERROR),
            "warnings": report.count(Severity.WARNING),
            "info": report.count(Severity.INFO),
            "suppressed": report.suppressed,
            "files": len(report.files),
        },
        "diagnostics": diags,
    }


def render_json_report(report: Report, rules: Rules) -> str:
    return json_command_safe(json.dumps(json_document(report, rules), indent=2, sort_keys=True)) + "\n"


def render_json(diags: Iterable[Diagnostic]) -> str:
    """The json format of diagnostics without a report around them (no files given)."""
    return render_json_report(Report(diagnostics=list(diags)), {}).rstrip("\n")


def render(report: Report, fmt: str, rules: Rules | None = None, color: bool = False) -> str:
    """`report` in format `fmt`; `rules` describes the codes of the rules that ran (lint's)."""
    rules = rules or {}
    fmt = Format(fmt)
    if fmt is Format.text:
        return render_text_report(report, color)
    if fmt is Format.concise:
        return render_concise_report(report)
    if fmt is Format.json:
        return render_json_report(report, rules)
    if fmt is Format.sarif:
        return render_sarif(report, rules)
    return render_github(report)


__all__ = [
    "FORMATS",
    "Format",
    "JSON_VERSION",
    "json_document",
    "render",
    "render_concise_report",
    "render_json",
    "render_json_report",
    "render_text_report",
]
