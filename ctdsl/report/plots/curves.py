"""The figure's first panel: time to target against the spec's first ranged data-rate param, and its notes.

One curve per scheme (a colour, a line style and a marker each), log-log when
the ranges are wide; the break-evens as open circles labelled with their values;
numbered diamonds where the component that binds a scheme's step changes. Under
the plot: the legend, which scheme is first to the target over which range, the
break-evens in words and the numbered regime changes explained.

The numbers come computed (`ctdsl.numeric.crossings.Curves`: the curves, the
break-evens inside the range, the regime changes, the runs where each scheme
leads); here they are only scaled to display units, put into words and drawn.
"""

from __future__ import annotations

import math

import numpy as np

from ctdsl import units as U
from ctdsl.report.encode import mpl_text
from ctdsl.report.words import count_of
from ctdsl.report.plots.placement import FAR, OFFSETS, Placer
from ctdsl.report.plots.style import MARKERS, STYLES, colour, plain
from ctdsl.report.plots.typeset import typesets

LINE = 0.22  # inches per line of notes
MAX_MARKED = 12  # break-evens circled and labelled on the curves (and named under them); the report lists all


class CurveView:
    """The curves in display units, with the notes that go under them (the layout needs their number)."""

    def __init__(self, sol, curves):
        c = curves
        p = c.param
        self.c = c
        self.what = "time to target" if c.to_target else "step time"
        self.finite = np.concatenate([y[np.isfinite(y) & (y > 0)] for y in c.ys.values()])
        self.tscale, self.tunit = U.best_unit([float(np.median(self.finite))] if self.finite.size else [], U.TIME)
        self.xscale, self.xunit = _unit_of(p, [c.lo, c.hi])
        self.breaks, self.more = _shown(c.breaks, lambda b: (b.breakeven.x, b.breakeven.y, b.x))
        self.notes = _notes(sol, c, self.breaks, self.more)


def _shown(items: list, key) -> tuple[list, int]:
    """The distinct items (a break-even stated twice is drawn once), at most MAX_MARKED; and how many more."""
    seen, out = set(), []
    for it in items:
        k = key(it)
        if k not in seen:
            seen.add(k)
            out.append(it)
    return out[:MAX_MARKED], max(0, len(out) - MAX_MARKED)


def _notes(sol, c, breaks: list, more: int) -> list[tuple[str, str, str | None]]:
    """The lines under the plot: (kind, text, colour of a diamond or None); kind is 'head', 'text' or 'change'."""
    p = c.param
    notes = []
    if c.leads:
        notes.append(("head", f"First to the target, by {p.name}", None))
        parts = []
        for k, (a, b, s) in enumerate(c.leads):
            if len(c.leads) == 1:
                parts.append(f"{s} throughout")
            elif k == 0:
                parts.append(f"{s} below {U.format_quantity(b, p.dim)}")
            elif k == len(c.leads) - 1:
                parts.append(f"{s} above {U.format_quantity(a, p.dim)}")
            else:
                parts.append(f"{s} from {U.format_quantity(a, p.dim)} to {U.format_quantity(b, p.dim)}")
        for k in range(0, len(parts), 3):
            notes.append(("text", "; ".join(parts[k : k + 3]), None))
    if breaks:
        notes.append(("head", "Break-even (open circles): where two schemes take the same time", None))
        for xb, yb, b, root in breaks:
            notes.append(("text", f"{b.x} and {b.y} tie at {U.format_quantity(xb, b.dim)}: {root.below} is faster below, {root.above} above", None))
    missed = [b for b in sol.breakevens if b.over == p.name and b.result is not None and not b.roots and b.on == "time"]
    missed, more_missed = _shown(missed, lambda b: (b.x, b.y))
    if missed and not breaks:
        notes.append(("head", "Break-even", None))
    for b in missed:
        notes.append(("text", f"{b.x} and {b.y} never tie in this range: {b.result.faster_at_lo} is faster throughout", None))
    if more or more_missed:
        notes.append(("text", f"and {count_of(more + more_missed, 'break-even')} more: see the report's break-even section", None))
    if c.changes:
        notes.append(("head", "Where the component that binds a step changes (numbered diamonds)", None))
        for n, ch in enumerate(c.changes, 1):
            text = f"{n}. {ch.scheme}: {ch.before.label} binds below {U.format_quantity(ch.x, p.dim)}, {ch.after.label} above"
            notes.append(("change", text, colour(ch.rank)))
    return notes


def _display(p) -> str:
    """The param's display name as mathtext, when matplotlib can typeset it."""
    if not p.display:
        return p.name
    return f"${p.display}$" if typesets(p.display) else p.name


def _role(sol, p) -> str:
    """'WAN bandwidth' when the param sets a WAN link's bandwidth, else its kind."""
    sym = sol.symbols[p.name]
    for r in sol.schemes.values():
        for link in r.links:
            if link.kind == "wan" and sym in link.bandwidth.expr.free_symbols:
                return "WAN bandwidth"
    for r in sol.schemes.values():
        for link in r.links:
            if sym in link.bandwidth.expr.free_symbols:
                return f"{link.kind} link bandwidth"
    return U._KIND_NAMES.get(p.dim.exps, "value") if not p.dim.dimensionless else "value"


def _unit_of(p, values) -> tuple[float, str]:
    if p.dim.dimensionless:
        return 1.0, ""
    if p.unit:
        return float(p.unit_scale), p.unit
    return U.best_unit(values, p.dim)


def _other_params(sol, skip: str | None) -> str:
    parts = [f"{p.name} = {U.format_quantity(p.default, p.dim)}" for p in sol.spec.params.values() if p.name != skip]
    return ", ".join(parts)


def _decades(axis) -> float:
    lo, hi = axis.get_view_interval()
    with np.errstate(over="ignore"):  # limits near the float range (a step of 1e300 s) overflow the ratio
        return math.log10(hi / lo) if lo > 0 and hi > 0 else 99


def curves_panel(ax, notes, sol, view: CurveView | None, compact: bool = False) -> None:
    """Draw the curves into `ax` and the legend and notes into `notes` (None: say there is nothing to plot).

    `compact` (a figure for a paper): no title, no regime-change marks, and only
    the legend under the plot, in the style's font sizes; a caption says the rest.
    """
    notes.axis("off")
    if view is None:
        ax.axis("off")
        ax.text(0.0, 0.5, "No curve: the spec has no param to plot the time to target against (give one a range).", ha="left", va="center", transform=ax.transAxes)
        return
    xv = view.c.xs / view.xscale
    _draw_curves(ax, sol, view, xv)
    _scale_axes(ax, view, xv)
    _label_axes(ax, sol, view, compact)
    placer = Placer(ax)
    _draw_marks(ax, view, xv, placer, compact)
    _legend_and_notes(ax, notes, view, placer.renderer, compact)


def _draw_curves(ax, sol, view: CurveView, xv) -> None:
    c = view.c
    points = len(c.xs)
    for i, s in enumerate(c.ranked):
        r = sol.schemes[s]
        ax.plot(
            xv,
            c.ys[s] / view.tscale,
            color=colour(i),
            linestyle=STYLES[i % len(STYLES)],
            marker=MARKERS[i % len(MARKERS)],
            markevery=(int(i * points / (8 * len(c.ranked))) + 20, points // 8),
            markersize=5.5,
            markerfacecolor="white",
            linewidth=1.8,
            label=mpl_text(f"{s}: {r.label}" if r.label != s else s),
        )


def _scale_axes(ax, view: CurveView, xv) -> None:
    """Log scales where the ranges are wide, limits, decade ticks in plain numbers, grids."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    if view.c.logx:
        ax.set_xscale("log")
    ypos = view.finite / view.tscale if view.finite.size else np.array([1.0])
    logy = bool(ypos.max() / ypos.min() >= 5)
    if logy:
        ax.set_yscale("log")
        ax.set_ylim(ypos.min() / 1.3, ypos.max() * 1.6)
    else:
        ax.set_ylim(0, ypos.max() * 1.15)
    ax.set_xlim(xv[0], xv[-1])
    for axis, log in ((ax.xaxis, view.c.logx), (ax.yaxis, logy)):
        if log:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,)))
            axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
            axis.set_minor_formatter(FuncFormatter(plain) if _decades(axis) <= 2.5 else NullFormatter())
        axis.set_major_formatter(FuncFormatter(plain))
    ax.grid(True, which="major", color="#cccccc", linewidth=0.7)
    ax.grid(True, which="minor", color="#eeeeee", linewidth=0.5)


def _label_axes(ax, sol, view: CurveView, compact: bool = False) -> None:
    p = view.c.param
    role = _role(sol, p)
    ax.set_xlabel(f"{role}  {_display(p)}" + (f"  ({view.xunit})" if view.xunit else ""))
    ax.set_ylabel(f"{view.what} ({view.tunit})")
    if compact:
        return
    others = _other_params(sol, p.name)
    ax.set_title(
        f"{view.what.capitalize()} against {role}"
        + ("" if view.c.to_target else " (no scheme has steps to target)")
        + (f"; other params at their defaults: {others}" if others else ""),
        fontsize=10.5,
        loc="left",
    )


def _draw_marks(ax, view: CurveView, xv, placer: Placer, compact: bool = False) -> None:
    """The default's line, the break-evens' circles, the regime changes' diamonds, then their labels."""
    c, xs, ts = view.c, view.xscale, view.tscale
    p = c.param
    for s in c.ranked:
        placer.block_line(xv, c.ys[s] / ts)
    dv = p.default / xs
    if xv[0] <= dv <= xv[-1]:
        ax.axvline(dv, color="#777777", linewidth=0.9, linestyle=(0, (2, 2)), zorder=0)
        t = ax.annotate(
            f"default {U.format_quantity(p.default, p.dim)}",
            (dv, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            ha="left",
            va="top",
            fontsize="x-small" if compact else 9.5,
            color="#555555",
        )
        placer.block_artist(t)
    for b in view.breaks:
        xp, yp = b.x / xs, b.y / ts
        ax.plot([xp], [yp], marker="o", markersize=11, markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.6, zorder=5)
        ax.plot([xp], [yp], marker="o", markersize=3, color="black", zorder=6)
        placer.block(xp, yp, 8)
    changes = () if compact else c.changes
    for ch in changes:
        ax.plot([ch.x / xs], [ch.y / ts], marker="D", markersize=7, color=colour(ch.rank), markeredgecolor="black", markeredgewidth=0.8, zorder=5)
        placer.block(ch.x / xs, ch.y / ts, 6)
    for b in view.breaks:
        placer.place(
            b.x / xs,
            b.y / ts,
            f"{b.breakeven.x} = {b.breakeven.y}\n{U.format_quantity(b.x, b.breakeven.dim)}",
            offsets=OFFSETS + FAR,
            fontsize="x-small" if compact else 9,
            fontweight="bold",
            bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor="black", linewidth=0.8),
            arrowprops=dict(arrowstyle="-", color="black", linewidth=0.8),
            zorder=7,
        )
    for n, ch in enumerate(changes, 1):
        placer.place(
            ch.x / xs,
            ch.y / ts,
            str(n),
            fontsize=8.5,
            fontweight="bold",
            color="black",
            bbox=dict(boxstyle="circle,pad=0.18", facecolor="white", edgecolor=colour(ch.rank), linewidth=1.2),
            arrowprops=dict(arrowstyle="-", color=colour(ch.rank), linewidth=0.8),
            zorder=7,
        )


def _legend_and_notes(ax, notes, view: CurveView, renderer, compact: bool = False) -> None:
    """Under the plot: the legend, then the notes, each line at a fixed height in inches."""
    if compact:
        handles, labels = ax.get_legend_handles_labels()
        notes.legend(handles, [mpl_text(lb.split(": ", 1)[0]) for lb in labels], loc="upper left", ncol=2, frameon=False,
                     bbox_to_anchor=(0.0, 1.0), borderaxespad=0.0, handlelength=2.6, columnspacing=1.0)  # fmt: skip
        return
    h_in = notes.get_window_extent(renderer).height / notes.figure.dpi
    handles, labels = ax.get_legend_handles_labels()
    notes.legend(
        handles, labels, loc="upper left", ncol=2, frameon=False, bbox_to_anchor=(0.0, 1.0), borderaxespad=0.0,
        title="Schemes", title_fontproperties={"weight": "bold", "size": 10.5}, alignment="left",
        handlelength=3.2, labelspacing=0.35,
    )  # fmt: skip
    legend = notes.get_legend()
    lb = legend.get_window_extent(renderer)
    nb = notes.get_window_extent(renderer)
    y = (lb.y0 - nb.y0) / nb.height - 0.18 / h_in
    for kind, text, dot in view.notes:
        head = kind == "head"
        notes.text(0.0 if head else 0.02, y, mpl_text(text), transform=notes.transAxes, fontsize=10.5 if head else 10,
                   fontweight="bold" if head else "normal", va="top", ha="left")  # fmt: skip
        if dot is not None:
            notes.plot([0.007], [y - 0.45 * LINE / h_in], marker="D", markersize=5.5, color=dot, markeredgecolor="black",
                       markeredgewidth=0.5, transform=notes.transAxes, clip_on=False)  # fmt: skip
        y -= LINE / h_in
