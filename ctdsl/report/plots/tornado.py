"""A tornado chart: how far one quantity moves as each param runs over its declared range.

One horizontal bar per param, widest first (at the top): the change in the
quantity from its value at the params' values, with the param at the low end of
its range (one colour and hatch) and at the high end (another), the other params
at their values. The numbers come computed (`ctdsl.symbolic.tornado`); nothing
here evaluates a form. An end where the quantity is not defined (a break-even
never in range there) has no bar and says so. Every label from the spec passes
`mpl_text` (literal text, never mathtext).
"""

from __future__ import annotations

import math

from ctdsl import units as U
from ctdsl.report.encode import mpl_text
from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.style import RC, colour
from ctdsl.results.sensitivity import Tornado

LOW, HIGH = (colour(0), ""), (colour(1), "//")


def bar_label(b) -> str:
    """`wan_bw (0.1 GB/s .. 1 TB/s)`."""
    return f"{b.param} ({U.format_quantity(b.lo, b.dim)} .. {U.format_quantity(b.hi, b.dim)})"


def tornado_figure(t: Tornado):
    """The chart of a `Tornado` (ctdsl.results.sensitivity)."""
    matplotlib = mpl()
    with matplotlib.rc_context(RC):
        n = max(1, len(t.bars))
        height = 1.9 + 0.5 * n  # inches: title, bars, axis label and legend
        fig = new_figure(9.0, height)
        ax = fig.add_axes([0.34, 1.2 / height, 0.62, 0.5 * n / height])
        y0 = t.value.value
        deltas = [d - y0 for b in t.bars for d in (b.at_lo, b.at_hi) if math.isfinite(d) and math.isfinite(y0)]
        scale, unit = U.best_unit([abs(d) for d in deltas] or [1.0], t.value.dim)
        for i, b in enumerate(t.bars):
            row = n - 1 - i
            ends = [(b.at_lo, LOW), (b.at_hi, HIGH)]
            ends.sort(key=lambda e: -abs(e[0] - y0) if math.isfinite(e[0] - y0) else 0)  # the longer first, the shorter over it
            for end, (c, hatch) in ends:
                if math.isfinite(end) and math.isfinite(y0):
                    ax.barh(row, (end - y0) / scale, left=0, height=0.6, color=c, hatch=hatch, edgecolor="black", linewidth=0.6)
            missing = [w for w, end in (("low", b.at_lo), ("high", b.at_hi)) if not math.isfinite(end)]
            if missing:
                ax.text(0.01, row + 0.32, "no value at the " + " and ".join(missing) + " end", fontsize="small", va="bottom",
                        transform=ax.get_yaxis_transform())  # fmt: skip
        ax.axvline(0, color="black", linewidth=0.9)
        span = max([abs(d) / scale for d in deltas] or [1.0]) or 1.0
        ax.set_xlim(min([0.0] + [d / scale for d in deltas]) - 0.08 * span, max([0.0] + [d / scale for d in deltas]) + 0.08 * span)
        ax.set_yticks(range(n))
        ax.set_yticklabels([mpl_text(bar_label(b)) for b in reversed(t.bars)] if t.bars else [""])
        ax.set_ylim(-0.6, n - 0.4)
        shown = U.format_quantity(y0, t.value.dim)
        ax.set_xlabel(mpl_text(f"change from {shown}" + (f" ({unit})" if unit and unit != "1" else "")))
        fig.suptitle(mpl_text(f"{t.what}: over each param's range"), fontsize=13, fontweight="bold", y=0.98)
        from matplotlib.patches import Patch

        ax.legend(
            handles=[Patch(facecolor=LOW[0], hatch=LOW[1], edgecolor="black", label="param at the low end"),
                     Patch(facecolor=HIGH[0], hatch=HIGH[1], edgecolor="black", label="param at the high end")],
            loc="upper center", bbox_to_anchor=(0.5, -0.72 / (0.5 * n)), ncol=2, fontsize="small", frameon=False,
        )  # fmt: skip
        if not t.bars:
            ax.text(0.5, 0.5, "No param with a declared range.", ha="center", va="center", transform=ax.transAxes)
    return fig
