"""`ctdsl sweep`.

It solves the spec symbolically, compile the forms once (`ctdsl.numeric`) and
evaluate them over param values; the figure's curves, break-evens and regime
changes are computed by `ctdsl.numeric.crossings` and handed to
`ctdsl.report.plots` as data. numpy and matplotlib are imported inside the
commands (ctdsl.numeric and the report's figure and sweep modules load them), so
`ctdsl check` and `ctdsl lint` never load them.

A `--sweep` value is `name=lo:hi:n[:log|lin]`, each end a number with a unit
(`wan_bw=0.1 GB/s:1000 GB/s:41:log`), or a bare `name` for the range, spacing
and count the spec gives it. The ends are read exactly as `--set` values are:
each end is put through the checker as an override of the param, so a bad
unit, a wrong dimension or a value the spec cannot take (a zero bandwidth, an
efficiency above 1) is the same diagnostic, with the same code, as for `--set`.
A malformed `--sweep` (no `=`, not three or four fields, a count that is not a
whole number) is a usage error. A grid over the bound a declared sweep has
(MAX_SWEEP_POINTS an axis, MAX_GRID_POINTS in all) is CT607, from the counts
alone, before the ends are read or anything is built (`ctdsl.api.sweep_axes`).
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ctdsl.cli.app import (
    raw_stdout,
    Exit,
    app,
    fail_usage,
    load_or_exit,
    parse_sets,
    print_diagnostics,
    startup_work,
)
from ctdsl.diagnostics import (
    Diagnostic,
    Sources,
    Span,
    did_you_mean,
    sort_diagnostics,
    summary_line,
)
from ctdsl.extras import require
from ctdsl.files import atomic_open

PLOT_FORMATS = ("png", "svg", "pdf")


class SweepFormat(str, Enum):
    csv = "csv"
    json = "json"
    parquet = "parquet"
    arrow = "arrow"
    npz = "npz"


TEXT_FORMATS = (SweepFormat.csv, SweepFormat.json)


@dataclass
class SweepArg:
    raw: str
    name: str
    lo: str | None = None  # None: the spec's own range
    hi: str | None = None
    count: int | None = None
    spacing: str = "lin"


def parse_sweep(raw: str) -> SweepArg:
    """The shape of one --sweep value; its numbers are checked later, against the spec."""
    example = "e.g. --sweep 'wan_bw=0.1 GB/s:1000 GB/s:41:log'"
    if "=" not in raw:
        name = raw.strip()
        if not name.isidentifier():
            raise fail_usage(f"--sweep takes name=lo:hi:n[:log], or a param's name alone; {example} (got {raw!r})")
        return SweepArg(raw, name)
    name, rest = (s.strip() for s in raw.split("=", 1))
    fields = [f.strip() for f in rest.split(":")]
    if not name or len(fields) not in (3, 4) or not fields[0] or not fields[1]:
        raise fail_usage(f"--sweep takes name=lo:hi:n[:log|lin]; {example} (got {raw!r})")
    try:
        count = int(fields[2])
    except ValueError:
        count = 0
    if count < 1 or not fields[2].isdigit():
        raise fail_usage(f"--sweep {name}: the number of points must be a whole number of at least 1 (got {fields[2]!r})")
    spacing = fields[3] if len(fields) == 4 else "lin"
    if spacing not in ("lin", "log"):
        raise fail_usage(f"--sweep {name}: the spacing is lin or log (got {spacing!r})")
    return SweepArg(raw, name, fields[0], fields[1], count, spacing)


def resolve_axes(study, sweeps: list[SweepArg], sets: dict[str, str]):
    """Axes in base units, or exit 1 with every diagnostic: the names here, the sizes and the
    ends in `ctdsl.api.sweep_axes`, the one place `Study.sweep` uses too."""
    from ctdsl.api import AxisRequest, SpecError, sweep_axes
    from ctdsl.numeric.grid import Axis, check_default_grid

    spec = study.spec
    if not sweeps:
        check_default_grid(spec)  # CT607 before any axis is built
        return [Axis.from_param(p) for p in spec.params.values() if p.lo is not None and p.count]
    _check_names(spec, sweeps, sets)
    requests = [AxisRequest(s.name, s.lo, s.hi, s.count, s.spacing, f"--sweep {s.name}", s.raw) for s in sweeps]
    try:
        return sweep_axes(study, requests)
    except SpecError as err:
        _fail(err.diagnostics, err.sources)


def _whole(s: SweepArg) -> Span:
    """The whole --sweep value, as a span of its own source."""
    return Span(f"--sweep {s.name}", 1, 1, 1, len(s.raw) + 1)


def _check_names(spec, sweeps: list[SweepArg], sets: dict[str, str]) -> Sources:
    """Each --sweep names a param once, not also given by --set, that has a range; the sources of the values."""
    seen: set[str] = set()
    for s in sweeps:
        if s.name in seen:
            raise fail_usage(f"--sweep names '{s.name}' twice")
        if s.name in sets:
            raise fail_usage(f"'{s.name}' is given both by --set and by --sweep; give one")
        seen.add(s.name)
    own = Sources()
    problems: list[Diagnostic] = []
    for s in sweeps:
        own.add(f"--sweep {s.name}", s.raw)
        whole = _whole(s)
        p = spec.params.get(s.name)
        if p is None:
            hint = did_you_mean(s.name, spec.params) or f"params are: {', '.join(spec.params) or 'none'}"
            problems.append(Diagnostic("CT101", f"--sweep names unknown param '{s.name}'", whole, help=hint))
        elif s.lo is None and p.lo is None:
            problems.append(
                Diagnostic(
                    "CT307",
                    f"param '{s.name}' has no range in the spec to sweep",
                    whole,
                    help=f"give one: --sweep '{s.name}=lo:hi:n', or add 'in lo .. hi lin n' to the param",
                )
            )
    if problems:
        _fail(problems, own)
    return own


def _fail(diags, sources) -> None:
    diags = sort_diagnostics(list(diags))
    print_diagnostics(diags, sources, err=True)
    typer.echo(summary_line(diags), err=True)
    raise typer.Exit(Exit.FINDINGS)


def _plot_format(path: str) -> str:
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        raise fail_usage(f"--plot writes .png, .svg or .pdf (got {path!r})")
    return ext


@contextmanager
def _open_out(path: str | None, binary: bool = False):
    """stdout, or the file `path` written whole or not at all (a failed sweep leaves the old file)."""
    if path is None or path == "-":
        out = raw_stdout()  # data, byte for byte
        yield out.buffer if binary else out
        return
    try:
        if binary:
            with atomic_open(path, "wb") as fh:
                yield fh
        else:
            with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
                yield fh
    except OSError as exc:
        raise fail_usage(f"cannot write {path}: {exc.strerror}")


def _check_binary(format: SweepFormat, output: str | None) -> None:
    """A binary format goes to a file (or a pipe), never to a terminal; Parquet and Arrow need pyarrow."""
    if format in TEXT_FORMATS:
        return
    if (output is None or output == "-") and sys.stdout.isatty():
        raise fail_usage(f"--format {format.value} writes binary data: give -o FILE (or pipe stdout)")
    if format is not SweepFormat.npz:
        require("pyarrow", f"--format {format.value}", "or use --format npz")


def _write_data(format: SweepFormat, output, forms, grid, components: bool, chunk: int, float64: bool = False) -> None:
    from ctdsl.numeric import iter_chunks
    from ctdsl.numeric.alloc import keep_freed_memory
    from ctdsl.numeric.columns import columns
    from ctdsl.report.sweep_binary import Float32Range
    from ctdsl.report.sweepout import CsvWriter, JsonWriter

    keep_freed_memory()
    cols = columns(forms, components)
    with _open_out(output, binary=format not in TEXT_FORMATS) as fh:
        if format is SweepFormat.csv:
            writer = CsvWriter(fh, cols)
        elif format is SweepFormat.json:
            writer = JsonWriter(fh, cols, forms, grid, grid.size)
        else:
            from ctdsl.report.sweep_binary import binary_writer

            writer = binary_writer(format.value, fh, cols, forms, grid, float64)
        try:
            for ch in _with_progress(iter_chunks(forms, grid, chunk), grid.size, "sweep"):
                writer.write(ch)
            writer.close()
        except Float32Range as exc:
            raise fail_usage(f"{exc}; give --float64 to write every value as float64")


def _with_progress(chunks, total: int, label: str):
    """Pass chunks through; after about a second, show a progress bar on a terminal."""
    from rich.console import Console

    console = Console(stderr=True)
    start = time.perf_counter()
    bar = None
    task = None
    done = 0
    try:
        for ch in chunks:
            yield ch
            done += len(ch)
            if bar is None and console.is_terminal and done < total and time.perf_counter() - start > 1.0:
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeRemainingColumn,
                )

                bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console, transient=True)
                bar.start()
                task = bar.add_task(label, total=total, completed=done)
            elif bar is not None:
                bar.update(task, completed=done)
    finally:
        if bar is not None:
            bar.stop()


@app.command()
def sweep(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    sweep_: Optional[List[str]] = typer.Option(
        None, "--sweep", help="Vary a param: name=lo:hi:n[:log|lin] with units, or a name alone for its range in the spec."
    ),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    format: SweepFormat = typer.Option(SweepFormat.csv, "--format", "-f", help="csv, json, or binary columns: parquet, arrow (both need ctdsl\\[data]) or npz."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the data to this file ('-': stdout)."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Draw the figure to FILE.png, .svg or .pdf."),
    components: bool = typer.Option(False, "--components", help="Add a column per step-time component."),
    figure: Optional[List[str]] = typer.Option(
        None, "--figure", help="With --plot: one panel per file: time, steps, stages or winner (repeat for several).", metavar="PANEL"
    ),
    size: str = typer.Option("page", "--size", help="With --figure: column (3.5 in), page (7 in) or slide (10 in) wide."),
    style: str = typer.Option("paper", "--style", help="With --figure: paper (8 pt text) or screen (11 pt)."),
    title: Optional[str] = typer.Option(None, "--title", help="With --figure: a title over the panel (none by default)."),
    chunk: int = typer.Option(1 << 16, "--chunk", help="At most this many points evaluated at a time (bounds memory).", min=1),
    float64: bool = typer.Option(False, "--float64", help="Parquet: every value as float64 (by default the results are float32)."),
) -> None:
    """Evaluate every scheme over a grid of params: one row per point.

    Without --sweep, the params that have a sweep in the spec (a range, a
    spacing and a count) vary and the others keep their defaults. The data go to
    stdout, or to -o FILE; with --plot and no -o, only the figure is written.

    \b
    Examples:
      ctdsl sweep specs/llama70b_wan.ct > grid.csv
      ctdsl sweep specs/llama70b_wan.ct --sweep 'wan_bw=1 GB/s:1 TB/s:99:log'
      ctdsl sweep specs/llama70b_wan.ct -f parquet -o grid.parquet
      ctdsl sweep specs/llama70b_wan.ct --plot out.png
      ctdsl sweep specs/llama70b_wan.ct --plot t.pdf --figure time --size column
      ctdsl sweep specs/llama70b_wan.ct --sweep wan_bw --sweep eff --plot w.pdf
    """
    sets = parse_sets(set_)
    sweeps = [parse_sweep(s) for s in sweep_ or []]
    plot_format = _plot_format(plot) if plot else None
    if plot or figure:
        from ctdsl.cli.sweep_figures import check_options

        check_options(plot, figure or [], size, style, sweeps)
    write_data = output is not None or plot is None
    if write_data:
        _check_binary(format, output)
    with startup_work():
        study = load_or_exit(file, sets)
        axes = resolve_axes(study, sweeps, sets)
        from ctdsl.numeric import CompiledForms, Grid

        grid = Grid(axes)
        sol = study.solve()
        forms = CompiledForms(sol)
    if write_data:
        _write_data(format, output, forms, grid, components, chunk, float64)
    if plot:
        from ctdsl.cli.sweep_figures import draw

        draw(sol, forms, axes, plot, plot_format, figure or [], size, style, title)
