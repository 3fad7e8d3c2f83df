"""Lint output formats: text, concise, json, sarif and github.

- text: ruff-like, a source excerpt with carets for each finding, then a summary.
- concise: one line per finding, `path:line:col: CODE message`.
- json: the findings as data (schema: ctdsl/lint/lint-output.schema.json, described
  in docs/ci.md).
- sarif: SARIF 2.1.0 for code scanning, with a rule descriptor (and its help) for
  every lint rule and for each checker code found, and partial fingerprints that
  survive lines moving.
- github: one GitHub Actions workflow command per finding, which the runner turns
  into an annotation on the pull request.

Every format is deterministic: findings are sorted by file, line, column and code,
and JSON keys are sorted.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

from ctdsl import __version__
from ctdsl.diagnostics import Diagnostic, Severity, Span, render_concise, render_text, summary_line
from ctdsl.lint.registry import RULES, Rule, all_rules
from ctdsl.lint.runner import LintReport

FORMATS = ("text", "concise", "json", "sarif", "github")
JSON_VERSION = 1
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def rule_name(code: str) -> str | None:
    """The kebab-case name of a lint rule or a checker code."""
    if code in RULES:
        return RULES[code].name
    if code == "CTL000":
        return "internal-error"
    from ctdsl.codes import CODES

    c = CODES.get(code)
    return c.name if c is not None else None


# ---- text, concise ---------------------------------------------------------------------------


def render_text_report(report: LintReport, color: bool = False) -> str:
    out = []
    for d in report.diagnostics:
        text = render_text(d, report.sources, color=color)
        if d.span is None and d in report.origin:  # about a whole spec: say which
            text = f"{report.origin[d]}: {text}"
        out.append(text)
        out.append("")
    line = summary_line(report.diagnostics)
    if report.suppressed:
        line += f" ({report.suppressed} suppressed)"
    out.append(line)
    return "\n".join(out) + "\n"


def render_concise_report(report: LintReport) -> str:
    lines = []
    for d in report.diagnostics:
        if d.span is None and d in report.origin:
            lines.append(f"{report.origin[d]}: {d.code} {d.message}")
        else:
            lines.append(render_concise(d))
    return "".join(line + "\n" for line in lines)


# ---- json ---------------------------------------------------------------------------------------


def render_json_report(report: LintReport) -> str:
    diags = []
    for d in report.diagnostics:
        item = d.to_json()
        item["name"] = rule_name(d.code)
        item["source"] = "lint" if d.code.startswith("CTL") else "check"
        item["file"] = d.span.file if d.span is not None else report.origin.get(d)
        diags.append(item)
    doc = {
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
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


# ---- sarif ---------------------------------------------------------------------------------------

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(path: str) -> str:
    return quote(path.replace("\\", "/"), safe="/-._~")


def rule_markdown(r: Rule) -> str:
    return (
        f"**{r.code} {r.name}** ({r.severity.value}): {r.summary}\n\n{r.explanation}\n\n"
        f"Flagged:\n\n```\n{r.bad}\n```\n\nFixed:\n\n```\n{r.good}\n```\n"
    )


def _rule_descriptor(code: str) -> dict:
    if code in RULES:
        r = RULES[code]
        text = f"{r.summary}\n\n{r.explanation}\n\nFlagged:\n{r.bad}\n\nFixed:\n{r.good}"
        return {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": r.explanation},
            "help": {"text": text, "markdown": rule_markdown(r)},
            "defaultConfiguration": {"level": _LEVEL[r.severity]},
            "properties": {"tags": ["ctdsl", "lint"]},
        }
    from ctdsl.codes import CODES

    c = CODES.get(code)
    if code == "CTL000":
        summary = "a lint rule failed on a spec: a bug in ctdsl"
    else:
        summary = c.summary if c is not None else f"ctdsl diagnostic {code}"
    name = rule_name(code) or code.lower()
    summary = summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": summary},
        "fullDescription": {"text": f"{summary} Reported by the checker (ctdsl check); see docs/diagnostics.md."},
        "help": {
            "text": f"{summary} A spec with checker errors cannot be solved: fix the spec.",
            "markdown": f"**{code} {name}**: {summary} A spec with checker errors cannot be solved: fix the spec.",
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["ctdsl", "check"]},
    }


def _region(span: Span) -> dict:
    region = {"startLine": span.line, "startColumn": span.col, "endLine": span.end_line}
    region["endColumn"] = max(span.end_col, span.col + 1) if span.end_line == span.line else span.end_col
    return region


def _physical(span: Span) -> dict:
    return {"artifactLocation": {"uri": _uri(span.file), "uriBaseId": "%SRCROOT%"}, "region": _region(span)}


def _full_message(d: Diagnostic) -> str:
    parts = [d.message]
    parts += [f"note: {n}" for n in d.notes]
    if d.help:
        parts.append(f"help: {d.help}")
    return "\n".join(parts)


def _fingerprint(d: Diagnostic, report: LintReport, file: str) -> str:
    """A hash of what the finding is about, not where: the code, the file and the text it points at."""
    text = ""
    if d.span is not None:
        line = report.sources.line(d.span.file, d.span.line) or ""
        text = " ".join(line.split())
        if d.span.end_line == d.span.line:
            text += "\x00" + line[d.span.col - 1 : d.span.end_col - 1]
    return hashlib.sha256("\x00".join([d.code, file, text]).encode("utf-8")).hexdigest()[:32]


def render_sarif_report(report: LintReport) -> str:
    codes = sorted(set(RULES) | {d.code for d in report.diagnostics})
    all_rules()
    index = {c: i for i, c in enumerate(codes)}
    results = []
    seen: dict[str, int] = {}
    for d in report.diagnostics:
        file = d.span.file if d.span is not None else report.origin.get(d, "")
        location = _physical(d.span) if d.span is not None else {
            "artifactLocation": {"uri": _uri(file), "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": 1},
        }
        fp = _fingerprint(d, report, file)
        seen[fp] = seen.get(fp, 0) + 1
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _LEVEL[d.severity],
            "message": {"text": _full_message(d)},
            "locations": [{"physicalLocation": location}],
            "partialFingerprints": {"ctdslFinding/v1": f"{fp}:{seen[fp]}"},
        }
        # related places in the library's preset files (`<std>/...`) are not in the repository
        shown = [l for l in d.secondary if not l.span.file.startswith("<")]
        related = [
            {"id": i, "physicalLocation": _physical(l.span), "message": {"text": l.text or "related"}}
            for i, l in enumerate(shown, start=1)
        ]
        if related:
            result["relatedLocations"] = related
        results.append(result)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ctdsl",
                        "fullName": "ctdsl lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule_descriptor(c) for c in codes],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


# ---- github --------------------------------------------------------------------------------------

_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render_github_report(report: LintReport) -> str:
    """One workflow command per finding: `::warning file=...,line=...::message`."""
    lines = []
    for d in report.diagnostics:
        props = []
        s = d.span
        file = s.file if s is not None else report.origin.get(d)
        if file:
            props.append(f"file={_escape_property(file)}")
        if s is not None:
            props.append(f"line={s.line}")
            if s.end_line == s.line:
                props.append(f"col={s.col}")
            props.append(f"endLine={s.end_line}")
            if s.end_line == s.line:
                props.append(f"endColumn={max(s.end_col, s.col + 1)}")
        props.append(f"title={_escape_property(f'ctdsl ({d.code})')}")
        lines.append(f"::{_GITHUB_LEVEL[d.severity]} {','.join(props)}::{_escape_data(_full_message(d))}")
    return "".join(line + "\n" for line in lines)


def render(report: LintReport, fmt: str, color: bool = False) -> str:
    if fmt == "text":
        return render_text_report(report, color)
    if fmt == "concise":
        return render_concise_report(report)
    if fmt == "json":
        return render_json_report(report)
    if fmt == "sarif":
        return render_sarif_report(report)
    if fmt == "github":
        return render_github_report(report)
    raise ValueError(f"unknown format {fmt}")  # pragma: no cover


__all__ = ["FORMATS", "render", "rule_name", "rule_markdown"]
