"""Which scheme reaches the target first over two params: the data a winner map draws.

Evaluated on the two axes' grid (the first axis along x, the second along y)
with every other param at its value, by the same chunked evaluator as `ctdsl
sweep`, so the map's regions are the sweep's `winner` column on that grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ctdsl.numeric.chunked import iter_chunks
from ctdsl.numeric.forms import CompiledForms
from ctdsl.numeric.grid import Axis, Grid

MAX_MAP_POINTS = 250_000  # 500 x 500: more than a figure can show


@dataclass(frozen=True)
class WinnerMap:
    x: object  # the Param along x
    y: object  # the Param along y
    xs: np.ndarray  # base units
    ys: np.ndarray
    logx: bool
    logy: bool
    winner: np.ndarray  # shape (len(ys), len(xs)): index into `ranked`, -1 where no scheme has a finite time
    ranked: tuple[str, ...]  # the schemes that can win, in spec order


def winner_map(forms: CompiledForms, x: Axis, y: Axis) -> WinnerMap:
    """The winner at each point of x by y."""
    if x.count * y.count > MAX_MAP_POINTS:
        raise ValueError(f"a winner map of {x.count} x {y.count} points is more than {MAX_MAP_POINTS:,}")
    grid = Grid([y, x])  # row-major: y slow, x fast, so the codes reshape to (len(y), len(x))
    codes = np.empty(grid.size, dtype=np.int16)
    ranked: tuple[str, ...] = ()
    for ch in iter_chunks(forms, grid):
        codes[ch.start : ch.stop] = ch.winner
        ranked = tuple(ch.ranked)
    params = forms.spec.params
    return WinnerMap(
        params[x.name], params[y.name], np.asarray(x.values), np.asarray(y.values), x.spacing == "log", y.spacing == "log",
        codes.reshape(y.count, x.count), ranked,
    )  # fmt: skip
