"""`ctdsl sweep --plot`: the composite figure, a winner map over two params, or one panel per figure.

Without --figure: over one swept param (or none) the three panels together, as
in the report; over two swept params, the winner map of the first (x) by the
second (y), where the second changes the winner somewhere (else the three
panels over the first, with a note saying why). Over three or more swept params
--plot is refused (CT490): a figure draws two, and drops none silently. With --figure PANEL (time, steps, stages, winner; repeatable), each
panel is a figure of its own, at --size and --style; several panels with one
--plot FILE.EXT are written to FILE-PANEL.EXT.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ctdsl.cli.app import fail_usage, print_diagnostics, save_figure
from ctdsl.diagnostics import Diagnostic, Sources


PANELS = ("time", "steps", "stages", "winner")
SIZES = ("column", "page", "slide")
STYLES = ("paper", "screen")
MAP_SIDE = 400  # points along each side of a winner map at most: more than a figure shows


def check_options(plot, figures: list[str], size: str, style: str, sweeps) -> None:
    if figures and not plot:
        raise fail_usage("--figure draws a panel: give --plot FILE too")
    for f in figures:
        if f not in PANELS:
            raise fail_usage(f"--figure is one of {', '.join(PANELS)} (got {f!r})")
    if len(set(figures)) != len(figures):
        raise fail_usage("--figure names a panel twice")
    if size not in SIZES:
        raise fail_usage(f"--size is one of {', '.join(SIZES)} (got {size!r})")
    if style not in STYLES:
        raise fail_usage(f"--style is one of {', '.join(STYLES)} (got {style!r})")
    if "winner" in figures and len(sweeps) != 2:
        raise fail_usage("--figure winner maps two params: give --sweep twice")


def _targets(plot: str, figures: list[str]) -> list[tuple[str, str]]:
    if len(figures) == 1:
        return [(figures[0], plot)]
    p = Path(plot)
    return [(f, str(p.with_name(f"{p.stem}-{f}{p.suffix}"))) for f in figures]


def _map(forms, axes):
    from ctdsl.numeric.grid import Axis
    from ctdsl.numeric.winnermap import winner_map

    x, y = (Axis(a.name, a.lo, a.hi, min(a.count, MAP_SIDE), a.spacing) for a in axes[:2])
    return winner_map(forms, x, y)


def axes_dropped(names: list[str]) -> Diagnostic:
    """CT490: --plot over more swept params than a figure draws."""
    return Diagnostic(
        "CT490",
        f"--plot draws at most two swept params (a winner map), and {len(names)} are swept: {', '.join(names)}",
        None,
        help=f"sweep two with --sweep (--sweep {names[0]} --sweep {names[1]}), or write the data (-o grid.parquet) and plot it as you need",
    )


def draw(sol, forms, axes, plot: str, fmt: str, figures: list[str], size: str, style: str, title: str | None) -> None:
    from ctdsl.numeric.crossings import sweep_curves, x_param
    from ctdsl.report.plots import sweep_figure
    from ctdsl.report.plots.panels import panel_figure

    swept = [a for a in axes if a.count > 1]
    if len(swept) > 2:  # a figure draws two: the others are refused, never dropped silently
        print_diagnostics([axes_dropped([a.name for a in swept])], Sources(), err=True)
        raise typer.Exit(1)
    p = x_param(sol.spec)
    x_axis = next((a for a in axes if p is not None and a.name == p.name), None)
    wmap = None
    if not figures and len(swept) == 2:
        wmap = _map(forms, swept)
        along_x, along_y = wmap.changes_along()
        if along_y:
            figures, targets = ["winner"], [("winner", plot)]
            axes = swept
        else:  # a map whose second axis changes nothing says nothing a curve does not: the curves, and why
            a, b = swept
            why = "no scheme wins anywhere else" if not along_x else f"{a.name} alone changes it"
            typer.echo(f"note: {b.name} changes no winner over its range ({why}): drawing the curves over {a.name}, not a winner map", err=True)
            x_axis = a
    if not figures:
        save_figure(sweep_figure(sol, sweep_curves(sol, forms, x_axis)), plot, fmt)
        return
    else:
        targets = _targets(plot, figures)
    curves = sweep_curves(sol, forms, x_axis) if "time" in figures else None
    wmap = (wmap or _map(forms, axes)) if "winner" in figures else None
    for panel, path in targets:
        fig = panel_figure(sol, panel, size, style, title, curves=curves, wmap=wmap)
        save_figure(fig, path, fmt)
