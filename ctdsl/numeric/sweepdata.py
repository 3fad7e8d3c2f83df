"""A sweep held in memory: `Study.sweep()`'s result, every column a numpy array in SI units.

    sw = ctdsl.load("specs/llama70b_wan.ct").sweep({"wan_bw": ("1 GB/s", "100 GB/s", 50, "log")})
    sw["adamw.time_to_target_s"]        # float64, one value per grid point, in s
    sw.unit("adamw.time_to_target_s")   # "s"
    sw.names("winner")                  # the winner at each point, as scheme names
    sw.grid("adamw.step_s")             # the same values in the grid's shape (axes in order)
    sw.to_pandas(); sw.to_xarray()      # where pandas / xarray are installed (ctdsl[data])
    sw.to_netcdf("grid.nc")             # the Dataset as netCDF-4 (h5netcdf, in ctdsl[data])

Points are in the grid's row-major order (the last axis varies fastest), as in
`ctdsl sweep`'s files, whose columns these are (`ctdsl.numeric.columns`). A
categorical column (a binding component, the winner) holds int8 (or int16) codes
into its categories, -1 for none.

`to_xarray()` names its attributes by the CF convention (cfconventions.org, 1.11),
which xarray, cf-xarray, pint-xarray and plotting tools read: a value's `units`
in UDUNITS-2 syntax (`byte/s`; `ctdsl.units.udunits`) and its `long_name`, with
ctdsl's own symbol as `ctdsl_unit`; a categorical variable's codes with
`flag_values` and `flag_meanings` (its names, each made one word), -1 meaning
none, and its names as they are in `categories`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

import numpy as np

from ctdsl.extras import require
from ctdsl.numeric.chunked import DEFAULT_CHUNK, iter_chunks
from ctdsl.numeric.columns import columns
from ctdsl.numeric.forms import CompiledForms
from ctdsl.numeric.grid import Axis, Grid

MAX_POINTS_IN_MEMORY = 10_000_000  # Study.sweep holds every column whole; larger grids go to a file


@dataclass(frozen=True)
class SweepResult:
    spec: str  # the spec's root file
    axes: tuple[Axis, ...]
    data: Mapping[str, np.ndarray]  # column name -> values (float64) or codes (int8/int16), read-only
    units: Mapping[str, str | None]  # column name -> base SI unit; None for a categorical column
    categories: Mapping[str, tuple[str, ...]]  # categorical column -> its names
    param_columns: Mapping[str, str]  # param -> the column of its values
    long_names: Mapping[str, str] = field(default_factory=dict)  # column name -> what it holds, in words
    cf_units: Mapping[str, str | None] = field(default_factory=dict)  # column name -> its unit in UDUNITS-2 syntax

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]

    def __iter__(self):
        return iter(self.data)

    def __len__(self) -> int:
        return len(next(iter(self.data.values()))) if self.data else 0

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a.count for a in self.axes)

    def unit(self, name: str) -> str | None:
        return self.units[name]

    def names(self, name: str) -> list:
        """A categorical column as names, None where there is none."""
        table = np.array(list(self.categories[name]) + [None], dtype=object)
        return table[self.data[name]].tolist()

    def grid(self, name: str) -> np.ndarray:
        """A column in the grid's shape: one axis per swept param, in order."""
        return self.data[name].reshape(self.shape)

    def to_pandas(self):
        """A DataFrame, one row per point; categorical columns as pandas Categoricals."""
        pd = require("pandas", "to_pandas()")

        out = {}
        for name, a in self.data.items():
            if name in self.categories:
                out[name] = pd.Categorical.from_codes(a, categories=list(self.categories[name]))
            else:
                out[name] = a
        df = pd.DataFrame(out)
        df.attrs["units"] = dict(self.units)
        df.attrs["spec"] = self.spec
        return df

    def to_xarray(self):
        """An xarray Dataset over the swept axes, its attributes by the CF convention (`units`, `long_name`)."""
        xr = require("xarray", "to_xarray()")

        dims = [a.name for a in self.axes]
        coords = {a.name: (a.name, np.asarray(a.values), self._cf(self.param_columns[a.name])) for a in self.axes}
        swept = {self.param_columns[a.name] for a in self.axes}  # their values are the coordinates
        variables = {}
        for name, a in self.data.items():
            if name not in swept:
                variables[name] = (dims, a.reshape(self.shape), self._cf(name))
        return xr.Dataset(variables, coords=coords, attrs={"spec": self.spec, "Conventions": "CF-1.11"})

    def _cf(self, name: str) -> dict:
        """A column's attributes by the CF convention."""
        attrs = {"long_name": self.long_names.get(name, name)}
        if name in self.categories:
            names = list(self.categories[name])
            attrs["flag_values"] = np.arange(-1, len(names), dtype=self.data[name].dtype)
            attrs["flag_meanings"] = " ".join(flag_word(n) for n in ["none", *names])
            attrs["categories"] = names
            return attrs
        if self.cf_units.get(name):
            attrs["units"] = self.cf_units[name]
        attrs["ctdsl_unit"] = self.units[name]
        return attrs

    def to_netcdf(self, path) -> None:
        """The Dataset of `to_xarray()` as a netCDF-4 file (h5netcdf: no netCDF C library needed)."""
        require("h5netcdf", "to_netcdf()")
        require("h5py", "to_netcdf()")
        self.to_xarray().to_netcdf(path, engine="h5netcdf")

    def __repr__(self) -> str:
        axes = ", ".join(f"{a.name}[{a.count}]" for a in self.axes) or "one point"
        return f"<SweepResult {self.spec}: {len(self):,} points over {axes}, {len(self.data)} columns>"


def collect(forms: CompiledForms, grid: Grid, components: bool = False, chunk: int = DEFAULT_CHUNK) -> SweepResult:
    """Evaluate the grid a chunk at a time into whole columns."""
    if grid.size > MAX_POINTS_IN_MEMORY:
        raise ValueError(f"the grid has {grid.size:,} points; Study.sweep holds at most {MAX_POINTS_IN_MEMORY:,} in memory (write a file with `ctdsl sweep -f parquet`)")
    cols = columns(forms, components)
    data = {c.name: np.empty(grid.size, dtype=c.dtype) for c in cols}
    for ch in iter_chunks(forms, grid, chunk):
        for c in cols:
            data[c.name][ch.start : ch.stop] = c.get(ch)
    for a in data.values():
        a.setflags(write=False)
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


_NOT_IN_A_FLAG = re.compile(r"[^A-Za-z0-9_.+@-]+")


def flag_word(name: str) -> str:
    """A category's name as one word of CF's flag_meanings (letters, digits and _-.+@): `sync (exposed)` -> `sync_exposed`."""
    return _NOT_IN_A_FLAG.sub("_", name).strip("_") or "_"

