"""A result quantity: exact expression, value at the defaults, dimension."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U


@dataclass(frozen=True, slots=True)
class Quantity:
    expr: sp.Expr  # exact, in base units (B, s, FLOP, J, m)
    value: float  # at the params' defaults; nan where it cannot be evaluated
    dim: U.Dim

    def __str__(self) -> str:
        return U.format_quantity(self.value, self.dim)

    def __float__(self) -> float:
        return float(self.value)

    @property
    def unit(self) -> str:
        """The base unit of `value` (`B/s`)."""
        return self.dim.symbol()
