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
    """Every form at the given points: params maps names to floats or 1-D arrays of one length."""
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in params.items() if np.ndim(v) > 0}
    n = next((len(a) for a in arrays.values()), 1)
    scalars = {k: float(v) for k, v in params.items() if np.ndim(v) == 0}
    values = forms.evaluate({**scalars, **arrays})
    for k, a in values.items():
        if a.shape != (n,):
            values[k] = np.broadcast_to(a, (n,)).copy()
    binding = {name: _binding(sf, values, n) for name, sf in forms.schemes.items()}
    ranked = [name for name, sf in forms.schemes.items() if sf.has_steps]
    winner = _winner([values[(s, TIME)] for s in ranked], n)
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


def _binding(sf, values, n: int) -> np.ndarray:
    comps = [values[(sf.name, "component:" + c)] for c in sf.components]
    ci = sf.components.index("compute") if "compute" in sf.components else 0
    if len(comps) == 1:
        return np.zeros(n, dtype=np.int16)
    if sf.overlap:
        others = [i for i in range(len(comps)) if i != ci]
        hidden = comps[others[0]].copy()
        for i in others[1:]:
            hidden += comps[i]
        best = np.asarray(others, dtype=np.int16)[np.argmax(np.stack([comps[i] for i in others]), axis=0)]
        return np.where(comps[ci] >= hidden, np.int16(ci), best).astype(np.int16)
    total = comps[0].copy()
    for c in comps[1:]:
        total += c
    best = np.argmax(np.stack(comps), axis=0).astype(np.int16)
    return np.where(total == 0, np.int16(ci), best).astype(np.int16)


def _winner(times: list[np.ndarray], n: int) -> np.ndarray:
    if not times:
        return np.full(n, -1, dtype=np.int16)
    t = np.stack(times)
    t = np.where(np.isnan(t), np.inf, t)
    best = np.argmin(t, axis=0).astype(np.int16)
    none = ~np.isfinite(t.min(axis=0))
    best[none] = -1
    return best
