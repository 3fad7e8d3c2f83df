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


def _scaled(p, values):
    scale, unit = U.best_unit([float(np.median(values))], p.dim) if not p.dim.dimensionless else (1.0, "")
    return values / scale, unit


def winner_panel(ax, wm) -> None:
    """Draw the map into `ax`."""
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
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.2), borderaxespad=0.0, frameon=False, ncol=3,
              title="First to the target", alignment="left")  # fmt: skip
