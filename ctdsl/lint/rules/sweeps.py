"""CTL009: param sweeps of one point, or linear over three decades."""

from __future__ import annotations

from typing import Iterator

from ctdsl.diagnostics import Severity
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import quantity, times

# A linear sweep over this ratio or more (three decades) puts almost all of its
# points in the top decade.
LIN_SWEEP_DECADES = 1000.0


# ---- CTL009 ---------------------------------------------------------------------------


@rule(
    "CTL009",
    "sweep-oddity",
    Severity.WARNING,
    "A sweep with one point, or a linear sweep over three decades or more.",
    bad="""
    param wan_bw = 12.5 GB/s in 1 GB/s .. 100 GB/s lin 1
    param budget = 50 GFLOP/s in 1 GFLOP/s .. 10 TFLOP/s lin 20
    """,
    good="""
    param wan_bw = 12.5 GB/s in 1 GB/s .. 100 GB/s log 21
    param budget = 50 GFLOP/s in 1 GFLOP/s .. 10 TFLOP/s log 20
    """,
)
def sweep_oddity(ctx: Context) -> Iterator[Hit]:
    """
    A sweep of one point over a range says two things that disagree: a range to
    explore, and a single value. A linear sweep from lo to hi with hi / lo of 1000
    or more puts nearly all of its points in the top decade (0.1 to 1000 GB/s in
    41 linear points has one point below 25 GB/s): a log sweep was likely meant.

    A log sweep over a range that includes zero cannot be taken at all; the
    checker rejects it (CT307), and lint reports that error under the checker's
    code.
    """
    for p in ctx.spec.params.values():
        node = ctx.param_nodes.get(p.name)
        if node is None or node.range is None or not ctx.shown(node.range.span) or p.lo is None or p.hi is None:
            continue
        span = node.range.span
        ends = f"{quantity(p.lo, p.dim)} .. {quantity(p.hi, p.dim)}"
        if p.count == 1:
            yield Hit(
                f"param '{p.name}' sweeps a single point over {ends}",
                span,
                label="one point",
                help="sweep at least two points (e.g. lin 10), or drop the range and keep the default",
            )
        elif p.spacing == "lin" and p.lo > 0 and p.hi / p.lo >= LIN_SWEEP_DECADES:
            top = (p.hi - p.hi / 10) / (p.hi - p.lo) * 100
            yield Hit(
                f"param '{p.name}' sweeps {ends} linearly: {times(p.hi / p.lo)}, with {top:.0f}% of its points in the top decade",
                span,
                label="lin over three decades or more",
                help=f"sweep it with log: in {ends} log {p.count or 21}",
            )
