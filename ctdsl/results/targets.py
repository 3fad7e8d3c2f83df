"""Targets in the result tree: the value of a param at which a scheme's quantity reaches a target.

One `TargetResult` per value and scheme of each `target` statement. `result`
is the root finder's answer (`symbolic.breakeven.Breakeven` of the quantity
against the constant target): its roots carry exact forms (or are marked
numeric), and `reason` says why there is none in range.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctdsl import units as U

# what each quantity is called in tables
WORDS = {
    "utilisation": "compute utilisation",
    "step_time": "step time",
    "time": "time to target",
    "energy": "energy to target",
    "cost": "cost to target",
    "co2e": "CO2e to target",
}


@dataclass(frozen=True, slots=True)
class TargetRoot:
    value: float  # of the param, base units
    expr: Any  # sympy: exact in the other params, or a Float for a numeric root
    numeric: bool  # found by a scan and Brent's method, verified by a sign change
    rises: bool  # True: the quantity is above the target for larger values of the param


@dataclass(frozen=True, slots=True)
class TargetResult:
    quantity: str  # utilisation | step_time | time | energy | cost | co2e
    target: float  # base units
    target_dim: U.Dim
    text: str  # the target as written
    scheme: str
    over: str
    dim: U.Dim  # the param's
    roots: tuple[TargetRoot, ...]
    reason: str | None  # why no root in range (or why the target cannot be asked); None: roots
    lo: float | None = None  # the range searched
    hi: float | None = None

    @property
    def shown_target(self) -> str:
        return self.text or U.format_quantity(self.target, self.target_dim)

    def describe(self) -> str:
        if not self.roots:
            return f"never in range: {self.reason}"
        return "; ".join(
            f"{self.over} = {U.format_quantity(r.value, self.dim)}" + (" (numeric root)" if r.numeric else "") for r in self.roots
        )

    def __repr__(self) -> str:
        return f"<TargetResult {self.quantity} = {self.shown_target} for {self.scheme} over {self.over}: {self.describe()}>"


__all__ = ["TargetResult", "TargetRoot", "WORDS"]
