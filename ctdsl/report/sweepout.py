"""`ctdsl sweep`'s data: CSV or JSON, one row per grid point, written a chunk at a time.

Columns, in order (docs/sweeps.md):

- every param, in base SI units, named with its unit: `wan_bw_B_per_s`, `eff`
  (swept params vary, the others repeat their value);
- per scheme, in spec order: `SCHEME.step_s`, `SCHEME.time_to_target_s`,
  `SCHEME.energy_to_target_J`, with `--components` each step-time component
  `SCHEME.COMPONENT_s`, then `SCHEME.binding` (the largest component);
- `winner`: the scheme with the smallest time to target at that point.

A value that cannot be computed (a division by zero, no steps to target) is
empty in CSV and null in JSON. Floats are written in Python's shortest
round-trip form, so the same spec gives byte-identical files.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import Callable, TextIO

import numpy as np

from ctdsl.report.encode import csv_cell

SCHEMA = "ctdsl.sweep/1"


@dataclass
class Column:
    name: str
    unit: str | None  # base SI unit; None for text columns
    get: Callable  # chunk -> np.ndarray (float) or list (text)
    text: bool = False


def unit_suffix(symbol: str) -> str:
    return symbol.replace("/", "_per_").replace("*", "_").replace("^", "").replace("(", "").replace(")", "")


def columns(forms, components: bool = False) -> list[Column]:
    spec = forms.spec
    cols: list[Column] = []
    for p in spec.params.values():
        unit = None if p.dim.dimensionless else p.dim.symbol()
        name = p.name if unit is None else f"{p.name}_{unit_suffix(unit)}"
        cols.append(Column(name, unit or "1", _param_getter(p.name, float(p.default))))
    for s, sf in forms.schemes.items():
        cols.append(Column(f"{s}.step_s", "s", _value_getter(s, "step")))
        cols.append(Column(f"{s}.time_to_target_s", "s", _value_getter(s, "time_to_target") if sf.has_steps else _none))
        cols.append(Column(f"{s}.energy_to_target_J", "J", _value_getter(s, "energy_to_target") if sf.has_steps else _none))
        if components:
            for comp in sf.components:
                cols.append(Column(f"{s}.{comp}_s", "s", _value_getter(s, "component:" + comp)))
        cols.append(Column(f"{s}.binding", None, _binding_getter(s, forms), text=True))
    cols.append(Column("winner", None, lambda ch: ch.winner_names().tolist(), text=True))
    return cols


def _param_getter(name: str, fixed: float):
    def get(ch):
        a = ch.params.get(name)
        return a if a is not None else np.full(len(ch), fixed)

    return get


def _value_getter(scheme: str, q: str):
    return lambda ch: ch.values[(scheme, q)]


def _binding_getter(scheme: str, forms):
    return lambda ch: ch.binding_names(scheme, forms).tolist()


def _none(ch):
    return np.full(len(ch), np.nan)


def _cells(col: Column, ch, empty) -> list:
    v = col.get(ch)
    if col.text:
        return [empty if x is None else x for x in v]
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


def _csv_fields(col: Column, v, quoted: dict) -> list[str]:
    """A column's fields as text, as csv.writer would write them.

    Floats are written with repr (what csv.writer does), non-finite ones empty; a
    run of one repeated value is formatted once.
    """
    if col.text:
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

    def __init__(self, fh: TextIO, cols: list[Column]):
        self.fh = fh
        self.cols = cols
        self.quoted: dict = {}
        csv.writer(fh, lineterminator="\n").writerow([csv_cell(c.name) for c in cols])

    def write(self, ch) -> None:
        data = [c.get(ch) if c.text else np.asarray(c.get(ch), dtype=np.float64) for c in self.cols]
        for i in range(0, len(ch), self.BATCH):
            fields = [_csv_fields(c, d[i : i + self.BATCH], self.quoted) for c, d in zip(self.cols, data)]
            self.fh.write("\n".join(map(",".join, zip(*fields))) + "\n")

    def close(self) -> None:
        self.fh.flush()


class JsonWriter:
    """A JSON object whose `rows` array is streamed; keys in a fixed order."""

    def __init__(self, fh: TextIO, cols: list[Column], forms, grid, size: int):
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
            "units": [None if c.text else c.unit for c in cols],
            "points": size,
        }
        text = json.dumps(head, indent=1, allow_nan=False)
        fh.write(text[:-2] + ',\n "rows": [')

    def write(self, ch) -> None:
        parts = []
        for row in zip(*[_cells(c, ch, None) for c in self.cols]):
            parts.append(("\n  " if self.first else ",\n  ") + json.dumps(row, allow_nan=False, separators=(",", ":")))
            self.first = False
        self.fh.write("".join(parts))

    def close(self) -> None:
        self.fh.write("\n ]\n}\n")
        self.fh.flush()


def _unit(p) -> str:
    return p.dim.symbol()
