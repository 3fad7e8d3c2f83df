"""A winner map: which scheme reaches the target first over two params, regions coloured and labelled.

The regions are drawn as cells of the evaluated grid (`ctdsl.numeric.winnermap`);
where two regions meet, a line: the break-even curve between the two schemes
(where their times to target tie), traced between the grid's cells. Each region
is labelled with its scheme in the middle of its wide rows, and the legend (under
the map) lists every
scheme that wins somewhere.
"""

from __future__ import annotations

import numpy as np

from ctdsl import units as U
from ctdsl.report.encode import mpl_text
from ctdsl.report.plots.style import colour

LEGEND_COLUMNS = 3  # schemes a row in the legend under the map, at most
LEGEND_FOOT = 0.08  # inches between the legend and the figure's bottom edge


def legend_columns(names: list[str], width: float, fontsize: float) -> int:
    """Entries a row of the legend under a map `width` inches wide: as many as fit, at most LEGEND_COLUMNS.

    An entry is its patch and gaps (about 4.5 em) and its name (a character is at most 0.65 em in
    the sans-serif fonts the figures use).
    """
    em = fontsize / 72
    entry = (4.5 + 0.65 * max((len(n) for n in names), default=1)) * em
    return max(1, min(LEGEND_COLUMNS, int(width // entry)))


def _scaled(p, values):
    scale, unit = U.best_unit([float(np.median(values))], p.dim) if not p.dim.dimensionless else (1.0, "")
    return values / scale, unit


def winner_panel(ax, wm, columns: int = LEGEND_COLUMNS) -> None:
    """Draw the map into `ax`, with a legend of `columns` schemes a row."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    xs, xunit = _scaled(wm.x, wm.xs)
    ys, yunit = _scaled(wm.y, wm.ys)
    won = sorted({int(c) for c in np.unique(wm.winner) if c >= 0})
    if not won:
        ax.axis("off")
        ax.text(0.5, 0.5, "No scheme has a finite time to target here.", ha="center", va="center", transform=ax.transAxes)
        return
    cmap = ListedColormap(["#ffffff"] + [colour(i) for i in range(len(wm.ranked))])
    ax.pcolormesh(xs, ys, wm.winner + 1, cmap=cmap, vmin=0, vmax=len(wm.ranked), shading="nearest", alpha=0.45, rasterized=False)
    if len(won) > 1:  # boundaries: each region's edge, where the winner changes from cell to cell
        for k in won:
            ax.contour(xs, ys, (wm.winner == k).astype(float), levels=[0.5], colors="black", linewidths=0.8)
    for k in won:  # the label: in the middle of the region's wide rows, the middle one of them
        mask = wm.winner == k
        counts = mask.sum(axis=1)
        wide = np.flatnonzero(counts >= 0.8 * counts.max())
        row = int(wide[len(wide) // 2])
        cols = np.flatnonzero(mask[row])
        col = int(cols[len(cols) // 2])
        ax.text(xs[col], ys[row], mpl_text(wm.ranked[k]), ha="center", va="center", fontsize="small", fontweight="bold",
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor=colour(k), linewidth=0.8))  # fmt: skip
    if wm.logx:
        ax.set_xscale("log")
    if wm.logy:
        ax.set_yscale("log")
    ax.set_xlim(xs[0], xs[-1])
    ax.set_ylim(ys[0], ys[-1])
    ax.set_xlabel(mpl_text(wm.x.name + (f" ({xunit})" if xunit else "")))
    ax.set_ylabel(mpl_text(wm.y.name + (f" ({yunit})" if yunit else "")))
    handles = [Patch(facecolor=colour(k), alpha=0.45, edgecolor="black", label=mpl_text(wm.ranked[k])) for k in won]
    # at the foot of the figure, where the figure keeps room for it (`panels.panel_figure`): anchored in the
    # figure's own coordinates, so that it stays under the x label whatever the map's height
    fig = ax.figure
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(ax.get_position().x0, LEGEND_FOOT / fig.get_figheight()),
              bbox_transform=fig.transFigure, borderaxespad=0.0, frameon=False, ncol=columns,
              title="First to the target", alignment="left")  # fmt: skip
