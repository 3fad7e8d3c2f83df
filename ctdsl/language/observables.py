"""What an `observe` statement may name: the outputs a measurement can be held against.

The set is closed (`enums.Observable`) and described once, here: each observable's
dimension, the bound a measured value must meet, whether a lower or a higher value is
better (for "the best layout": the fastest, or the highest utilisation) and what it
means. The checker types an observed value with this table, the docs print it
(docs/language.md, "observe"), and `ctdsl.numeric.observe` reads each from a solved
scheme. Adding an observable is one member of the enum, one row here and one reader
there; a test sees that every member has all three.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U
from ctdsl.language.enums import Observable


@dataclass(frozen=True)
class ObservableSpec:
    name: Observable
    dim: U.Dim
    bound: str  # positive (> 0) | fraction (in (0, 1])
    better: str  # lower | higher: which way the best of several layouts lies
    meaning: str
    example: str  # a measured value as written


OBSERVABLES: dict[Observable, ObservableSpec] = {
    o.name: o
    for o in [
        ObservableSpec(Observable.STEP_TIME, U.TIME, "positive", "lower", "the step time (an iteration), sync included", "3.5665 s"),
        ObservableSpec(Observable.TIME_TO_TARGET, U.TIME, "positive", "lower", "the time to the target loss: steps x the step time (the scheme needs `steps`)", "72 h"),
        ObservableSpec(Observable.MFU, U.ONE, "fraction", "higher", "model FLOPs utilisation: model FLOPs per step / (step time x the GPUs' peak)", "0.41"),
        ObservableSpec(Observable.UTILISATION, U.ONE, "fraction", "higher", "compute utilisation: the inner step over the step time", "0.95"),
    ]
}

assert set(OBSERVABLES) == set(Observable)

__all__ = ["OBSERVABLES", "Observable", "ObservableSpec"]
