"""Grids of param values: axes (linear or log) and their Cartesian product.

An `Axis` is one param's values, in base SI units. A `Grid` is the product of
its axes, in row-major order (the last axis varies fastest), with every other
param fixed at a value (its default, or a `--set` override, already in the
solution). Points are numbered 0 .. size-1; `points(start, stop)` gives the
param values of a run of them, so a grid of any size is visited a chunk at a
time and never built whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import TYPE_CHECKING

import numpy as np

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic, Label
from ctdsl.failure import Failure
from ctdsl.model.entities import Spec

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from ctdsl.diagnostics import Span


@dataclass
class Axis:
    name: str
    lo: float
    hi: float
    count: int
    spacing: str = "lin"  # lin | log
    values: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"axis {self.name}: count must be at least 1")
        if self.spacing not in ("lin", "log"):
            raise ValueError(f"axis {self.name}: spacing is lin or log, not {self.spacing!r}")
        if self.spacing == "log" and not (self.lo > 0 and self.hi > 0):
            raise ValueError(f"axis {self.name}: a log axis needs positive ends")
        if self.count == 1:
            self.values = np.array([float(self.lo)])
        elif self.spacing == "log":
            self.values = np.geomspace(float(self.lo), float(self.hi), self.count)
        else:
            self.values = np.linspace(float(self.lo), float(self.hi), self.count)
        self.values.setflags(write=False)

    @classmethod
    def from_param(cls, p, count: int | None = None) -> "Axis":
        """The param's range from the spec, with its spacing and count (lin, 11 when not given)."""
        if p.lo is None:
            raise ValueError(f"param {p.name} has no range")
        return cls(p.name, p.lo, p.hi, count or p.count or 11, p.spacing or "lin")


@dataclass
class Grid:
    axes: list[Axis]

    def __post_init__(self) -> None:
        names = [a.name for a in self.axes]
        if len(set(names)) != len(names):
            raise ValueError("a param appears on two axes")

    @classmethod
    def from_spec(cls, spec) -> "Grid":
        """Every param with a sweep in the spec (a range, a spacing and a count)."""
        check_default_grid(spec)
        return cls([Axis.from_param(p) for p in spec.params.values() if p.lo is not None and p.count])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.count for a in self.axes)

    @property
    def size(self) -> int:
        return prod(self.shape)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.axes]

    def points(self, start: int, stop: int) -> dict[str, np.ndarray]:
        """Param values at points start .. stop-1: one array per axis."""
        stop = min(stop, self.size)
        if not self.axes:
            return {}
        out = {}
        stride = self.size
        for a in self.axes:
            # axis k repeats each value prod(shape[k+1:]) times, the whole pattern
            # prod(shape[:k]) times; only the runs that meet [start, stop) are built
            stride //= a.count
            first, last = start // stride, (stop - 1) // stride
            runs = np.arange(first, last + 1) % a.count
            vals = np.repeat(a.values[runs], stride)
            skip = start - first * stride
            out[a.name] = vals[skip : skip + stop - start]
        return out


def size_problems(axes: "Sequence[tuple[str, int, Span | None]]", declared: bool) -> list[Diagnostic]:
    """CT607 for a grid over the bounds, from its axes' (name, count, where) alone, before any is built.

    The one bound of every grid ctdsl sweeps, declared in the spec (`lin N`,
    `log N`), asked for on the command line (`--sweep name=lo:hi:n`, of `ctdsl
    sweep` and `ctdsl simulate`) or through `Study.sweep`: each axis at most
    MAX_SWEEP_POINTS points, the grid at most MAX_GRID_POINTS. `--sweep
    x=1:2:100000000` was held only to 10^8 points an axis and wrote 7.4 GB of
    CSV in 240 s; a declared sweep of as many points is refused by the checker.
    """
    out = []
    for name, count, where in axes:
        if count > limits.MAX_SWEEP_POINTS:
            out.append(
                Diagnostic(
                    "CT607",
                    f"the sweep of '{name}' has {count:,} points; at most {limits.MAX_SWEEP_POINTS:,} are swept on one axis",
                    where,
                    label=f"{count:,} points",
                    help="sweep fewer points",
                )
            )
    total = prod(count for _, count, _ in axes)
    if out or total <= limits.MAX_GRID_POINTS:
        return out
    many = [a for a in axes if a[1] > 1] or list(axes)
    counts = " x ".join(f"{count:,}" for _, count, _ in many)
    *first, (_, last_count, last) = many
    if declared:
        message = f"the params' sweeps make a grid of {counts} = {total:,} points; at most {limits.MAX_GRID_POINTS:,} are swept by default"
        hint = "declare fewer points, or choose the axes with --sweep name (or name=lo:hi:n)"
    else:
        message = f"the sweeps make a grid of {counts} = {total:,} points; at most {limits.MAX_GRID_POINTS:,} are swept"
        hint = "sweep fewer points, or fewer params at once"
    return [
        Diagnostic(
            "CT607",
            message,
            last,
            label=f"{last_count:,} points",
            secondary=tuple(Label(where, f"{count:,} points") for _, count, where in first if where is not None),
            help=hint,
        )
    ]


def check_default_grid(spec: Spec) -> None:
    """Raise Failure (CT607) when the spec's declared sweeps make a grid over the limit.

    The default grid of `ctdsl sweep` is the product of every param's declared
    count (`lin N` / `log N`); each count is within MAX_SWEEP_POINTS, but their
    product can still be 10^10 points, hours of work. Checked from the counts
    alone (`size_problems`), before any axis is built.
    """
    swept = [p for p in spec.params.values() if p.lo is not None and p.count]
    problems = size_problems([(p.name, p.count, p.span) for p in swept], declared=True)
    if problems:
        raise Failure(problems)
