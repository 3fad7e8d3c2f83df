"""One panel per figure, sized for a paper or a slide: `ctdsl sweep --plot FILE --figure PANEL`.

Panels: `time` (time to target against the swept param, with the legend and the
notes under it), `steps` (each scheme's step by component), `stages` (the
module's stages), `winner` (which scheme is first over two params). Sizes are
widths in inches: `column` 3.5 (one column of a two-column paper), `page` 7.0,
`slide` 10.0; the height follows the content. Styles: `paper` (8 pt text, for
print at the size given) and `screen` (the report's 11 pt). A figure has a title
only when one is given (`--title`): a paper's caption says what it shows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ctdsl.report.encode import TICK_CHARS, mpl_text
from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.curves import CurveView, curves_panel
from ctdsl.report.plots.figure import placeholder_figure
from ctdsl.report.plots.steps import components_panel, module_panel, shown_groups, stage_labels
from ctdsl.report.plots.style import RC, fit_chars
from ctdsl.report.plots.winner import legend_columns, winner_panel
from ctdsl.results.solution import Solution

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from ctdsl.numeric.crossings import Curves
    from ctdsl.numeric.winnermap import WinnerMap

PANELS = ("time", "steps", "stages", "winner")
SIZES = {"column": 3.5, "page": 7.0, "slide": 10.0}
STYLES = ("paper", "screen")
PAPER_RC = {
    **RC,
    "font.size": 8,
    "axes.titlesize": 9,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7.5,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "lines.linewidth": 1.1,
    "lines.markersize": 3.5,
    "axes.linewidth": 0.6,
}


def style_rc(style: str) -> dict:
    return PAPER_RC if style == "paper" else RC


def panel_figure(
    sol: Solution, panel: str, size: str = "page", style: str = "paper", title: str | None = None, curves: Curves | None = None, wmap: WinnerMap | None = None,
):
    """One panel as a figure of its own."""
    if panel not in PANELS:
        raise ValueError(f"no panel {panel!r}; panels are {', '.join(PANELS)}")
    width = SIZES[size]
    rc = style_rc(style)
    with mpl().rc_context(rc):
        pt = rc["font.size"] / 72  # a line of text, in inches
        top = 0.35 + 1.6 * pt if title else 0.15
        if panel == "winner":
            if wmap is None:
                return placeholder_figure(title or "Winner map", "A winner map needs two swept params: give --sweep twice.")
            won = sorted({int(c) for c in wmap.winner.reshape(-1) if c >= 0})
            columns = legend_columns([wmap.ranked[k] for k in won], width - 0.85, rc["legend.fontsize"])
            legend = (1 + math.ceil(len(won) / columns)) * 1.9 * rc["legend.fontsize"] / 72 + 0.15  # its title and rows
            main = width * 0.62
            bottom = 0.5 + legend
            height = top + main + bottom
            fig = new_figure(width, height)
            ax = fig.add_axes([0.7 / width, bottom / height, (width - 0.85) / width, main / height])
            winner_panel(ax, wmap, columns)
        elif panel == "time":
            view = CurveView(sol, curves) if curves is not None else None
            n = math.ceil(len(curves.ranked) / 2) if view else 1  # the legend's rows, two schemes a row
            notes_h = n * 1.9 * rc["legend.fontsize"] / 72 + 0.1
            main = width * 0.6
            height = top + main + 0.55 + notes_h
            fig = new_figure(width, height)
            ax = fig.add_axes([0.7 / width, (notes_h + 0.55) / height, (width - 0.85) / width, main / height])
            notes = fig.add_axes([0.7 / width, 0.05 / height, (width - 0.85) / width, notes_h / height])
            curves_panel(ax, notes, sol, view, compact=True)
        else:
            modules = [r for r in sol.schemes.values() if r.module is not None]
            if panel == "stages" and not modules:
                return placeholder_figure(title or "Module stages", "No scheme runs through a pluggable module.")
            rows = len(sol.schemes) if panel == "steps" else sum(len(r.module.stages) for r in modules)
            # the labels' column as wide as the widest, measured, and at most half the figure (clipped to it)
            names = list(sol.schemes) if panel == "steps" else stage_labels(sol)
            size = rc["ytick.labelsize"]
            chars, names_w = fit_chars(names, width / 2 - 0.2, size, TICK_CHARS)
            left = 0.2 + names_w
            fs = rc["legend.fontsize"]
            if panel == "steps":  # the legend of components above the bars, as many entries a row as the width holds
                labels = shown_groups(sol) + ["binds the step"]
                columns = legend_columns(labels, width - left - 0.1, fs)
                top += 0.45 + math.ceil(len(labels) / columns) * 1.9 * fs / 72
            else:
                top += 0.3
            height = top + max(1.2, rows * 3.2 * pt + 0.4) + 0.9
            fig = new_figure(width, height)
            ax = fig.add_axes([left / width, 0.75 / height, (width - left - 0.2) / width, (height - top - 0.9) / height])
            if panel == "steps":
                components_panel(ax, sol, columns, fs, title_x=-(left - 0.1) / (width - left - 0.2), chars=chars)
            else:
                module_panel(ax, sol, chars=chars)
        if title:
            fig.suptitle(mpl_text(title), fontsize=rc["axes.titlesize"], fontweight="bold", y=1 - 0.12 / height)
    return fig
