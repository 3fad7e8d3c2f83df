"""The figures' look, in one place: font, colours, line styles, markers, matplotlib settings, tick labels.

Every colour pairs with a line style and a marker (or, for bars, a hatch), so
that the figures read in grey too.
"""

from __future__ import annotations

import math

from ctdsl.language.components import Group
from ctdsl.report.encode import clip

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


HINTING = 1.05  # Agg's hinted glyphs at 100 dpi take up to 4% more than their outlines (40 W: 6.00 in against 5.77)


def text_width(texts, size: float) -> float:
    """Inches the widest of `texts` takes in the figures' font at `size` points: its glyphs' outlines
    (matplotlib's text-to-path metrics, the same on every machine and at every dpi) with HINTING's
    allowance; 0 for none. Literal text: the labels it measures are never mathtext."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    prop = FontProperties(family=FONT, size=size)
    widths = [text_to_path.get_text_width_height_descent(t, prop, ismath=False)[0] for t in texts if t]
    return HINTING * max(widths, default=0.0) / 72


def fit_chars(texts, room: float, size: float, limit: int) -> tuple[int, float]:
    """(k, w): the most characters k, at most `limit`, that `texts` may keep (encode.clip) so that the
    widest takes at most `room` inches at `size` points, 1 (an ellipsis) when none fits; w the widest
    clipped to k, measured (the label column's width)."""
    for k in range(limit, 1, -1):
        w = text_width([clip(t, k) for t in texts], size)
        if w <= room:
            return k, w
    return 1, text_width([clip(t, 1) for t in texts], size)
