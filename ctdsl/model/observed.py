"""Measurements in a spec: scenarios, observed points and the fit of one param.

- A `Scenario` is a named set of param values (`scenario row_1 { tp = 2; micro_batch = 8 }`),
  each checked as `--set` checks a value: the param's dimension, its range and, for a
  param a count is set to, a whole number. Solving "in" a scenario is solving the spec
  with those values in place of the defaults (`ctdsl.api.load(path, scenario=...)`).
- An `Observation` is a measured value of one output (`enums.Observable`) of one scheme, in
  a scenario or at the defaults, with the source it was taken from.
- A `Fit` names a param whose value is solved for so that the prediction meets the one
  observation of a scenario, then held at that value for every other observation.

All frozen: the checker builds each once (`ctdsl.check.observed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ctdsl.diagnostics import Span
from ctdsl.language.enums import Observable
from ctdsl.model.entities import freeze, frozen_map


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    values: Mapping[str, float]  # param -> value in base units, in the order written
    texts: Mapping[str, str]  # param -> the value as written (`8`, `150 GB/s`)
    spans: Mapping[str, Span]  # param -> where its value was written
    span: Span  # the scenario's name

    def __post_init__(self) -> None:
        freeze(self, values=frozen_map, texts=frozen_map, spans=frozen_map)


@dataclass(frozen=True, slots=True)
class Observation:
    observable: Observable
    scheme: str  # the scheme observed (named by `of`, or the spec's only one)
    scenario: str | None  # None: at the params' defaults
    value: float  # base units (s for a time, a plain fraction for mfu)
    text: str  # the value as written (`3.5665 s`)
    source: str  # where the measurement comes from
    span: Span  # the statement

    def __post_init__(self) -> None:
        freeze(self, observable=Observable)


@dataclass(frozen=True, slots=True)
class Fit:
    param: str
    scenario: str
    observation: int  # the index in Spec.observations of the scenario's one observation
    span: Span  # the statement


__all__ = ["Scenario", "Observation", "Fit"]
