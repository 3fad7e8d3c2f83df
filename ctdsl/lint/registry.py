"""What a lint rule is: its code, name, severity and documentation, and its check.

A rule is a function over a checked spec that yields `Hit`s; the runner turns them
into diagnostics with the rule's code and severity. `@rule(...)` makes the
decorated function a `Rule`; the rule modules (`ctdsl.lint.rules.*`) define them
and `ctdsl.lint.catalogue` gathers them into the table everything else reads.
Nothing is registered as a side effect of an import, so the table is complete
wherever it is read.

Codes are stable: a code keeps its meaning for good, and a retired code is not
reused. The docs (docs/lint-rules.md), the SARIF rule metadata and `ctdsl lint
--explain` are all generated from the table, so they never disagree with the code.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Callable, Iterable, Optional

from ctdsl.diagnostics import Label, Severity, Span

if TYPE_CHECKING:  # pragma: no cover
    from ctdsl.lint.context import Context


@dataclass(frozen=True)
class Hit:
    """One finding of a rule, before the runner gives it the rule's code and severity."""

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
    fix: str | None = None  # "safe", "unsafe" (applied only with --unsafe-fixes), or None: no fix
    fix_why: str = ""  # why the fix is safe or not, for the docs

    @property
    def fixture(self) -> str:
        return f"tests/lint/fixtures/{self.code}.ct"


FIXES = ("safe", "unsafe")


def rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    bad: str,
    good: str,
    doc: str | None = None,
    fix: str | None = None,
    fix_why: str = "",
):
    """Make the decorated check a `Rule`; its docstring (or `doc`) is the rule's explanation.

    `rule(...)(None)` is a rule the runner applies itself. `fix` says whether its
    findings' exact edits (`ctdsl.lint.fixes`) are safe, applied by `--fix`, or
    unsafe, a change of meaning applied only with `--unsafe-fixes` (ruff's
    convention); `fix_why` says why, in the docs.
    """
    if fix is not None and fix not in FIXES:  # pragma: no cover - a programming error
        raise ValueError(f"{code}: fix must be one of {FIXES}, not {fix!r}")

    def wrap(fn: Check | None) -> Rule:
        text = doc if doc is not None else (fn.__doc__ or "") if fn is not None else ""
        return Rule(
            code, name, severity, summary, inspect.cleandoc(text), inspect.cleandoc(bad), inspect.cleandoc(good), fn, fix, fix_why
        )

    return wrap


def collect(modules: Iterable[ModuleType]) -> dict[str, Rule]:
    """Every `Rule` defined in `modules`, by code, in code order."""
    found: dict[str, Rule] = {}
    names: set[str] = set()
    for module in modules:
        for value in vars(module).values():
            if not isinstance(value, Rule) or found.get(value.code) is value:
                continue
            if value.code in found:  # pragma: no cover - a programming error
                raise ValueError(f"lint code {value.code} defined twice")
            if value.name in names:  # pragma: no cover
                raise ValueError(f"lint rule name {value.name} defined twice")
            found[value.code] = value
            names.add(value.name)
    return {c: found[c] for c in sorted(found)}


__all__ = ["Check", "FIXES", "Hit", "Rule", "rule", "collect"]
