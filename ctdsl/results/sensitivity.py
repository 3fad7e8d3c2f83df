"""Sensitivity of the answers to the params: partial derivatives, elasticities and tornado bars.

For a quantity y (a scheme's step time, time or energy to target, or a
break-even's root) and a param x, `Partial` holds dy/dx (a `Quantity` of
dimension dim(y) / dim(x)) and the elasticity d ln y / d ln x = (x / y) dy/dx
(dimensionless), exact from the symbolic form and evaluated at the params'
values. Where the form has a max or min, the derivative is the active branch's
at that point; `kinks` says where two branches tie within the tolerance (there
the derivative from the other side can differ).

A `Tornado` holds, for each param with a declared range, the quantity at the
range's two ends with the other params at their values. The solver builds both
(`ctdsl.symbolic.sensitivity`); reports only read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U
from ctdsl.results.quantity import Quantity

KINDS = ("step_time", "time_to_target", "energy_to_target", "breakeven")


@dataclass(frozen=True, slots=True)
class Partial:
    param: str
    derivative: Quantity  # dy/dx, dim(y) / dim(x); value nan where it is not defined
    elasticity: Quantity  # (x / y) dy/dx, dimensionless
    unit: str | None = None  # the param's declared unit (`GB/s`); None: written without one
    unit_scale: float = 1.0  # base units per declared unit: dy/dx x unit_scale is the change per declared unit
    y_dim: U.Dim = U.ONE  # the quantity's dimension, to show the change per declared unit in

    def per_unit(self) -> str:
        """dy/dx as a change of y per declared unit of x: `-8 s per GB/s`; in base units when x has no unit."""
        if self.unit is None:
            return U.format_quantity(self.derivative.value, self.derivative.dim)
        return f"{U.format_quantity(self.derivative.value * self.unit_scale, self.y_dim)} per {self.unit}"


@dataclass(frozen=True, slots=True)
class QuantitySensitivity:
    """The partials of one quantity, largest |elasticity| first."""

    name: str  # `SCHEME.time_to_target`, or `breakeven.X.Y.OVER` (`...#2` for a second root)
    kind: str  # one of KINDS
    what: str  # in words: "time to target of adamw"
    value: Quantity | None  # y at the point; None where there is none (never in range)
    partials: tuple[Partial, ...]
    kinks: tuple[str, ...] = ()  # ties between the branches of a max/min at the point, in words
    note: str | None = None  # why there are no partials, or how they were found


@dataclass(frozen=True, slots=True)
class Sensitivity:
    params: tuple[str, ...]  # every param, in the spec's order
    quantities: tuple[QuantitySensitivity, ...]
    kink_tolerance: float  # relative: two branches closer than this at the point are a kink

    def get(self, name: str) -> QuantitySensitivity:
        for q in self.quantities:
            if q.name == name:
                return q
        raise KeyError(name)

    def names(self) -> list[str]:
        return [q.name for q in self.quantities]


@dataclass(frozen=True, slots=True)
class TornadoBar:
    param: str
    dim: U.Dim  # of the param
    lo: float  # the ends of its declared range, base units
    hi: float
    at_lo: float  # the quantity with the param at lo, the others at their values; nan: none (never in range)
    at_hi: float

    @property
    def spread(self) -> float:
        """|y(hi) - y(lo)|, what the bars are sorted by (nan sorts last)."""
        return abs(self.at_hi - self.at_lo)


@dataclass(frozen=True, slots=True)
class Tornado:
    name: str
    what: str
    value: Quantity  # at the params' values: where the bars start from
    bars: tuple[TornadoBar, ...]  # widest first
    skipped: tuple[str, ...] = ()  # params with no declared range, or the break-even's own param
