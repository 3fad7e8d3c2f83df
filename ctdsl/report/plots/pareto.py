"""The Pareto front of a design search: its first two objectives, one marker and colour per choice.

The front's points come computed (`ctdsl.numeric.search`); nothing here
evaluates a form. With a third objective, each front point is labelled with its
value of it. The optimum is ringed. Every label from the spec passes `mpl_text`.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.report.encode import mpl_text
from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.style import MARKERS, RC, colour
from ctdsl.results.search import QUANTITY_DIMS, SearchResult

AXIS_WORDS = {"time": "time to target", "energy": "energy to target", "cost": "cost to target", "co2e": "CO2e to target"}


def pareto_figure(res: SearchResult):
    """The chart of a `SearchResult` with a Pareto front (`pareto = [a, b]` or `[a, b, c]`)."""
    matplotlib = mpl()
    xa, ya = res.pareto_axes[0], res.pareto_axes[1]
    with matplotlib.rc_context(RC):
        fig = new_figure(7.5, 5.0)
        ax = fig.add_axes([0.14, 0.13, 0.82, 0.78])
        xs_all = [p.quantity(xa) for p in res.pareto]
        ys_all = [p.quantity(ya) for p in res.pareto]
        xscale, xunit = U.best_unit(xs_all or [1.0], QUANTITY_DIMS[xa])
        yscale, yunit = U.best_unit(ys_all or [1.0], QUANTITY_DIMS[ya])
        names = [c.choice for c in res.choices]
        for i, name in enumerate(sorted(set(p.choice for p in res.pareto), key=names.index)):
            pts = [p for p in res.pareto if p.choice == name]
            ax.plot([p.quantity(xa) / xscale for p in pts], [p.quantity(ya) / yscale for p in pts], linestyle="none",
                    marker=MARKERS[i % len(MARKERS)], color=colour(i), label=mpl_text(name))  # fmt: skip
        ax.plot([x / xscale for x in xs_all], [y / yscale for y in ys_all], color="#999999", linewidth=0.8, zorder=0)
        if len(res.pareto_axes) == 3:
            za = res.pareto_axes[2]
            zscale, zunit = U.best_unit([p.quantity(za) for p in res.pareto], QUANTITY_DIMS[za])
            for p in res.pareto:
                ax.annotate(f"{p.quantity(za) / zscale:.3g}", (p.quantity(xa) / xscale, p.quantity(ya) / yscale), fontsize=7, xytext=(3, 3), textcoords="offset points")
            ax.set_title(mpl_text(f"Search {res.name}: Pareto front (labels: {AXIS_WORDS[za]}, {zunit})"))
        else:
            ax.set_title(mpl_text(f"Search {res.name}: Pareto front"))
        opt = res.optimum
        ax.plot([opt.quantity(xa) / xscale], [opt.quantity(ya) / yscale], marker="o", markersize=14, markerfacecolor="none", color="black", linestyle="none", label="optimum")
        ax.set_xlabel(f"{AXIS_WORDS[xa]} ({xunit})")
        ax.set_ylabel(f"{AXIS_WORDS[ya]} ({yunit})")
        ax.grid(True, linewidth=0.4, alpha=0.5)
        ax.legend(loc="best", fontsize="small")
    return fig


__all__ = ["pareto_figure"]
