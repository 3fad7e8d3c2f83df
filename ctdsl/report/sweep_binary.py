"""`ctdsl sweep`'s data as binary columns: Parquet, Arrow (IPC file) or npz.

The columns are `ctdsl.numeric.columns` (handed in by the caller), the same as
CSV and JSON's, written
straight from the evaluated arrays a chunk at a time, with no text in between:

- a value is in base SI units; a value that cannot be computed is NaN (IEEE
  values are kept as they are: CSV's empty cell is NaN here). Arrow and npz,
  made to be memory-mapped, hold float64. Parquet, made to be stored, holds the
  params (the grid's coordinates) as float64 and the results as float32: the
  results are shown to 4 figures and come from datasheet inputs of 2 to 4, and
  float32 keeps 7 (a relative rounding of at most 2^-24, 6e-8); the winner and
  the binding components are decided in float64 before. The header lists the
  float32 columns (`float32`), and a result out of float32's normal range (past
  3.4e38, or under 1.2e-38 but not 0) stops the write: `--float64` keeps every
  value as float64;
- Parquet sizes honestly: a column that repeats (a param, a result that does
  not depend on every swept param: at most one distinct value in 8 in the first
  row group) is dictionary- and run-length encoded, the others byte-stream-split
  (a float's bytes by significance, which compresses), all with zstd; one row
  group a chunk (65,536 points);
- a categorical column (a binding component, the winner) is dictionary-encoded
  in Parquet and Arrow (int8 or int16 codes, its names as the dictionary, null
  for none), and in npz an int array of codes (-1 for none) beside an array
  `COLUMN.categories` of its names;
- each column's unit is in the file: Arrow and Parquet field metadata `unit`
  (ctdsl's symbol), `units` (the same in UDUNITS-2 syntax, as the CF convention
  names it: `byte/s`; absent for USD, which UDUNITS has not) and `long_name`,
  and for every format a JSON header (schema `ctdsl.sweep/1`, the spec, the
  axes, the params, the columns and their units): the schema metadata key
  `ctdsl` in Parquet and Arrow, the 0-d string array `__meta__` in npz.

pyarrow is needed for Parquet and Arrow (`pip install ctdsl[data]`); npz needs
numpy only. An npz is written column by column from temporary .npy files, so its
memory is that of one chunk too. The files are deterministic: the same spec and
grid give the same bytes (the zip entries carry a fixed date).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from ctdsl.report.sweepout import SCHEMA

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from ctdsl.numeric.forms import CompiledForms
    from ctdsl.numeric.grid import Grid

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip entry can carry: a fixed date keeps the file deterministic
F32 = np.finfo(np.float32)
REPEATS = 8  # a numeric column with at most one distinct value in REPEATS in the first row group is dictionary-encoded


class Float32Range(ValueError):
    """A result that float32 cannot hold (past its range, or under its normal range): write with --float64."""

    def __init__(self, column: str, value: float):
        super().__init__(f"{column} holds {value!r}, outside float32's range (1.2e-38 to 3.4e38)")
        self.column, self.value = column, value


def header(cols: list, forms, grid, float32: list[str] | None = None) -> dict:
    """What every binary file says about itself, besides its columns' values."""
    spec = forms.spec
    return {
        "schema": SCHEMA,
        "spec": spec.root,
        "axes": [
            {"name": a.name, "unit": spec.params[a.name].dim.symbol(), "lo": a.lo, "hi": a.hi, "count": a.count, "spacing": a.spacing}
            for a in grid.axes
        ],
        "params": {
            p.name: {"unit": p.dim.symbol(), "value": None if p.name in grid.names else float(p.default), "swept": p.name in grid.names}
            for p in spec.params.values()
        },
        "schemes": list(forms.schemes),
        "columns": [c.name for c in cols],
        "units": [c.unit for c in cols],
        "categories": {c.name: list(c.categories) for c in cols if c.categorical},
        "points": grid.size,
        **({"float32": float32} if float32 is not None else {}),
    }


class ArrowWriter:
    """Parquet (`parquet=True`) or an Arrow IPC file: one record batch (a row group) per chunk."""

    def __init__(self, fh: BinaryIO, cols: list, forms, grid, parquet: bool, float64: bool = False):
        import pyarrow as pa

        self.pa, self.fh, self.cols, self.parquet = pa, fh, cols, parquet
        self.float32 = [] if not parquet or float64 else [c.name for c in cols if not c.categorical and not c.param]
        narrow = set(self.float32)
        fields = []
        for c in cols:
            if c.categorical:
                kind = pa.dictionary(pa.from_numpy_dtype(c.dtype), pa.string())
                meta = {"categories": json.dumps(list(c.categories)), "long_name": c.long_name}
                fields.append(pa.field(c.name, kind, metadata=meta))
            else:
                meta = {"unit": c.unit, **({"units": c.cf_units} if c.cf_units else {}), "long_name": c.long_name}
                fields.append(pa.field(c.name, pa.float32() if c.name in narrow else pa.float64(), metadata=meta))
        meta = {"ctdsl": json.dumps(header(cols, forms, grid, self.float32 if parquet else None), allow_nan=False)}
        self.schema = pa.schema(fields, metadata=meta)
        self.dictionaries = {c.name: pa.array(list(c.categories), type=pa.string()) for c in cols if c.categorical}
        self.writer = None if parquet else pa.ipc.new_file(fh, self.schema)  # Parquet's: at the first chunk

    def _parquet_writer(self, arrays: list):
        """Each column's encoding, from the first row group: dictionary where it repeats, else byte-stream split."""
        import pyarrow.parquet as pq

        repeats, split = [], []
        for c, a in zip(self.cols, arrays):
            if c.categorical:
                repeats.append(c.name)
                continue
            values = a.to_numpy(zero_copy_only=False)
            (repeats if np.unique(values).size * REPEATS <= max(len(values), 1) else split).append(c.name)
        return pq.ParquetWriter(self.fh, self.schema, compression="zstd", use_dictionary=repeats,
                                use_byte_stream_split=split or False, write_statistics=False)  # fmt: skip

    def write(self, ch) -> None:
        pa = self.pa
        arrays = []
        for c in self.cols:
            v = c.get(ch)
            if c.categorical:
                codes = np.ascontiguousarray(np.broadcast_to(v, (len(ch),)), dtype=c.dtype)
                none = codes < 0
                indices = pa.array(np.where(none, 0, codes), mask=none if none.any() else None)
                arrays.append(pa.DictionaryArray.from_arrays(indices, self.dictionaries[c.name]))
            elif c.name in self.float32:
                arrays.append(pa.array(_as_float32(c.name, np.broadcast_to(np.asarray(v, dtype=np.float64), (len(ch),)))))
            else:
                arrays.append(pa.array(np.ascontiguousarray(np.broadcast_to(v, (len(ch),)), dtype=np.float64)))
        if self.writer is None:
            self.writer = self._parquet_writer(arrays)
        self.writer.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self.schema))

    def close(self) -> None:
        if self.writer is None:  # no chunk: a Parquet file of the schema alone
            import pyarrow.parquet as pq

            self.writer = pq.ParquetWriter(self.fh, self.schema, compression="zstd")
        self.writer.close()


def _as_float32(name: str, v: np.ndarray) -> np.ndarray:
    """v rounded to float32, or Float32Range where a finite value is outside float32's normal range."""
    out = v.astype(np.float32)
    mag = np.abs(v)
    bad = np.isfinite(v) & ((mag > F32.max) | ((mag < F32.tiny) & (mag > 0)))
    if bad.any():
        raise Float32Range(name, float(v[np.flatnonzero(bad)[0]]))
    return out


class NpzWriter:
    """An uncompressed npz: each column streamed to a temporary .npy, then zipped."""

    def __init__(self, fh: BinaryIO, cols: list, forms, grid):
        self.fh = fh
        self.cols = cols
        self.meta = header(cols, forms, grid)
        self.size = grid.size
        self.tmp = tempfile.TemporaryDirectory(prefix="ctdsl-npz-")
        self.parts: list[tuple[str, Path, BinaryIO, np.dtype]] = []
        for i, c in enumerate(cols):
            dtype = np.dtype(c.dtype)
            path = Path(self.tmp.name) / f"{i}.npy"
            part = open(path, "wb")
            np.lib.format.write_array_header_1_0(
                part, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (self.size,)}
            )
            self.parts.append((c.name, path, part, dtype))

    def write(self, ch) -> None:
        for (name, _, part, dtype), c in zip(self.parts, self.cols):
            part.write(np.ascontiguousarray(np.broadcast_to(c.get(ch), (len(ch),)), dtype=dtype).tobytes())

    def close(self) -> None:
        try:
            with zipfile.ZipFile(self.fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
                self._entry(zf, "__meta__", np.array(json.dumps(self.meta, allow_nan=False)))
                for (name, path, part, _), c in zip(self.parts, self.cols):
                    part.close()
                    with open(path, "rb") as src, zf.open(zipfile.ZipInfo(name + ".npy", ZIP_DATE), "w", force_zip64=True) as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
                    if c.categorical:
                        self._entry(zf, name + ".categories", np.array(list(c.categories), dtype=str))
        finally:
            for _, _, part, _ in self.parts:
                part.close()
            self.tmp.cleanup()

    @staticmethod
    def _entry(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
        with zf.open(zipfile.ZipInfo(name + ".npy", ZIP_DATE), "w", force_zip64=True) as dst:
            np.lib.format.write_array(dst, array, allow_pickle=False)


def binary_writer(fmt: str, fh: BinaryIO, cols: list, forms: CompiledForms, grid: Grid, float64: bool = False):
    if fmt == "npz":
        return NpzWriter(fh, cols, forms, grid)
    return ArrowWriter(fh, cols, forms, grid, parquet=fmt == "parquet", float64=float64)
