"""A checked `target` statement: the value of a param at which a quantity reaches a target.

`target utilisation = [0.9, 0.95] over wan_bw for adamw` becomes one `Target`
per value and scheme, in the order written (values first, then schemes), so that
the solver and every table see a flat, frozen list.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ctdsl.diagnostics import Span

# what a target may name: compute utilisation, the step time, and the time, energy, cost and CO2e to target
QUANTITIES = ("utilisation", "step_time", "time", "energy", "cost", "co2e")


@dataclass(frozen=True, slots=True)
class Target:
    quantity: str  # one of QUANTITIES
    value: float  # base units
    exact: Fraction  # the same, exactly, for the solver's exact roots
    text: str  # the target as written (`0.95`, `30 d`), for tables
    over: str  # the param solved for
    scheme: str
    span: Span  # the statement


__all__ = ["Target", "QUANTITIES"]
