"""Uncertainty of the answers: distributions of every scheme's figures, drawn from the params' `~`.

Built by `ctdsl.numeric.uncertainty`; reports only read it. Values are in base
units (s, J, USD, the break-even param's); `dim` says which.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U


@dataclass(frozen=True, slots=True)
class Summary:
    """A sample's mean, sd and 5 / 50 / 95 % quantiles, over its finite values (`count` of them)."""

    dim: U.Dim
    mean: float
    sd: float
    q05: float
    q50: float
    q95: float
    count: int  # finite values summarised


@dataclass(frozen=True, slots=True)
class SchemeSpread:
    name: str
    time: Summary  # time to target
    energy: Summary  # energy to target
    cost: Summary | None  # None: the spec prices nothing
    first: float  # probability that the scheme is first to the target
    cheapest: float | None = None  # probability that it costs least to the target; None: the spec prices nothing


@dataclass(frozen=True, slots=True)
class BreakevenSpread:
    x: str
    y: str
    over: str
    on: str  # the quantity compared: time, energy, cost
    root: Summary  # the lowest root in range, over the samples that have one
    never: float  # probability that no root lies in the range
    samples: int  # samples the break-even was found on (the first ones drawn)
    x_throughout: float = 0.0  # probability that there is none and x is lower (faster, cheaper) over the whole range
    y_throughout: float = 0.0  # the same for y; never - both: draws whose difference is not finite


@dataclass(frozen=True, slots=True)
class SobolIndex:
    param: str
    first: float  # first-order index S1
    first_conf: float  # its 95 % confidence half-width (SALib's bootstrap)
    total: float  # total index ST
    total_conf: float


@dataclass(frozen=True, slots=True)
class BreakevenSobol:
    """Sobol indices of a break-even's lowest root over the drawn params (the break-even's own param aside)."""

    x: str
    y: str
    over: str
    on: str
    indices: tuple[SobolIndex, ...] | None  # None: see `note`
    evaluations: int  # points of the design (each a root found on the grid and bisected)
    note: str | None = None  # why there are no indices: never in range at some point of the design, or no spread


@dataclass(frozen=True, slots=True)
class Uncertainty:
    samples: int
    seed: int
    params: tuple[str, ...]  # the params drawn, in spec order
    schemes: tuple[SchemeSpread, ...]
    breakevens: tuple[BreakevenSpread, ...]
    sobol: dict | None  # scheme -> tuple[SobolIndex, ...] on its time to target; None: not asked or SALib missing
    sobol_samples: int = 0  # model evaluations the indices took
    sobol_cost: dict | None = None  # scheme -> tuple[SobolIndex, ...] on its cost to target; None: not asked, or nothing priced
    sobol_breakevens: tuple[BreakevenSobol, ...] = ()  # one per break-even of the spread, when Sobol indices were asked for


__all__ = ["BreakevenSobol", "BreakevenSpread", "SchemeSpread", "SobolIndex", "Summary", "Uncertainty"]
