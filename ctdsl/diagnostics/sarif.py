"""SARIF 2.1.0, for code scanning.

One run. `tool.driver.rules` describes every rule the command passes as listed
(lint's rules, found or not) and every other code found (from ctdsl/codes.py);
each result has its rule's id and index, a level, a message with the notes and
help, a location, related locations, and a partial fingerprint that survives
lines moving. Each rule has a `helpUri`, the absolute URI of its section of the
docs (`ctdsl.diagnostics.rules.help_uri`). The run's one
invocation says whether it succeeded and its exit code; a file that could not
be read is a `toolExecutionNotification` there as well as a result.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

from ctdsl.version import __version__
from ctdsl.diagnostics.core import Diagnostic, Report, Severity, Span
from ctdsl.diagnostics.rules import RuleInfo, Rules, describe, help_uri
from ctdsl.diagnostics.terminal import json_command_safe

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(path: str) -> str:
    # a name that is not UTF-8 reaches here as surrogate escapes: percent-encode its bytes
    return quote(path.replace("\\", "/").encode("utf-8", "surrogateescape"), safe="/-._~")


def rule_descriptor(r: RuleInfo) -> dict:
    return {
        "id": r.code,
        "name": r.name,
        "helpUri": help_uri(r),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.description},
        "help": {"text": r.help_text, "markdown": r.help_markdown},
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": ["ctdsl", r.source]},
    }


def _region(span: Span) -> dict:
    region = {"startLine": span.line, "startColumn": span.col, "endLine": span.end_line}
    region["endColumn"] = max(span.end_col, span.col + 1) if span.end_line == span.line else span.end_col
    return region


def _physical(span: Span) -> dict:
    return {"artifactLocation": {"uri": _uri(span.file), "uriBaseId": "%SRCROOT%"}, "region": _region(span)}


def full_message(d: Diagnostic) -> str:
    """The message, then its notes and help on lines of their own."""
    parts = [d.message]
    parts += [f"note: {n}" for n in d.notes]
    if d.help:
        parts.append(f"help: {d.help}")
    return "\n".join(parts)


def _fingerprint(d: Diagnostic, report: Report, file: str) -> str:
    """A hash of what the finding is about, not where: the code, the file and the text it points at."""
    text = ""
    if d.span is not None:
        line = report.sources.line(d.span.file, d.span.line) or ""
        text = " ".join(line.split())
        if d.span.end_line == d.span.line:
            text += "\x00" + line[d.span.col - 1 : d.span.end_col - 1]
    return hashlib.sha256("\x00".join([d.code, file, text]).encode("utf-8")).hexdigest()[:32]


def _result(d: Diagnostic, report: Report, index: int, seen: dict[str, int]) -> dict:
    file = report.file_of(d) or ""
    location = _physical(d.span) if d.span is not None else {
        "artifactLocation": {"uri": _uri(file), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1},
    }
    fp = _fingerprint(d, report, file)
    seen[fp] = seen.get(fp, 0) + 1
    result = {
        "ruleId": d.code,
        "ruleIndex": index,
        "level": LEVEL[d.severity],
        "message": {"text": full_message(d)},
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
    return result


def sarif_document(report: Report, rules: Rules) -> dict:
    findings = report.all()
    codes = sorted({c for c, r in rules.items() if r.listed} | {d.code for d in findings})
    index = {c: i for i, c in enumerate(codes)}
    seen: dict[str, int] = {}
    results = [_result(d, report, index[d.code], seen) for d in findings]
    driver = {
        "name": "ctdsl",
        "fullName": report.tool,
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [rule_descriptor(describe(c, rules)) for c in codes],
    }
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results, "invocations": [_invocation(report, index)]}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _invocation(report: Report, index: dict[str, int]) -> dict:
    """How the run ended: its exit code, and a notification for each file that could not be read
    (reported as a result too, so that a run over unreadable files is never empty)."""
    notes = []
    for d in report.unreadable:
        note = {
            "level": "error",
            "message": {"text": full_message(d)},
            "associatedRule": {"id": d.code, "index": index[d.code]},
        }
        file = report.file_of(d)
        if file:
            note["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(file), "uriBaseId": "%SRCROOT%"}}}]
        notes.append(note)
    inv: dict = {"executionSuccessful": not report.unreadable and report.exit_code in (None, 0, 1)}
    if report.exit_code is not None:
        inv["exitCode"] = int(report.exit_code)
    if notes:
        inv["toolExecutionNotifications"] = notes
    return inv


def render_sarif(report: Report, rules: Rules) -> str:
    return json_command_safe(json.dumps(sarif_document(report, rules), indent=2, sort_keys=True)) + "\n"


__all__ = ["LEVEL", "SARIF_SCHEMA", "full_message", "render_sarif", "rule_descriptor", "sarif_document"]
