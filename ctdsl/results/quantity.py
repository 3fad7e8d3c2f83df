"""A result quantity: exact expression, value at the defaults, dimension."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.results import display


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

    def to(self, unit: str) -> float:
        """The value in `unit` (`q.to("Gb/s")`), read with the units table; a unit of
        another dimension is a ValueError that names both."""
        try:
            u = U.parse_unit(unit.strip())
        except U.UnitError as exc:
            hint = f" ({exc.help})" if exc.help else ""
            raise ValueError(f"cannot convert to {unit!r}: {exc}{hint}") from None
        if u.dim != self.dim:
            raise ValueError(f"cannot convert {self} to {unit!r}: it is a {self.unit}, and {unit!r} is a {u.dim.symbol()}")
        return self.value / float(u.scale)

    def __repr__(self) -> str:
        return f"<Quantity {self}>"

    def _repr_html_(self) -> str:
        return display.render("quantity", "html", self)

    def _repr_latex_(self) -> str:
        return display.render("quantity", "latex", self)
