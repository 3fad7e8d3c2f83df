"""What a renderer knows about a code: its name, summary, help and default level.

A command passes the rules it ran (`ctdsl lint` passes its registry's, built by
`ctdsl.lint.formats`); every other code found is described from the checker's
table, `ctdsl.codes`. This package never imports the linter: the linter hands its
rules in, as data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ctdsl.codes import CODES
from ctdsl.diagnostics.core import Severity


@dataclass(frozen=True)
class RuleInfo:
    code: str  # CTL003, CT202
    name: str  # kebab-case
    severity: Severity  # the level a finding of it has by default
    summary: str  # one line
    description: str  # the full description: what is flagged and why
    help_text: str
    help_markdown: str
    source: str  # "lint" or "check": the command whose code it is
    listed: bool = True  # described in SARIF whether or not anything was found


Rules = Mapping[str, RuleInfo]

# Where the docs are read on the web: the docs/ folder of the repository, as its host
# renders it (GitHub makes an anchor of each heading). The one place the address is
# written: SARIF's helpUri, the language server's codeDescription and the text
# format's `= docs:` line all take it from here, and [project.urls] in
# pyproject.toml names the same place (a test keeps them equal).
DOCS_BASE = "https://github.com/ctdsl/ctdsl/blob/main/"
DOCS_PAGE = {"lint": "docs/lint-rules.md", "check": "docs/diagnostics.md"}


def help_uri(r: RuleInfo) -> str:
    """The absolute URI of the rule's section in the docs: the anchor of its heading `CODE name`."""
    return f"{DOCS_BASE}{DOCS_PAGE.get(r.source, DOCS_PAGE['check'])}#{r.code.lower()}-{r.name.lower()}"


def checker_rule(code: str) -> RuleInfo:
    """A checker code (CT202) as a rule, from ctdsl/codes.py."""
    c = CODES.get(code)
    summary = c.summary if c is not None else f"ctdsl diagnostic {code}"
    name = c.name if c is not None else code.lower()
    summary = summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
    fix = f"{summary} A spec with checker errors cannot be solved: fix the spec."
    return RuleInfo(
        code=code,
        name=name,
        severity=Severity.ERROR,
        summary=summary,
        description=f"{summary} Reported by the checker (ctdsl check); see docs/diagnostics.md.",
        help_text=fix,
        help_markdown=f"**{code} {name}**: {fix}",
        source="check",
        listed=False,
    )


def describe(code: str, rules: Rules) -> RuleInfo:
    """The rule of `code`: one of `rules`, else the checker's."""
    r = rules.get(code)
    return r if r is not None else checker_rule(code)


def rule_name(code: str, rules: Rules) -> str | None:
    """The kebab-case name of a code, or None for a code nobody knows."""
    r = rules.get(code)
    if r is not None:
        return r.name
    c = CODES.get(code)
    return c.name if c is not None else None


__all__ = ["DOCS_BASE", "DOCS_PAGE", "RuleInfo", "Rules", "checker_rule", "describe", "help_uri", "rule_name"]
