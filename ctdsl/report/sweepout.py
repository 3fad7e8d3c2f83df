"""`ctdsl sweep`'s data as text: CSV or JSON, one row per grid point, written a chunk at a time.

The columns and their order are `ctdsl.numeric.columns` (docs/sweeps.md), handed
in by the caller (the report layer reads data, it does not compute it); the
binary formats are `ctdsl.report.sweep_binary`.

A value that cannot be computed (a division by zero, no steps to target) is
empty in CSV and null in JSON. Floats are written in Python's shortest
round-trip form, so the same spec gives byte-identical files.
"""

from __future__ import annotations

import csv
import json
from typing import TYPE_CHECKING, TextIO

import numpy as np

from ctdsl.report.encode import csv_cell
from ctdsl.diagnostics.terminal import json_command_safe

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from ctdsl.numeric.forms import CompiledForms
    from ctdsl.numeric.grid import Grid

SCHEMA = "ctdsl.sweep/1"


def _text(col, ch) -> list:
    return col.names(col.get(ch))


def _cells(col, ch, empty) -> list:
    if col.categorical:
        return [empty if x is None else x for x in _text(col, ch)]
    v = col.get(ch)
    a = np.asarray(v, dtype=np.float64)
    out = a.tolist()
    bad = ~np.isfinite(a)
    if bad.any():
        for i in np.flatnonzero(bad).tolist():
            out[i] = empty
    return out


def _quoted(text: str) -> str:
    """A text field as csv.writer writes it (QUOTE_MINIMAL)."""
    if any(c in text for c in ',"\n'):  # the delimiter, the quote and the line terminator
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv_fields(col, v, quoted: dict) -> list[str]:
    """A column's fields as text, as csv.writer would write them.

    Floats are written with repr (what csv.writer does), non-finite ones empty; a
    run of one repeated value is formatted once.
    """
    if col.categorical:
        out = []
        for x in v:
            q = quoted.get(x)
            if q is None:
                q = quoted[x] = "" if x is None else _quoted(csv_cell(x))
            out.append(q)
        return out
    n = len(v)
    if n > 1 and v.strides == (0,):
        x = float(v[0])
        return [repr(x) if np.isfinite(x) else ""] * n
    out = list(map(repr, v.tolist()))
    bad = ~np.isfinite(v)
    if bad.any():
        for i in np.flatnonzero(bad).tolist():
            out[i] = ""
    return out


class CsvWriter:
    BATCH = 4096  # rows formatted at a time, so that a chunk's text is never held whole

    def __init__(self, fh: TextIO, cols: list):
        self.fh = fh
        self.cols = cols
        self.quoted: dict = {}
        csv.writer(fh, lineterminator="\n").writerow([csv_cell(c.name) for c in cols])

    def write(self, ch) -> None:
        data = [_text(c, ch) if c.categorical else np.asarray(c.get(ch), dtype=np.float64) for c in self.cols]
        for i in range(0, len(ch), self.BATCH):
            fields = [_csv_fields(c, d[i : i + self.BATCH], self.quoted) for c, d in zip(self.cols, data)]
            self.fh.write("\n".join(map(",".join, zip(*fields))) + "\n")

    def close(self) -> None:
        self.fh.flush()


class JsonWriter:
    """A JSON object whose `rows` array is streamed; keys in a fixed order."""

    def __init__(self, fh: TextIO, cols: list, forms: CompiledForms, grid: Grid, size: int):
        self.fh = fh
        self.cols = cols
        self.first = True
        spec = forms.spec
        head = {
            "schema": SCHEMA,
            "spec": spec.root,
            "axes": [
                {"name": a.name, "unit": _unit(spec.params[a.name]), "lo": a.lo, "hi": a.hi, "count": a.count, "spacing": a.spacing}
                for a in grid.axes
            ],
            "params": {
                p.name: {"unit": _unit(p), "value": None if p.name in grid.names else float(p.default), "swept": p.name in grid.names}
                for p in spec.params.values()
            },
            "schemes": list(forms.schemes),
            "columns": [c.name for c in cols],
            "units": [c.unit for c in cols],
            "points": size,
        }
        text = json_command_safe(json.dumps(head, indent=1, allow_nan=False))
        fh.write(text[:-2] + ',\n "rows": [')

    def write(self, ch) -> None:
        parts = []
        for row in zip(*[_cells(c, ch, None) for c in self.cols]):
            cell = json_command_safe(json.dumps(row, allow_nan=False, separators=(",", ":")))
            parts.append(("\n  " if self.first else ",\n  ") + cell)
            self.first = False
        self.fh.write("".join(parts))

    def close(self) -> None:
        self.fh.write("\n ]\n}\n")
        self.fh.flush()


def _unit(p) -> str:
    return p.dim.symbol()
