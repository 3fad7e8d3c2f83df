"""`Study.sweep(..., client=...)`: the compiled forms evaluated on a Dask cluster, a chunk per task.

The grid's points are cut into runs of `chunk` points; each run is one
`dask.delayed` evaluation of the compiled forms (`chunked.evaluate` over
`Grid.points(start, stop)`, on a worker: the forms are sent once, scattered to
every worker), and each column is a chunked `dask.array` over those runs
(`da.from_delayed`, concatenated). All the columns are computed together on the
client's cluster, so each run is evaluated once; the result is the same
`SweepResult` a local `collect` gives, with the same limit on the points it holds
(MAX_POINTS_IN_MEMORY). Only this module of `ctdsl.numeric` imports dask.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

import dask
import dask.array as da
import numpy as np

from ctdsl.numeric.chunked import DEFAULT_CHUNK, evaluate
from ctdsl.numeric.columns import columns
from ctdsl.numeric.grid import Grid
from ctdsl.numeric.forms import CompiledForms
from ctdsl.numeric.sweepdata import MAX_POINTS_IN_MEMORY, SweepResult

if TYPE_CHECKING:  # types only: no import at run time
    from distributed import Client


def _run(forms, grid: Grid, components: bool, start: int, stop: int) -> dict[str, np.ndarray]:
    """On a worker: every column's values at points start .. stop-1."""
    ch = evaluate(forms, grid.points(start, stop), start) if grid.axes else evaluate(forms, {}, 0)
    out = {}
    for c in columns(forms, components):
        a = np.empty(stop - start, dtype=c.dtype)
        a[:] = c.get(ch)
        out[c.name] = a
    return out


def collect_on(client: Client, forms: CompiledForms, grid: Grid, components: bool = False, chunk: int = DEFAULT_CHUNK) -> SweepResult:
    """`sweepdata.collect`, evaluated on `client`'s cluster."""
    if grid.size > MAX_POINTS_IN_MEMORY:
        raise ValueError(f"the grid has {grid.size:,} points; Study.sweep holds at most {MAX_POINTS_IN_MEMORY:,} in memory (write a file with `ctdsl sweep -f parquet`)")
    if chunk < 1:
        raise ValueError("chunk must be at least 1")
    cols = columns(forms, components)
    shared = client.scatter(forms, broadcast=True)
    runs = [(a, min(a + chunk, grid.size)) for a in range(0, grid.size, chunk)]
    parts = [dask.delayed(_run, pure=False)(shared, grid, components, a, b) for a, b in runs]
    arrays = {
        c.name: da.concatenate([da.from_delayed(p[c.name], shape=(b - a,), dtype=c.dtype) for p, (a, b) in zip(parts, runs)])
        for c in cols
    }
    computed = client.compute(list(arrays.values()), sync=True)
    data = {}
    for name, a in zip(arrays, computed):
        a = np.asarray(a)
        a.setflags(write=False)
        data[name] = a
    return SweepResult(
        spec=forms.spec.root,
        axes=tuple(grid.axes),
        data=MappingProxyType(data),
        units=MappingProxyType({c.name: c.unit for c in cols}),
        categories=MappingProxyType({c.name: c.categories for c in cols if c.categorical}),
        param_columns=MappingProxyType({p: c.name for p, c in zip(forms.spec.params, cols)}),
        long_names=MappingProxyType({c.name: c.long_name for c in cols}),
        cf_units=MappingProxyType({c.name: c.cf_units for c in cols if not c.categorical}),
    )


__all__ = ["collect_on"]
