"""The rule registry: every lint rule's code, name, severity and documentation.

A rule is a function over a checked spec that yields `Hit`s; the registry turns
them into diagnostics with the rule's code and severity. Codes are stable: a
code keeps its meaning for good, and a retired code is not reused. The docs
(docs/lint-rules.md), the SARIF rule metadata and `ctdsl lint --explain` are all
generated from this table, so they never disagree with the code.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from ctdsl.diagnostics import Label, Severity, Span

if TYPE_CHECKING:  # pragma: no cover
    from ctdsl.lint.context import Context


@dataclass(frozen=True)
class Hit:
    """One finding of a rule, before the registry gives it its code and severity."""

    message: str
    span: Span | None
    label: str = ""
    secondary: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None


Check = Callable[["Context"], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str  # CTL001
    name: str  # kebab-case
    severity: Severity
    summary: str  # one line
    explanation: str  # paragraphs: what is flagged, why, and how numbers are judged
    bad: str  # a spec excerpt that is flagged
    good: str  # the same excerpt, fixed
    check: Optional[Check] = field(default=None, repr=False, compare=False)  # None: the runner does it

    @property
    def fixture(self) -> str:
        return f"tests/lint/fixtures/{self.code}.ct"


RULES: dict[str, Rule] = {}


def rule(code: str, name: str, severity: Severity, summary: str, bad: str, good: str, doc: str | None = None):
    """Register the decorated check; its docstring (or `doc`) is the rule's explanation."""

    def wrap(fn: Check | None) -> Check | None:
        doc_ = inspect.cleandoc(doc if doc is not None else (fn.__doc__ or "") if fn is not None else "")
        register(Rule(code, name, severity, summary, doc_, inspect.cleandoc(bad), inspect.cleandoc(good), fn))
        return fn

    return wrap


def register(r: Rule) -> Rule:
    if r.code in RULES:  # pragma: no cover - a programming error
        raise ValueError(f"lint code {r.code} registered twice")
    if any(x.name == r.name for x in RULES.values()):  # pragma: no cover
        raise ValueError(f"lint rule name {r.name} registered twice")
    RULES[r.code] = r
    return r


def all_rules() -> list[Rule]:
    """Every rule, in code order (importing the rules module registers them)."""
    from ctdsl.lint import rules  # noqa: F401  (registers)

    return [RULES[c] for c in sorted(RULES)]


def lookup(code_or_name: str) -> Rule | None:
    all_rules()
    key = code_or_name.strip()
    return RULES.get(key.upper()) or next((r for r in RULES.values() if r.name == key.lower()), None)


__all__ = ["Hit", "Rule", "RULES", "rule", "register", "all_rules", "lookup"]
