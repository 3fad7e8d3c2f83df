"""A checked design search (`search NAME { minimise = cost; over = [wan_bw]; ... }`).

The checker (`ctdsl.check.search`) builds it; the back end (`ctdsl.numeric.search`)
solves it. Values are in base units (s, W, USD, gCO2e) as exact fractions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ctdsl import units as U
from ctdsl.diagnostics import Span

# what a search may minimise, maximise, cap or put on a Pareto front: each to target
OBJECTIVES = ("time", "energy", "cost", "co2e")
OBJECTIVE_DIMS = {"time": U.TIME, "energy": U.ENERGY, "cost": U.MONEY, "co2e": U.CARBON}
DEFAULT_GRID = 9  # points per param when neither the search nor the param's range says
# constraint field -> (what it caps, its dimension)
CAPS = {
    "deadline": ("time", U.TIME),
    "power_cap": ("power", U.POWER),
    "budget": ("cost", U.MONEY),
    "co2e_cap": ("co2e", U.CARBON),
}


@dataclass(frozen=True, slots=True)
class Search:
    name: str
    sense: str  # "minimise" | "maximise"
    terms: tuple[tuple[str, Fraction], ...]  # the objective: sum of weight x objective (weights in base units)
    dim: U.Dim  # the objective's dimension
    text: str  # the objective as written, for display: "cost + 40 USD/h * time"
    over: tuple[str, ...]  # params moved over their declared ranges
    choose: tuple[str, ...]  # the schemes enumerated (each on its own sites: a scheme on a variant is a hardware choice)
    caps: tuple[tuple[str, Fraction], ...] = ()  # (constraint field, bound in base units)
    memory: bool = False  # every chosen scheme's model must fit its devices' memory
    pareto: tuple[str, ...] = ()  # two or three objectives; () for none
    grid: int | None = None  # points per param; None: each param's declared count, else the default
    span: Span | None = None
    spans: dict = field(default_factory=dict, compare=False)  # field -> span, for diagnostics after checking


__all__ = ["CAPS", "DEFAULT_GRID", "OBJECTIVES", "OBJECTIVE_DIMS", "Search"]
