"""`ctdsl sweep`'s data as binary columns: Parquet, Arrow (IPC file) or npz.

The columns are `ctdsl.numeric.columns` (handed in by the caller), the same as
CSV and JSON's, written
straight from the evaluated arrays a chunk at a time, with no text in between:

- a value is a float64 in base SI units; a value that cannot be computed is NaN
  (IEEE values are kept as they are: CSV's empty cell is NaN here);
- a categorical column (a binding component, the winner) is dictionary-encoded
  in Parquet and Arrow (int8 or int16 codes, its names as the dictionary, null
  for none), and in npz an int array of codes (-1 for none) beside an array
  `COLUMN.categories` of its names;
- each column's unit is in the file: Arrow and Parquet field metadata `unit`,
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


def header(cols: list, forms, grid) -> dict:
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
    }


class ArrowWriter:
    """Parquet (`parquet=True`) or an Arrow IPC file: one record batch (a row group) per chunk."""

    def __init__(self, fh: BinaryIO, cols: list, forms, grid, parquet: bool):
        import pyarrow as pa

        self.pa = pa
        self.cols = cols
        fields = []
        for c in cols:
            if c.categorical:
                kind = pa.dictionary(pa.from_numpy_dtype(c.dtype), pa.string())
                fields.append(pa.field(c.name, kind, metadata={"categories": json.dumps(list(c.categories))}))
            else:
                fields.append(pa.field(c.name, pa.float64(), metadata={"unit": c.unit}))
        meta = {"ctdsl": json.dumps(header(cols, forms, grid), allow_nan=False)}
        self.schema = pa.schema(fields, metadata=meta)
        self.dictionaries = {c.name: pa.array(list(c.categories), type=pa.string()) for c in cols if c.categorical}
        if parquet:
            import pyarrow.parquet as pq

            # dictionary encoding only where it pays (the categorical columns): on float columns of
            # distinct values it costs more time than it saves space
            cats = [c.name for c in cols if c.categorical]
            self.writer = pq.ParquetWriter(fh, self.schema, compression="snappy", use_dictionary=cats, write_statistics=False)
            self.write_batch = self.writer.write_batch
        else:
            self.writer = pa.ipc.new_file(fh, self.schema)
            self.write_batch = self.writer.write_batch

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
            else:
                arrays.append(pa.array(np.ascontiguousarray(np.broadcast_to(v, (len(ch),)), dtype=np.float64)))
        self.write_batch(pa.RecordBatch.from_arrays(arrays, schema=self.schema))

    def close(self) -> None:
        self.writer.close()


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


def binary_writer(fmt: str, fh: BinaryIO, cols: list, forms: CompiledForms, grid: Grid):
    if fmt == "npz":
        return NpzWriter(fh, cols, forms, grid)
    return ArrowWriter(fh, cols, forms, grid, parquet=fmt == "parquet")
