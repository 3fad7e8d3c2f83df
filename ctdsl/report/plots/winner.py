"""A winner map: which scheme reaches the target first over two params, regions coloured and labelled.

The regions are drawn as cells of the evaluated grid (`ctdsl.numeric.winnermap`);
where two regions meet, a line: the break-even curve between the two schemes
(where their times to target tie), the zero level of ln T_k - ln (the others'
least), traced by marching squares between the points (`_margin`). Each region
is labelled with its scheme in the middle of its wide rows, and the legend (under
the map) lists every
scheme that wins somewhere.
"""

from __future__ import annotations

import numpy as np

from ctdsl import units as U
from ctdsl.report.encode import mpl_text
from ctdsl.report.plots.style import colour, text_width

LEGEND_COLUMNS = 3  # schemes a row in the legend under the map, at most
LEGEND_FOOT = 0.08  # inches between the legend and the figure's bottom edge


def legend_columns(names: list[str], width: float, fontsize: float) -> int:
    """Entries a row of the legend under a map `width` inches wide: as many as fit, at most LEGEND_COLUMNS.

    An entry is its patch and gaps (about 4.5 em) and its name as the legend shows it
    (`mpl_text`), measured (`style.text_width`).
    """
    entry = 4.5 * fontsize / 72 + text_width([mpl_text(n) for n in names], fontsize)
    return max(1, min(LEGEND_COLUMNS, int(width // entry)))


def _scaled(p, values):
    scale, unit = U.best_unit([float(np.median(values))], p.dim) if not p.dim.dimensionless else (1.0, "")
    return values / scale, unit


FINE = 4  # a map's grid refined this many times along each axis for its fill and edges
FINE_SIDE = 800  # points along a side of the refined grid at most


def _refine(values: np.ndarray, axis: int, factor: int) -> np.ndarray:
    """Linear interpolation between neighbouring points along `axis`, `factor` points to a step."""
    n = values.shape[axis]
    at = np.linspace(0.0, n - 1.0, (n - 1) * factor + 1)
    lo = np.minimum(np.floor(at).astype(int), n - 2)
    t = at - lo
    a, b = np.take(values, lo, axis=axis), np.take(values, lo + 1, axis=axis)
    shape = [1] * values.ndim
    shape[axis] = len(at)
    t = t.reshape(shape)
    return a * (1 - t) + b * t


def fine_map(wm, xs: np.ndarray, ys: np.ndarray):
    """The map on a grid FINE times finer (at most FINE_SIDE a side): ln T of each scheme interpolated
    linearly between the evaluated points (in the axes' own spacing: log along a log axis), and the
    winner and each scheme's margin there. Returns xs, ys, the winner (-1: none), and the margins
    ln T_k - ln (the least of the others), whose zero level is the edge of k's region: its contour
    (marching squares) follows the break-even curve, where the codes of the evaluated grid gave
    edges stair-stepped by a cell."""
    ny, nx = wm.winner.shape
    fy = max(1, min(FINE, FINE_SIDE // max(ny, 1))) if ny > 1 else 1
    fx = max(1, min(FINE, FINE_SIDE // max(nx, 1))) if nx > 1 else 1
    with np.errstate(divide="ignore", invalid="ignore"):
        logt = np.log(np.where(np.isfinite(wm.times) & (wm.times > 0), wm.times, np.nan))
    none = ~np.isfinite(logt)
    logt = np.where(none, np.nanmax(np.where(none, np.nan, logt), initial=0.0) + 50.0, logt)  # never the least
    if fy > 1:
        logt, none = _refine(logt, 1, fy), _refine(none.astype(float), 1, fy) > 0.5
    if fx > 1:
        logt, none = _refine(logt, 2, fx), _refine(none.astype(float), 2, fx) > 0.5
    space = lambda v, log, f: np.exp(_refine(np.log(v), 0, f)) if log else _refine(v, 0, f)  # noqa: E731
    fxs = space(xs, wm.logx, fx) if fx > 1 else xs
    fys = space(ys, wm.logy, fy) if fy > 1 else ys
    winner = np.where(none.all(axis=0), -1, np.argmin(np.where(none, np.inf, logt), axis=0))
    margins = {}
    for k in range(logt.shape[0]):
        others = np.delete(logt, k, axis=0).min(axis=0) if logt.shape[0] > 1 else np.full(logt.shape[1:], np.inf)
        margins[k] = logt[k] - others
    return fxs, fys, winner, margins


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
    if wm.times is None:  # the cells of the evaluated grid, and their edges
        cmap = ListedColormap(["#ffffff"] + [colour(i) for i in range(len(wm.ranked))])
        ax.pcolormesh(xs, ys, wm.winner + 1, cmap=cmap, vmin=0, vmax=len(wm.ranked), shading="nearest", alpha=0.45, rasterized=False)
        if len(won) > 1:
            for k in won:
                ax.contour(xs, ys, (wm.winner == k).astype(float), levels=[0.5], colors="black", linewidths=0.8)
    else:  # on the refined grid: the winner's cells, and each region's edge traced by marching squares
        fxs, fys, fine, margins = fine_map(wm, xs, ys)
        cmap = ListedColormap(["#ffffff"] + [colour(i) for i in range(len(wm.ranked))])
        ax.pcolormesh(fxs, fys, fine + 1, cmap=cmap, vmin=0, vmax=len(wm.ranked), shading="nearest", alpha=0.45, rasterized=False)
        if len(won) > 1:
            for k in won:
                ax.contour(fxs, fys, margins[k], levels=[0.0], colors="black", linewidths=0.8)
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
