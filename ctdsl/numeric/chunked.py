"""Evaluate compiled forms over a grid, a chunk of points at a time.

Per point and scheme: step time, time and energy to target, each step-time
component, and the binding component, by the solver's rule
(`ctdsl.symbolic.solve`): the largest component, ties to the first in order
(compute, transform, then the phases); with overlap, compute when it is at least
the sum of the rest, else the largest of the rest; compute when every component
is zero. The winner at a point is the scheme with the smallest time to target
(ties to the first in the spec; schemes without steps to target never win; -1
where no scheme has a finite time).

A grid is a Cartesian product, and most subexpressions depend on one or two of
its params only. So a chunk is a block of the grid: whole rows of its trailing
axes, as many as fit, with each param passed in numpy's broadcast shape ((rows,
1) for the leading one, (1, n) for the last, ...). A subexpression of the WAN
bandwidth alone is then computed once per bandwidth, not once per point; only
what mixes params is computed per point. When even the last axis is longer than
a chunk, a chunk is a run of points with flat arrays.

Either way each value at a point is the same sequence of IEEE operations on the
same inputs, so blocks, flat runs and one call over the whole grid agree bit for
bit (tested). Memory is that of one chunk: at most (forms + schemes) x chunk
points x 8 bytes, plus numpy's temporaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import prod
from typing import Iterator

import numpy as np

from ctdsl.language.components import COMPUTE, sides
from ctdsl.numeric.forms import TIME, CompiledForms
from ctdsl.numeric.grid import Grid

DEFAULT_CHUNK = 1 << 16  # points in a block of whole rows (docs/sweeps.md)
FLAT_CHUNK = 1 << 14  # at most this many in a run of flat arrays: 128 kB each, which stay in cache


class Flat(Mapping):
    """Arrays in a block's broadcast shape, each given flat (one value per point) when asked for.

    A value that does not cover the whole block is broadcast then; a read-only
    view when it is one value, a copy otherwise.
    """

    def __init__(self, raw: dict, shape: tuple[int, ...]):
        self._raw = raw
        self._shape = shape
        self._n = prod(shape)

    def __getitem__(self, key) -> np.ndarray:
        a = self._raw[key]
        if a.shape == (self._n,):
            return a
        if a.size == 1:
            return np.broadcast_to(a.reshape(()), (self._n,))
        return np.broadcast_to(a, self._shape).reshape(self._n)

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@dataclass
class Chunk:
    start: int  # first point's number in the grid
    stop: int
    params: Flat  # the swept params' values at each point
    values: Flat  # (scheme, quantity) -> one value per point
    binding: dict[str, np.ndarray]  # scheme -> index into CompiledForms.schemes[s].components
    winner: np.ndarray  # index into `ranked`, -1 for none
    ranked: list[str]  # the schemes that can win: those with steps to target, in spec order

    def __len__(self) -> int:
        return self.stop - self.start

    def binding_names(self, scheme: str, forms: CompiledForms) -> np.ndarray:
        """The binding component (a ComponentId) at each point."""
        names = np.empty(len(forms.schemes[scheme].components), dtype=object)
        names[:] = forms.schemes[scheme].components
        return names[self.binding[scheme]]

    def winner_names(self) -> np.ndarray:
        names = np.array(self.ranked + [None], dtype=object)
        return names[self.winner]  # -1 picks the trailing None


def _evaluate(forms: CompiledForms, arrays: dict, scalars: dict, shape: tuple[int, ...], start: int) -> Chunk:
    n = prod(shape)
    raw = forms.evaluate_raw({**scalars, **arrays})
    binding = {name: _flat(_binding(sf, raw), shape, n) for name, sf in forms.schemes.items()}
    ranked = [name for name, sf in forms.schemes.items() if sf.has_steps]
    winner = _flat(_winner([raw[(s, TIME)] for s in ranked]), shape, n)
    return Chunk(start, start + n, Flat(arrays, shape), Flat(raw, shape), binding, winner, ranked)


def evaluate(forms: CompiledForms, params: dict[str, object], start: int = 0) -> Chunk:
    """Every form at the given points: params maps names to floats or 1-D arrays of one length."""
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in params.items() if np.ndim(v) > 0}
    n = next((len(a) for a in arrays.values()), 1)
    scalars = {k: float(v) for k, v in params.items() if np.ndim(v) == 0}
    return _evaluate(forms, arrays, scalars, (n,), start)


def iter_chunks(forms: CompiledForms, grid: Grid, chunk: int = DEFAULT_CHUNK) -> Iterator[Chunk]:
    """The grid's points in order, at most `chunk` at a time (blocks of whole rows when they fit)."""
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    shape = grid.shape
    if not shape:  # no axes: one point, every param at its value
        yield evaluate(forms, {}, 0)
        return
    # the trailing axes that fit whole in a chunk
    j, inner = len(shape), 1
    while j > 0 and inner * shape[j - 1] <= chunk:
        j -= 1
        inner *= shape[j]
    if j == len(shape):  # the last axis alone is longer than a chunk: runs of points
        run = min(chunk, FLAT_CHUNK)
        for start in range(0, grid.size, run):
            yield evaluate(forms, grid.points(start, min(start + run, grid.size)), start)
        return
    lead, trail = grid.axes[:j], grid.axes[j:]
    outer = prod(shape[:j])
    rows = max(1, chunk // inner)
    dims = len(trail) + 1
    fixed = {}
    for m, a in enumerate(trail, 1):
        view = [1] * dims
        view[m] = a.count
        fixed[a.name] = a.values.reshape(view)
    for o in range(0, outer, rows):
        o2 = min(o + rows, outer)
        arrays = dict(fixed)
        if lead:
            index = np.unravel_index(np.arange(o, o2), shape[:j])
            for a, i in zip(lead, index):
                arrays[a.name] = a.values[i].reshape([o2 - o] + [1] * (dims - 1))
        block = (o2 - o,) + shape[j:]
        yield _evaluate(forms, arrays, {}, block, o * inner)


def _flat(a, shape: tuple[int, ...], n: int) -> np.ndarray:
    return np.broadcast_to(a, shape).reshape(n).copy() if np.shape(a) != (n,) else a


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
    last = order[-1]
    for i in order[1:]:
        v = values[i]
        gt = v > best
        if np.ndim(gt) == 0:
            if gt:
                best, index = v, np.full(np.shape(v), i, dtype=dtype)
            continue
        if i != last:  # the best value itself is not needed after the last comparison
            best = np.where(gt, v, best)
        index = np.where(gt, dtype(i), index)
    return index


def _binding(sf, raw) -> np.ndarray:
    """The rule of ctdsl.language.components, over arrays: the largest component; with overlap, the
    largest component of the larger side of max(compute + stragglers, transform + sync)."""
    comps = [raw[(sf.name, "component:" + c.id)] for c in sf.components]
    dt = np.int8 if len(comps) < 128 else np.int16
    ci = sf.components.index(COMPUTE) if COMPUTE in sf.components else 0
    worked_names, other_names = sides(list(sf.components))
    worked = [sf.components.index(c) for c in worked_names]
    others = [sf.components.index(c) for c in other_names]
    if sf.overlap and others and worked:
        total_w, total_o = _sum([comps[i] for i in worked]), _sum([comps[i] for i in others])
        best_w = np.asarray(worked, dtype=dt)[_first_max([comps[i] for i in worked], dt)]
        best_o = np.asarray(others, dtype=dt)[_first_max([comps[i] for i in others], dt)]
        out = np.where(total_w >= total_o, best_w, best_o)
    else:
        out = _first_max(comps, dt)
        if ci != 0:  # the solver names compute when every component is zero
            out = np.where(_sum(comps) == 0, dt(ci), out)
    return np.asarray(out, dtype=dt)


def _sum(arrays: list):
    total = arrays[0]
    for a in arrays[1:]:
        total = total + a
    return total


def _winner(times: list) -> np.ndarray:
    """The first scheme with the smallest time; -1 where none is finite (a NaN never wins)."""
    if not times:
        return np.full((), -1, dtype=np.int16)
    best = times[0]
    nan = np.isnan(best)
    if nan.any():
        best = np.where(nan, np.inf, best)
    index = np.zeros(np.shape(best), dtype=np.int16)
    for i, t in enumerate(times[1:], 1):
        lt = t < best
        best = np.where(lt, t, best)
        index = np.where(lt, np.int16(i), index)
    index = np.array(np.broadcast_to(index, np.broadcast_shapes(np.shape(index), np.shape(best))), dtype=np.int16)
    none = ~np.isfinite(best)
    if none.any():
        index[np.broadcast_to(none, index.shape)] = -1
    return index
