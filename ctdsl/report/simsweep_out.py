"""A simulation sweep's table (`ctdsl simulate --sweep`): terminal, CSV, Parquet and a figure.

One row per grid point and scheme, in the grid's order, then the spec's: each
swept param (base units; its column named as `ctdsl sweep` names it, `wan_bw_B_per_s`,
the names handed in as the sweep's `column_names`), the scheme, the closed-form
step time, the simulated mean step time and the ends of its 95 % t interval
over the seeds, and the number of seeds. Names from the spec go through
encode.py (CSV cells are formula-guarded; the terminal and the figure show
them literally). Parquet needs pyarrow (`pip install ctdsl[data]`); each
column's unit is in its field metadata.
"""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING, BinaryIO

from ctdsl import units as U
from ctdsl.report import encode
from ctdsl.report.blocks import Grid
from ctdsl.report.document_rich import print_grid

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from rich.console import Console

    from ctdsl.simulate.simsweep import SimSweep

STEP = "_s"  # the step columns are in seconds
VALUE_COLUMNS = ("closed_form_step", "simulated_step", "ci_low", "ci_high")


def columns(sweep) -> list[tuple[str, str]]:
    """(column name, unit) in order."""
    out = [(sweep.column_names.get(a.name, a.name), sweep.units[a.name]) for a in sweep.axes]
    out.append(("scheme", ""))
    out += [(c + STEP, "s") for c in VALUE_COLUMNS]
    out.append(("seeds", "1"))
    return out


def table(sweep) -> list[list]:
    """The rows as values (floats, the scheme's name, the seeds as int), in column order."""
    rows = []
    for r in sweep.rows():
        rows.append([r[a.name] for a in sweep.axes] + [r["scheme"], r["closed_form"], r["simulated"], r["ci_low"], r["ci_high"], r["seeds"]])
    return rows


def _cell(v):
    if isinstance(v, float):
        return "" if not math.isfinite(v) else repr(v)
    return encode.csv_cell(v)


def render_csv(sweep: SimSweep) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([encode.csv_cell(name) for name, _ in columns(sweep)])
    for row in table(sweep):
        w.writerow([_cell(v) for v in row])
    return buf.getvalue()


def write_parquet(sweep: SimSweep, fh: BinaryIO) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols, rows = columns(sweep), table(sweep)
    fields, arrays = [], []
    for i, (name, unit) in enumerate(cols):
        values = [r[i] for r in rows]
        if name == "scheme":
            typ = pa.dictionary(pa.int16(), pa.string())
            arr = pa.array(values, pa.string()).dictionary_encode().cast(typ)
        elif name == "seeds":
            typ, arr = pa.int64(), pa.array(values, pa.int64())
        else:
            typ, arr = pa.float64(), pa.array(values, pa.float64())
        fields.append(pa.field(name, typ, metadata={"unit": unit} if unit else None))
        arrays.append(arr)
    tbl = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
    pq.write_table(tbl, fh)


def grid(sweep: SimSweep) -> Grid:
    """The sweep's table, as the terminal shows it: a row per grid point and scheme, the params and numbers right-aligned."""
    head = [a.name for a in sweep.axes] + ["scheme", "closed form", "simulated", "95% interval", "seeds"]
    align = ["right"] * len(sweep.axes) + ["left"] + ["right"] * 4
    t = Grid(f"simulated step time over {sweep.settings.seeds} seeds x {sweep.settings.steps} steps, beside the closed form", head, align=align)
    dims = {a.name: _dim(sweep.units[a.name]) for a in sweep.axes}
    for r in sweep.rows():
        params = [U.format_quantity(r[a.name], dims[a.name]) if dims[a.name] is not None else f"{r[a.name]:.4g} {sweep.units[a.name]}" for a in sweep.axes]
        lo, hi = r["ci_low"], r["ci_high"]
        ci = f"{U.format_quantity(lo, U.TIME)} .. {U.format_quantity(hi, U.TIME)}" if math.isfinite(lo) else "n/a"
        t.rows.append([*params, r["scheme"], U.format_quantity(r["closed_form"], U.TIME), U.format_quantity(r["simulated"], U.TIME), ci, str(r["seeds"])])
    return t


def render_rich(sweep: SimSweep, console: Console) -> None:
    print_grid(console, grid(sweep))


def _dim(symbol: str):
    """The dimension whose base-unit symbol is `symbol` (None if none of the usual ones)."""
    if symbol == "1":
        return U.Dim()
    try:
        unit = U.parse_unit(symbol)
    except U.UnitError:
        return None
    return unit.dim if unit.scale == 1 else None


def figure(sweep: SimSweep):
    """One param swept: per scheme, the closed form as a line and the simulated means with their intervals."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    axis = sweep.axes[0]
    fig = Figure(figsize=(7, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    rows = sweep.rows()
    for k, name in enumerate(dict.fromkeys(r["scheme"] for r in rows)):
        mine = [r for r in rows if r["scheme"] == name]
        xs = [r[axis.name] for r in mine]
        color = f"C{k % 10}"
        ax.plot(xs, [r["closed_form"] for r in mine], "-", color=color, label=encode.mpl_text(f"{name} (closed form)"))
        sim = [r for r in mine if math.isfinite(r["simulated"])]
        err = [[r["simulated"] - r["ci_low"] if math.isfinite(r["ci_low"]) else 0.0 for r in sim], [r["ci_high"] - r["simulated"] if math.isfinite(r["ci_high"]) else 0.0 for r in sim]]
        ax.errorbar([r[axis.name] for r in sim], [r["simulated"] for r in sim], yerr=err, fmt="o", color=color, capsize=3, label=encode.mpl_text(f"{name} (simulated, 95% CI)"))
    if axis.spacing == "log":
        ax.set_xscale("log")
    unit = sweep.units[axis.name]
    ax.set_xlabel(encode.mpl_text(axis.name if unit == "1" else f"{axis.name} ({unit})"))
    ax.set_ylabel("step time (s)")
    ax.set_title(encode.mpl_text(f"simulated over {sweep.settings.seeds} seeds and closed form"))
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


__all__ = ["columns", "grid", "table", "render_csv", "write_parquet", "render_rich", "figure"]
