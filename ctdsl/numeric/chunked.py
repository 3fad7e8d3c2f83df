"""Evaluate compiled forms over a grid, a chunk of points at a time.

Per point and scheme: step time, time and energy to target, each step-time
component, and the binding component, by the solver's rule
(`ctdsl.symbolic.solve`): the largest component, ties to the first in order
(compute, transform, then the phases); with overlap, compute when it is at least
the sum of the rest, else the largest of the rest; compute when every component
is zero. The winner at a point is the scheme with the smallest time to target
(ties to the first in the spec; schemes without steps to target never win; -1
where no scheme has a finite time).

Every value at a point depends only on that point's params: numpy's arithmetic
is elementwise, so a chunk gives exactly (bit for bit) what the whole grid in one
call would give at the same points. Memory is that of one chunk: about
(number of forms + schemes) x chunk points x 8 bytes, plus numpy's temporaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ctdsl.numeric.forms import TIME, CompiledForms
from ctdsl.numeric.grid import Grid

DEFAULT_CHUNK = 1 << 16


@dataclass
class Chunk:
    start: int  # first point's number in the grid
    stop: int
    params: dict[str, np.ndarray]  # the swept params' values at each point
    values: dict[tuple[str, str], np.ndarray]  # (scheme, quantity) -> one value per point
    binding: dict[str, np.ndarray]  # scheme -> index into CompiledForms.schemes[s].components
    winner: np.ndarray  # index into `ranked`, -1 for none
    ranked: list[str]  # the schemes that can win: those with steps to target, in spec order

    def __len__(self) -> int:
        return self.stop - self.start

    def binding_names(self, scheme: str, forms: CompiledForms) -> np.ndarray:
        names = np.array(forms.schemes[scheme].components, dtype=object)
        return names[self.binding[scheme]]

    def winner_names(self) -> np.ndarray:
        names = np.array(self.ranked + [None], dtype=object)
        return names[self.winner]  # -1 picks the trailing None


def evaluate(forms: CompiledForms, params: dict[str, object], start: int = 0) -> Chunk:
    """Every form at the given points: params maps names to floats or 1-D arrays of one length.

    Forms that do not depend on a varying param come back as read-only views of
    one value (`np.broadcast_to`), which costs no memory per point.
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in params.items() if np.ndim(v) > 0}
    n = next((len(a) for a in arrays.values()), 1)
    scalars = {k: float(v) for k, v in params.items() if np.ndim(v) == 0}
    raw = forms.evaluate_raw({**scalars, **arrays})
    values = {k: (a if a.shape == (n,) else np.broadcast_to(a, (n,))) for k, a in raw.items()}
    binding = {name: _binding(sf, raw, n) for name, sf in forms.schemes.items()}
    ranked = [name for name, sf in forms.schemes.items() if sf.has_steps]
    winner = _winner([raw[(s, TIME)] for s in ranked], n)
    return Chunk(start, start + n, arrays, values, binding, winner, ranked)


def iter_chunks(forms: CompiledForms, grid: Grid, chunk: int = DEFAULT_CHUNK) -> Iterator[Chunk]:
    """The grid's points in order, `chunk` at a time."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    for start in range(0, grid.size, chunk):
        stop = min(start + chunk, grid.size)
        pts = grid.points(start, stop)
        if not pts:  # no axes: one point, every param at its value
            yield evaluate(forms, {}, start)
        else:
            yield evaluate(forms, pts, start)


def _first_max(values: list, dtype=np.int8) -> object:
    """Index of the largest value, the first on ties, as Python's max() picks it.

    Values are arrays or 0-d arrays (forms that do not vary); a later value
    replaces the best only when strictly greater, so a NaN never wins unless it
    comes first, exactly as max() over floats behaves in the solver.
    """
    # A value that does not vary and is at most an earlier one that does not vary
    # can never be picked (the best so far is already at least as large), so it is
    # left out of the comparisons: most components of a step are such constants.
    order = []
    top = None
    for i, v in enumerate(values):
        if np.ndim(v) == 0 and i > 0:
            if top is not None and top >= v:
                continue
            top = v if top is None or v > top else top
        elif np.ndim(v) == 0:
            top = v
        order.append(i)
    best = values[0]
    index = np.zeros(np.shape(best), dtype=dtype)
    for i in order[1:]:
        v = values[i]
        gt = v > best
        if np.ndim(gt) == 0:
            if gt:
                best, index = v, np.full(np.shape(v), i, dtype=dtype)
            continue
        best = np.where(gt, v, best)
        index = np.where(gt, dtype(i), index)
    return index


def _binding(sf, raw, n: int) -> np.ndarray:
    comps = [raw[(sf.name, "component:" + c)] for c in sf.components]
    dt = np.int8 if len(comps) < 128 else np.int16
    ci = sf.components.index("compute") if "compute" in sf.components else 0
    others = [i for i in range(len(comps)) if i != ci]
    if sf.overlap and others:
        hidden = comps[others[0]]
        for i in others[1:]:
            hidden = hidden + comps[i]
        best = np.asarray(others, dtype=dt)[_first_max([comps[i] for i in others], dt)]
        out = np.where(comps[ci] >= hidden, dt(ci), best)
    else:
        out = _first_max(comps, dt)
        if ci != 0:  # the solver names compute when every component is zero
            total = comps[0]
            for c in comps[1:]:
                total = total + c
            out = np.where(total == 0, dt(ci), out)
    return np.broadcast_to(np.asarray(out, dtype=dt), (n,)).copy()


def _winner(times: list, n: int) -> np.ndarray:
    """The first scheme with the smallest time; -1 where none is finite."""
    if not times:
        return np.full(n, -1, dtype=np.int16)
    best = np.where(np.isnan(times[0]), np.inf, times[0])
    index = np.zeros(np.shape(best), dtype=np.int16)
    for i, t in enumerate(times[1:], 1):
        lt = t < best
        best = np.where(lt, t, best)
        index = np.where(lt, np.int16(i), index)
    index = np.where(np.isfinite(best), index, np.int16(-1))
    return np.broadcast_to(np.asarray(index, dtype=np.int16), (n,)).copy()
