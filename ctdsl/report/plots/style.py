"""The figures' look, in one place: font, colours, line styles, markers, matplotlib settings, tick labels.

Every colour pairs with a line style and a marker (or, for bars, a hatch), so
that the figures read in grey too.
"""

from __future__ import annotations

import math

from ctdsl.language.components import Group

FONT = "DejaVu Sans"  # bundled with matplotlib: the same glyphs on every machine
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F", "#999999", "#882255"]
STYLES = ["-", "--", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (9, 2.5)), (0, (1.5, 1.5)), (0, (4, 1.5, 1, 1.5))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
# the groups a step's components are stacked in: name, colour, hatch
GROUPS = [
    ("compute", "#0072B2", ""),
    ("model parallel", "#F0E442", "||"),  # the rest of the inner step: recomputation, bubble, model-parallel traffic, optimiser
    ("transform", "#E69F00", "//"),
    ("sync in dc", "#009E73", ".."),
    ("sync across dcs", "#D55E00", "xx"),
    ("sync exposed", "#882255", "oo"),  # a sync that overlaps the backward pass or later steps: what shows
    ("queueing", "#CC79A7", "\\\\"),
    ("stragglers", "#56B4E9", "--"),
    ("other", "#999999", "++"),
]
# the band of the step plot each column of the step table is drawn in (the overhead in "other")
_BANDS = {g: g.label for g in Group} | {Group.OVERHEAD: "other"}


def style_of(group: Group) -> str:
    """The band (a name of GROUPS) a step component of `group` is stacked in."""
    return _BANDS[group]


RC = {
    "font.family": "sans-serif",
    "font.sans-serif": [FONT],
    "font.size": 11,
    "axes.titlesize": 12.5,
    "axes.labelsize": 12,
    "legend.fontsize": 10.5,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "svg.hashsalt": "ctdsl",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "path.simplify": False,
    "axes.unicode_minus": False,
    "hatch.linewidth": 0.6,
}


def colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def plain(v: float, _pos=None) -> str:
    """A tick label: plain digits from 1e-3 to 1e6, else mantissa and exponent (2e9, 1e-5)."""
    if v == 0:
        return "0"
    if not math.isfinite(v):
        return ""
    if 1e-3 <= abs(v) < 1e6:
        return f"{v:g}"
    exp = int(math.floor(math.log10(abs(v))))
    mant = v / 10**exp
    return f"{mant:g}e{exp}" if mant != 1 else f"1e{exp}"


def plain_formatter():
    """`plain` as a matplotlib tick formatter."""
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(plain)
