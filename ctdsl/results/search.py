"""The result of a design search (`ctdsl.numeric.search.run_search`), as plain frozen data.

Values are floats in base units (s, J, USD, gCO2e, W; each param in its own base
unit); `units` says the dimension of each, so the report layer formats them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U

QUANTITY_DIMS = {"time": U.TIME, "energy": U.ENERGY, "cost": U.MONEY, "co2e": U.CARBON, "power": U.POWER}


@dataclass(frozen=True, slots=True)
class Point:
    """One choice at one point of the params: the quantities to target and the objective."""

    choice: str
    params: tuple[tuple[str, float], ...]  # (param, value in base units), in the search's order
    quantities: tuple[tuple[str, float], ...]  # (time | energy | cost | co2e | power, value in base units)
    objective: float  # as the search states it (a maximised objective is not negated)

    def quantity(self, name: str) -> float:
        return dict(self.quantities)[name]


@dataclass(frozen=True, slots=True)
class ChoiceOutcome:
    """What the search found for one choice of scheme."""

    choice: str
    label: str
    sites: str | None  # the variant of the sites it runs on; None: as declared
    bound: float  # the lower bound of the minimised objective over the box (interval arithmetic); -inf: none
    status: str  # optimum | feasible | infeasible | pruned
    best: Point | None  # its best feasible point after refinement (None: infeasible or pruned)


@dataclass(frozen=True, slots=True)
class SearchResult:
    name: str
    sense: str  # minimise | maximise
    objective: str  # as written
    objective_dim: U.Dim
    over: tuple[str, ...]
    param_dims: tuple[tuple[str, U.Dim], ...]
    caps: tuple[tuple[str, str, float], ...]  # (field, quantity capped, bound in base units)
    memory: bool
    optimum: Point
    binding: tuple[str, ...]  # constraint fields met with equality at the optimum (within SEARCH_BINDING)
    at_ends: tuple[tuple[str, str], ...]  # (param, "low" | "high"): params at an end of their range
    choices: tuple[ChoiceOutcome, ...]  # in the order they were searched (by bound)
    pareto_axes: tuple[str, ...]
    pareto: tuple[Point, ...]  # non-dominated feasible grid points, sorted by the first axis
    grid: tuple[tuple[str, int], ...]  # points per param
    evaluations: int  # points at which the forms were evaluated


__all__ = ["ChoiceOutcome", "Point", "QUANTITY_DIMS", "SearchResult"]
