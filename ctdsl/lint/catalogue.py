"""Every lint rule, gathered from the rule modules: the table the runner, the config,
the formats, the docs and `--explain` read.

Importing this module imports every rule module, so the table is complete as soon
as it can be read: `rule_name("CTL001")` is right in a fresh process.
"""

from __future__ import annotations

from ctdsl.lint.registry import Rule, collect
from ctdsl.lint.rules import bit_byte, definitions, links, modules, payloads, replicas, schemes, serving, suppressions, sweeps

RULES: dict[str, Rule] = collect([definitions, modules, links, bit_byte, payloads, schemes, sweeps, suppressions, replicas, serving])

INTERNAL_ERROR = "CTL000"  # a rule crashed: a bug in ctdsl, reported rather than raised
UNUSED_SUPPRESSION = suppressions.unused_suppression.code


def all_rules() -> list[Rule]:
    """Every rule, in code order."""
    return [RULES[c] for c in sorted(RULES)]


def lookup(code_or_name: str) -> Rule | None:
    """A rule by its code (CTL006) or its name (bit-byte-slip)."""
    key = code_or_name.strip()
    return RULES.get(key.upper()) or next((r for r in RULES.values() if r.name == key.lower()), None)


__all__ = ["RULES", "INTERNAL_ERROR", "UNUSED_SUPPRESSION", "all_rules", "lookup"]
