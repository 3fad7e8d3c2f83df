"""Lint's output formats: the one renderer of `ctdsl.diagnostics`, given lint's rules.

text, concise, json, sarif and github render as for `ctdsl check` (see
`ctdsl.diagnostics.report`); what lint adds is the description of its rules, as
`RuleInfo` data: every rule is described in SARIF whether it found something or
not, with its explanation and its flagged and fixed examples as help.
"""

from __future__ import annotations

from ctdsl.diagnostics import FORMATS, Report, RuleInfo, Severity
from ctdsl.diagnostics import render as render_report
from ctdsl.diagnostics.rules import rule_name as _rule_name
from ctdsl.lint.catalogue import INTERNAL_ERROR, all_rules
from ctdsl.lint.registry import Rule


def rule_markdown(r: Rule) -> str:
    return (
        f"**{r.code} {r.name}** ({r.severity.value}): {r.summary}\n\n{r.explanation}\n\n"
        f"Flagged:\n\n```\n{r.bad}\n```\n\nFixed:\n\n```\n{r.good}\n```\n"
    )


def rule_info(r: Rule) -> RuleInfo:
    return RuleInfo(
        code=r.code,
        name=r.name,
        severity=r.severity,
        summary=r.summary,
        description=r.explanation,
        help_text=f"{r.summary}\n\n{r.explanation}\n\nFlagged:\n{r.bad}\n\nFixed:\n{r.good}",
        help_markdown=rule_markdown(r),
        source="lint",
    )


_INTERNAL = "A lint rule failed on a spec: a bug in ctdsl."
_INTERNAL_HELP = "Please report it with the spec; --ignore CODE skips the rule meanwhile."
INTERNAL_ERROR_INFO = RuleInfo(
    code=INTERNAL_ERROR,
    name="internal-error",
    severity=Severity.ERROR,
    summary=_INTERNAL,
    description=f"{_INTERNAL} The finding names the rule and the exception it raised.",
    help_text=f"{_INTERNAL} {_INTERNAL_HELP}",
    help_markdown=f"**{INTERNAL_ERROR} internal-error**: {_INTERNAL} {_INTERNAL_HELP}",
    source="lint",
    listed=False,  # described only when it occurs
)

RULE_INFOS: dict[str, RuleInfo] = {r.code: rule_info(r) for r in all_rules()} | {INTERNAL_ERROR: INTERNAL_ERROR_INFO}


def rule_name(code: str) -> str | None:
    """The kebab-case name of a lint rule or a checker code."""
    return _rule_name(code, RULE_INFOS)


def render(report: Report, fmt: str, color: bool = False) -> str:
    return render_report(report, fmt, RULE_INFOS, color=color)


__all__ = ["FORMATS", "RULE_INFOS", "render", "rule_info", "rule_markdown", "rule_name"]
