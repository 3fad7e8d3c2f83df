"""Figures of a solved spec, with matplotlib, deterministic to the byte.

`sweep_figure(solution, forms)` draws one figure of three panels:

1. time to target against the spec's first ranged data-rate param (the WAN
   bandwidth in the flagship), log-log, one curve per scheme (a colour, a line
   style and a marker each, so that it reads in grey); break-evens marked and
   labelled with their values; numbered marks where the component that binds a
   scheme's step changes along its curve, explained in a list under the plot;
2. each scheme's step time at the defaults, as stacked bars of its components
   (compute, transform, sync inside a dc, sync across dcs), the binding one
   outlined;
3. the pluggable module's stage times for the dense stream, the bottleneck
   highlighted.

Determinism: the Agg renderer, DejaVu Sans (bundled with matplotlib), a fixed
`svg.hashsalt`, and no dates, software names or versions in the files' metadata
(`save`). The same spec gives the same bytes.

Labels are placed, not guessed: each label tries a list of offsets around its
point and takes the first whose box overlaps no label or mark already placed and
stays inside the plot.
"""

from __future__ import annotations

import math

import numpy as np

from ctdsl import units as U

FONT = "DejaVu Sans"
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F", "#999999", "#882255"]
STYLES = ["-", "--", "-.", ":", (0, (6, 1.5, 1, 1.5, 1, 1.5)), (0, (9, 2.5)), (0, (1.5, 1.5)), (0, (4, 1.5, 1, 1.5))]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
GROUPS = [
    ("compute", "#0072B2", ""),
    ("transform", "#E69F00", "//"),
    ("sync in dc", "#009E73", ".."),
    ("sync across dcs", "#D55E00", "xx"),
    ("queueing", "#CC79A7", "\\\\"),
    ("stragglers", "#56B4E9", "--"),
    ("other", "#999999", "++"),
]
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
CURVE_POINTS = 801


def _mpl():
    import matplotlib

    matplotlib.use("Agg", force=True)
    return matplotlib


def save(fig, path: str, fmt: str | None = None) -> None:
    """Write a figure as PNG, SVG or PDF with no date, software or version in it."""
    mpl = _mpl()
    fmt = fmt or path.rsplit(".", 1)[-1].lower()
    if fmt == "png":
        meta = {"Software": None}
    elif fmt == "svg":
        meta = {"Date": None, "Creator": None, "Format": None, "Type": None}
    elif fmt == "pdf":
        meta = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}
    else:
        raise ValueError(f"cannot write a figure as {fmt!r}")
    with mpl.rc_context(RC):
        fig.savefig(path, format=fmt, metadata=meta, dpi=150 if fmt == "png" else 72)


def new_figure(width: float, height: float):
    _mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


# ---- what to plot against ------------------------------------------------------------


def x_param(spec):
    """The first ranged data-rate param, else the first ranged param, else the first data rate."""
    params = list(spec.params.values())
    for test in (
        lambda p: p.lo is not None and p.dim == U.RATE,
        lambda p: p.lo is not None,
        lambda p: p.dim == U.RATE and p.default > 0,
    ):
        for p in params:
            if test(p):
                return p
    return None


def _x_range(p, axis) -> tuple[float, float]:
    if axis is not None and axis.count > 1:
        return float(axis.lo), float(axis.hi)
    if p.lo is not None:
        return float(p.lo), float(p.hi)
    return float(p.default) / 100, float(p.default) * 100


def _display(p) -> str:
    """The param's display name as mathtext, when matplotlib can typeset it."""
    if not p.display:
        return p.name
    from matplotlib.mathtext import MathTextParser

    try:
        MathTextParser("path").parse(f"${p.display}$")
    except Exception:  # noqa: BLE001 - any failure means: show the plain name
        return p.name
    return f"${p.display}$"


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


def _plain(v: float, _pos=None) -> str:
    if v == 0:
        return "0"
    if 1e-3 <= abs(v) < 1e6:
        return f"{v:g}"
    exp = int(math.floor(math.log10(abs(v))))
    mant = v / 10**exp
    return f"{mant:g}e{exp}" if mant != 1 else f"1e{exp}"


# ---- label placement ---------------------------------------------------------------------

OFFSETS = [
    (10, 10), (10, -10), (-10, 10), (-10, -10),
    (16, 28), (16, -28), (-16, 28), (-16, -28),
    (0, 42), (0, -42), (34, 0), (-34, 0),
    (30, 56), (30, -56), (-30, 56), (-30, -56),
    (0, 72), (0, -72), (60, 30), (-60, 30), (60, -30), (-60, -30),
]


class Placer:
    """Puts annotations where they cover the least (a simple adjustText).

    Obstacles are boxes in display space with a weight: placed labels and marks
    weigh most, curve points a little. Each label tries a list of offsets around
    its point and takes the one whose box stays inside the plot and covers the
    least weight: the first that covers nothing, when there is one.
    """

    HEAVY = 1000.0

    def __init__(self, ax):
        self.ax = ax
        self.renderer = ax.figure.canvas.get_renderer()
        self.boxes = np.zeros((0, 4))
        self.weights = np.zeros(0)

    def _add(self, boxes: np.ndarray, weight: float) -> None:
        self.boxes = np.vstack([self.boxes, boxes])
        self.weights = np.concatenate([self.weights, np.full(len(boxes), weight)])

    def block(self, x: float, y: float, pad: float = 6.0) -> None:
        """Keep labels off a mark at (x, y), in data coordinates."""
        px, py = self.ax.transData.transform((x, y))
        self._add(np.array([[px - pad, py - pad, px + pad, py + pad]]), self.HEAVY)

    def block_line(self, xs, ys, pad: float = 1.5) -> None:
        """Keep labels off a curve, if they can."""
        ok = np.isfinite(xs) & np.isfinite(ys)
        pts = self.ax.transData.transform(np.column_stack([xs[ok], ys[ok]]))
        self._add(np.column_stack([pts[:, 0] - pad, pts[:, 1] - pad, pts[:, 0] + pad, pts[:, 1] + pad]), 1.0)

    def _cost(self, bb, frame) -> float:
        b = self.boxes
        w = np.clip(np.minimum(b[:, 2], bb.x1) - np.maximum(b[:, 0], bb.x0), 0, None)
        h = np.clip(np.minimum(b[:, 3], bb.y1) - np.maximum(b[:, 1], bb.y0), 0, None)
        cost = float(np.sum(w * h * self.weights))
        outside = bb.width * bb.height - max(0.0, min(bb.x1, frame.x1) - max(bb.x0, frame.x0)) * max(0.0, min(bb.y1, frame.y1) - max(bb.y0, frame.y0))
        return cost + outside * self.HEAVY * 10

    def place(self, x: float, y: float, text: str, offsets=OFFSETS, **kw):
        frame = self.ax.get_window_extent(self.renderer)
        best = None
        for dx, dy in offsets:
            t = self.ax.annotate(
                text,
                (x, y),
                xytext=(dx, dy),
                textcoords="offset points",
                ha="left" if dx > 0 else ("right" if dx < 0 else "center"),
                va="bottom" if dy > 0 else ("top" if dy < 0 else "center"),
                **kw,
            )
            bb = t.get_window_extent(self.renderer).padded(2)
            cost = self._cost(bb, frame)
            if best is None or cost < best[0]:
                if best is not None:
                    best[1].remove()
                best = (cost, t, bb)
            else:
                t.remove()
            if cost == 0:
                break
        _, t, bb = best
        self._add(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), self.HEAVY)
        return t


# ---- the figure ---------------------------------------------------------------------------

WIDTH = 11.0  # inches
LINE = 0.22  # inches per line of notes


def sweep_figure(sol, forms, x_axis=None):
    """The three-panel figure: time to target against bandwidth, step components, module stages."""
    mpl = _mpl()
    with mpl.rc_context(RC):
        curve = _curve_data(sol, forms, x_axis)
        n_legend = math.ceil(len(curve.ranked) / 2) if curve else 0
        n_notes = len(curve.notes) if curve else 0
        modules = [r for r in sol.schemes.values() if r.module is not None]
        stage_labels = [st.name if len(modules) == 1 else f"{r.name}: {st.name}" for r in modules for st in r.module.stages]
        # heights in inches, top to bottom
        top, below_main = 0.75, (0.65 if curve else 0.1)
        main = 5.6 if curve else 0.5
        notes_h = (0.32 + 0.215 * n_legend + 0.2 + LINE * n_notes + 0.05) if curve else 0.01
        rows = max(len(sol.schemes), len(stage_labels))
        gap, panels, bottom = 0.95, min(7.0, max(1.6, 0.42 * rows + 0.3)), 0.6
        height = top + main + below_main + notes_h + gap + panels + bottom
        fig = new_figure(WIDTH, height)

        def box(left_in, bottom_in, width_in, height_in):
            return fig.add_axes([left_in / WIDTH, bottom_in / height, width_in / WIDTH, height_in / height])

        y = height - top - main
        ax = box(0.95, y, WIDTH - 1.25, main)
        y -= below_main + notes_h
        notes = box(0.95, y, WIDTH - 1.25, notes_h)
        # widths from the longest tick labels (about 0.085 in a character at 10.5 pt)
        bars_left = 0.3 + 0.085 * max(len(n) for n in sol.schemes)
        if modules:
            stage_left = 0.3 + 0.085 * max(len(t) for t in stage_labels)
            stages_w = 3.2
            bars_w = WIDTH - 0.3 - bars_left - stages_w - stage_left - 0.5
            bars = box(bars_left, bottom, bars_w, panels)
            stages = box(WIDTH - 0.3 - stages_w, bottom, stages_w, panels)
        else:
            bars = box(bars_left, bottom, WIDTH - 0.3 - bars_left - 0.2, panels)
            stages = None
        fig.suptitle(f"{_spec_name(sol)}: which sync scheme reaches the target first", fontsize=14, fontweight="bold", y=1 - 0.3 / height)
        curves_panel(ax, notes, sol, forms, curve)
        components_panel(bars, sol)
        if stages is not None:
            module_panel(stages, sol)
    return fig


def _spec_name(sol) -> str:
    from pathlib import PurePath

    return PurePath(sol.spec.root).name


class _Curves:
    pass


def _curve_data(sol, forms, x_axis):
    """Everything the first panel shows, computed before drawing (the layout needs its size)."""
    from ctdsl.numeric.chunked import evaluate

    p = x_param(sol.spec)
    ranked = [name for name, sf in forms.schemes.items() if sf.has_steps]
    if p is None:
        return None
    c = _Curves()
    c.quantity, c.what = ("time_to_target", "time to target") if ranked else ("step", "step time")
    ranked = ranked or list(forms.schemes)
    c.p, c.ranked = p, ranked
    lo, hi = _x_range(p, x_axis)
    c.logx = lo > 0 and hi / lo >= 20
    c.xs = np.geomspace(lo, hi, CURVE_POINTS) if c.logx else np.linspace(lo, hi, CURVE_POINTS)
    res = evaluate(forms, {p.name: c.xs})
    c.res = res
    c.ys = {s: res.values[(s, c.quantity)] for s in ranked}
    finite = np.concatenate([y[np.isfinite(y) & (y > 0)] for y in c.ys.values()])
    c.finite = finite
    c.tscale, c.tunit = U.best_unit([float(np.median(finite))] if finite.size else [], U.TIME)
    c.xscale, c.xunit = _unit_of(p, [lo, hi])
    c.breaks = []
    for b in sol.breakevens:
        if b.over != p.name or b.result is None:
            continue
        for root in b.roots:
            if not lo <= root.value <= hi:
                continue
            at = evaluate(forms, {p.name: np.array([root.value])})
            yv = at.values[(b.x, c.quantity)][0]
            if np.isfinite(yv):
                c.breaks.append((root.value, yv, b, root))
    c.changes = []
    for s in ranked:
        codes = res.binding[s]
        for j in np.flatnonzero(codes[1:] != codes[:-1]).tolist():
            xc = _refine(forms, p.name, s, c.xs[j], c.xs[j + 1], int(codes[j]), c.logx)
            yc = evaluate(forms, {p.name: np.array([xc])}).values[(s, c.quantity)][0]
            comps = forms.schemes[s].components
            c.changes.append((xc, yc, s, comps[codes[j]], comps[codes[j + 1]], ranked.index(s)))
    notes = []
    fastest = _fastest(forms, p.name, c.xs, res, ranked, c.logx) if c.quantity == "time_to_target" else []
    if fastest:
        notes.append(("head", f"First to the target, by {p.name}", None))
        parts = []
        for k, (a, b, s) in enumerate(fastest):
            if len(fastest) == 1:
                parts.append(f"{s} throughout")
            elif k == 0:
                parts.append(f"{s} below {U.format_quantity(b, p.dim)}")
            elif k == len(fastest) - 1:
                parts.append(f"{s} above {U.format_quantity(a, p.dim)}")
            else:
                parts.append(f"{s} from {U.format_quantity(a, p.dim)} to {U.format_quantity(b, p.dim)}")
        for k in range(0, len(parts), 3):
            notes.append(("text", "; ".join(parts[k : k + 3]), None))
    if c.breaks:
        notes.append(("head", "Break-even (open circles): where two schemes take the same time", None))
        for xb, yb, b, root in c.breaks:
            notes.append(("text", f"{b.x} and {b.y} tie at {U.format_quantity(xb, b.dim)}: {root.below} is faster below, {root.above} above", None))
    missed = [b for b in sol.breakevens if b.over == p.name and b.result is not None and not b.roots]
    if missed and not c.breaks:
        notes.append(("head", "Break-even", None))
    for b in missed:
        notes.append(("text", f"{b.x} and {b.y} never tie in this range: {b.result.faster_at_lo} is faster throughout", None))
    if c.changes:
        notes.append(("head", "Where the component that binds a step changes (numbered diamonds)", None))
        for n, (xc, yc, s, before, after, i) in enumerate(c.changes, 1):
            notes.append(("change", f"{n}. {s}: {before} binds below {U.format_quantity(xc, p.dim)}, {after} above", COLOURS[i % len(COLOURS)]))
    c.notes = notes
    return c


def _other_params(sol, skip: str | None) -> str:
    parts = [f"{p.name} = {U.format_quantity(p.default, p.dim)}" for p in sol.spec.params.values() if p.name != skip]
    return ", ".join(parts)


def curves_panel(ax, notes, sol, forms, c) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    notes.axis("off")
    if c is None:
        ax.axis("off")
        ax.text(0.0, 0.5, "No curve: the spec has no param to plot the time to target against (give one a range).", ha="left", va="center", transform=ax.transAxes)
        return
    p = c.p
    xv = c.xs / c.xscale
    for i, s in enumerate(c.ranked):
        r = sol.schemes[s]
        ax.plot(
            xv,
            c.ys[s] / c.tscale,
            color=COLOURS[i % len(COLOURS)],
            linestyle=STYLES[i % len(STYLES)],
            marker=MARKERS[i % len(MARKERS)],
            markevery=(int(i * CURVE_POINTS / (8 * len(c.ranked))) + 20, CURVE_POINTS // 8),
            markersize=5.5,
            markerfacecolor="white",
            linewidth=1.8,
            label=f"{s}: {r.label}" if r.label != s else s,
        )
    if c.logx:
        ax.set_xscale("log")
    ypos = c.finite / c.tscale if c.finite.size else np.array([1.0])
    logy = bool(ypos.max() / ypos.min() >= 5)
    if logy:
        ax.set_yscale("log")
        ax.set_ylim(ypos.min() / 1.3, ypos.max() * 1.6)
    else:
        ax.set_ylim(0, ypos.max() * 1.15)
    ax.set_xlim(xv[0], xv[-1])
    for axis, log in ((ax.xaxis, c.logx), (ax.yaxis, logy)):
        if log:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,)))
            axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
            axis.set_minor_formatter(FuncFormatter(_plain) if _decades(axis) <= 2.5 else NullFormatter())
        axis.set_major_formatter(FuncFormatter(_plain))
    ax.grid(True, which="major", color="#cccccc", linewidth=0.7)
    ax.grid(True, which="minor", color="#eeeeee", linewidth=0.5)
    role = _role(sol, p)
    ax.set_xlabel(f"{role}  {_display(p)}" + (f"  ({c.xunit})" if c.xunit else ""))
    ax.set_ylabel(f"{c.what} ({c.tunit})")
    others = _other_params(sol, p.name)
    ax.set_title(f"{c.what.capitalize()} against {role}" + ("" if c.quantity == "time_to_target" else " (no scheme has steps to target)") + (f"; other params at their defaults: {others}" if others else ""), fontsize=10.5, loc="left")

    placer = Placer(ax)
    for i, s in enumerate(c.ranked):
        placer.block_line(xv, c.ys[s] / c.tscale)
    dv = p.default / c.xscale
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
            fontsize=9.5,
            color="#555555",
        )
        bb = t.get_window_extent(placer.renderer)
        placer._add(np.array([[bb.x0, bb.y0, bb.x1, bb.y1]]), Placer.HEAVY)
    for xb, yb, b, root in c.breaks:
        xp, yp = xb / c.xscale, yb / c.tscale
        ax.plot([xp], [yp], marker="o", markersize=11, markerfacecolor="white", markeredgecolor="black", markeredgewidth=1.6, zorder=5)
        ax.plot([xp], [yp], marker="o", markersize=3, color="black", zorder=6)
        placer.block(xp, yp, 8)
    for xc, yc, s, before, after, i in c.changes:
        ax.plot([xc / c.xscale], [yc / c.tscale], marker="D", markersize=7, color=COLOURS[i % len(COLOURS)], markeredgecolor="black", markeredgewidth=0.8, zorder=5)
        placer.block(xc / c.xscale, yc / c.tscale, 6)
    for xb, yb, b, root in c.breaks:
        placer.place(
            xb / c.xscale,
            yb / c.tscale,
            f"{b.x} = {b.y}\n{U.format_quantity(xb, b.dim)}",
            fontsize=9,
            fontweight="bold",
            bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor="black", linewidth=0.8),
            arrowprops=dict(arrowstyle="-", color="black", linewidth=0.8),
            zorder=7,
        )
    for n, (xc, yc, s, before, after, i) in enumerate(c.changes, 1):
        placer.place(
            xc / c.xscale,
            yc / c.tscale,
            str(n),
            fontsize=8.5,
            fontweight="bold",
            color="black",
            bbox=dict(boxstyle="circle,pad=0.18", facecolor="white", edgecolor=COLOURS[i % len(COLOURS)], linewidth=1.2),
            arrowprops=dict(arrowstyle="-", color=COLOURS[i % len(COLOURS)], linewidth=0.8),
            zorder=7,
        )

    # under the plot: the legend, then the notes, each line at a fixed height in inches
    h_in = notes.get_window_extent(placer.renderer).height / notes.figure.dpi
    handles, labels = ax.get_legend_handles_labels()
    notes.legend(
        handles, labels, loc="upper left", ncol=2, frameon=False, bbox_to_anchor=(0.0, 1.0), borderaxespad=0.0,
        title="Schemes", title_fontproperties={"weight": "bold", "size": 10.5}, alignment="left",
        handlelength=3.2, labelspacing=0.35,
    )
    legend = notes.get_legend()
    lb = legend.get_window_extent(placer.renderer)
    nb = notes.get_window_extent(placer.renderer)
    y = (lb.y0 - nb.y0) / nb.height - 0.18 / h_in
    for kind, text, colour in c.notes:
        notes.text(0.0 if kind == "head" else 0.02, y, text, transform=notes.transAxes, fontsize=10.5 if kind == "head" else 10,
                   fontweight="bold" if kind == "head" else "normal", va="top", ha="left")
        if colour is not None:
            notes.plot([0.007], [y - 0.45 * LINE / h_in], marker="D", markersize=5.5, color=colour, markeredgecolor="black",
                       markeredgewidth=0.5, transform=notes.transAxes, clip_on=False)
        y -= LINE / h_in


def _fastest(forms, name: str, xs, res, ranked, log: bool):
    """Runs of x where one scheme is first to the target: [(from, to, scheme)]."""
    from ctdsl.numeric.chunked import evaluate

    w = res.winner
    runs = []
    start = xs[0]
    for j in np.flatnonzero(w[1:] != w[:-1]).tolist():
        a, b, code = xs[j], xs[j + 1], int(w[j])
        for _ in range(60):
            m = math.sqrt(a * b) if log else (a + b) / 2
            if m in (a, b):
                break
            if int(evaluate(forms, {name: np.array([m])}).winner[0]) == code:
                a = m
            else:
                b = m
        edge = math.sqrt(a * b) if log else (a + b) / 2
        runs.append((start, edge, int(w[j])))
        start = edge
    runs.append((start, xs[-1], int(w[-1])))
    return [(a, b, ranked[k]) for a, b, k in runs if k >= 0]


def _decades(axis) -> float:
    lo, hi = axis.get_view_interval()
    return math.log10(hi / lo) if lo > 0 and hi > 0 else 99


def _refine(forms, name: str, scheme: str, a: float, b: float, code_a: int, log: bool) -> float:
    """Where the binding component changes between a and b, by bisection."""
    from ctdsl.numeric.chunked import evaluate

    for _ in range(60):
        m = math.sqrt(a * b) if log else (a + b) / 2
        if m in (a, b):
            break
        c = int(evaluate(forms, {name: np.array([m])}).binding[scheme][0])
        if c == code_a:
            a = m
        else:
            b = m
    return math.sqrt(a * b) if log else (a + b) / 2


def _group_of(r, name: str) -> str:
    from ctdsl.report.tables import phase_group

    if name in ("compute", "transform", "stragglers"):
        return name
    if name.startswith("queueing on "):
        return "queueing"
    ph = next((p for p in r.phases if p.name == name), None)
    if ph is not None:
        return "sync in dc" if phase_group(ph) == "in dc" else "sync across dcs"
    return "other"


def components_panel(ax, sol) -> None:
    from matplotlib.patches import Patch

    schemes = list(sol.schemes.values())
    names = [r.name for r in schemes]
    known = [g for g, _, _ in GROUPS]
    values: dict[str, list[float]] = {g: [0.0] * len(schemes) for g in known}
    binding_group = []
    for k, r in enumerate(schemes):
        for name, q in r.components.items():
            values[_group_of(r, name)][k] += q.value
        binding_group.append(_group_of(r, r.binding))
    totals = [r.step_time.value for r in schemes]
    scale, unit = U.best_unit(totals, U.TIME)
    y = np.arange(len(schemes))[::-1]
    left = np.zeros(len(schemes))
    shown = []
    for g, colour, hatch in GROUPS:
        v = np.array(values[g]) / scale
        if not np.any(v > 0):
            continue
        shown.append((g, colour, hatch))
        ax.barh(y, v, left=left, color=colour, hatch=hatch, edgecolor="white", linewidth=0.5, height=0.68)
        for k in range(len(schemes)):
            if binding_group[k] == g and v[k] > 0:
                ax.barh(y[k], v[k], left=left[k], fill=False, edgecolor="black", linewidth=2.0, height=0.68)
        left += v
    xmax = float(max(left.max(), max(totals) / scale)) if len(left) else 1.0
    for k, r in enumerate(schemes):
        tail = " (overlapped)" if r.overlap else ""
        ax.text(left[k] + xmax * 0.015, y[k], f"{U.format_quantity(r.step_time.value, U.TIME)}{tail}", va="center", ha="left", fontsize=9.5)
    ax.set_xlim(0, xmax * 1.3)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_xlabel(f"time per step ({unit})")
    ax.set_title("Step time at the defaults, by component", loc="left")
    handles = [Patch(facecolor=c, hatch=h, edgecolor="white", label=g) for g, c, h in shown]
    handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.0, label="binds the step"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.07), ncol=3, frameon=False, fontsize=9.5, handlelength=1.6, columnspacing=1.0)
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.xaxis.set_major_formatter(_formatter())


def _formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(_plain)


def module_panel(ax, sol) -> None:
    rows = [r for r in sol.schemes.values() if r.module is not None]
    if not rows:
        ax.axis("off")
        ax.text(0.5, 0.5, "No scheme runs its transform\nin a pluggable module", ha="center", va="center", fontsize=10, transform=ax.transAxes)
        return
    labels, times, rates, bottleneck = [], [], [], []
    for r in rows:
        m = r.module
        for st in m.stages:
            labels.append(st.name if len(rows) == 1 else f"{r.name}: {st.name}")
            times.append(st.time.value)
            rates.append(st.rate.value)
            bottleneck.append(st.name == m.binding)
    scale, unit = U.best_unit(times, U.TIME)
    y = np.arange(len(labels))[::-1].astype(float)
    v = np.array(times) / scale
    for k in range(len(labels)):
        b = bottleneck[k]
        ax.barh(y[k], v[k], color="#D55E00" if b else "#bbbbbb", hatch="xx" if b else "", edgecolor="black" if b else "white", linewidth=1.2 if b else 0.5, height=0.62)
    vmax = float(v.max()) if v.size else 1.0
    for k in range(len(labels)):
        text = f"{U.format_quantity(rates[k], U.RATE)}, {U.format_quantity(times[k], U.TIME)}"
        if bottleneck[k]:
            text = "bottleneck\n" + text
        ax.text(v[k] + vmax * 0.03, y[k], text, va="center", ha="left", fontsize=9.5, fontweight="bold" if bottleneck[k] else "normal")
    ax.set_xlim(0, vmax * 2.1)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    m = rows[0].module
    ax.set_xlabel(f"time for the dense stream of {U.format_quantity(m.stream.value, U.DATA)} ({unit})")
    who = rows[0].name if len(rows) == 1 else ", ".join(r.name for r in rows)
    ax.set_title(f"Module {m.pluggable}: stage rate, time\n(the transform of {who})", loc="left", fontsize=11.5)
    if m.breaks:
        ax.annotate(
            "; ".join(f"{b.then} binds from\n{b}" for b in m.breaks),
            (1.0, 0.0),
            xycoords="axes fraction",
            xytext=(-4, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=9,
            color="#333333",
        )
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.xaxis.set_major_formatter(_formatter())


# ---- the topology --------------------------------------------------------------------------

MAX_WORKERS_DRAWN = 6


def topology_figure(spec, graph):
    """The graph drawn by data centre: workers, modules in their ports, the switch; WAN links between."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ctdsl.model import expr as E

    mpl = _mpl()
    env = spec.defaults()

    def rate(e) -> str:
        try:
            return U.format_quantity(E.evaluate(e, env), U.RATE)
        except Exception:  # noqa: BLE001 - a label only
            return "?"

    dcs = list(spec.dcs.values())
    widths = []
    for dc in dcs:
        shown = min(dc.workers, MAX_WORKERS_DRAWN)
        widths.append(max(2.6, 1.0 + 1.05 * (shown + (1 if dc.workers > MAX_WORKERS_DRAWN else 0))))
    gap = 3.0
    total = sum(widths) + gap * (len(dcs) - 1) + 0.6
    with mpl.rc_context(RC):
        fig = new_figure(min(11.0, max(6.0, total * 0.95)), 4.3)
        ax = fig.add_axes([0.01, 0.01, 0.98, 0.98])
        ax.set_xlim(0, total)
        ax.set_ylim(0, 4.6)
        ax.axis("off")
        pos: dict[str, tuple[float, float]] = {}
        x0 = 0.3
        for dc, w in zip(dcs, widths):
            ax.add_patch(FancyBboxPatch((x0, 0.25), w, 3.55, boxstyle="round,pad=0.02,rounding_size=0.15", facecolor="#f4f4f4", edgecolor="#888888", linewidth=1.0))
            dev = spec.devices.get(dc.device)
            link = spec.links.get(dc.link)
            ax.text(x0 + 0.12, 3.68, f"dc {dc.name}", fontsize=11, fontweight="bold", va="top")
            foot = f"{dc.workers} x {dc.device}" + (f" ({dev.name})" if dev is not None and dev.name != dc.device else "")
            if link is not None:
                foot += f"\nintra: {dc.link} {rate(link.bandwidth)}"
            plug = spec.pluggables.get(dc.pluggable) if dc.pluggable else None
            if plug is not None:
                foot += f"\nmodule: {plug.name} {rate(plug.line_rate)}"
            ax.text(x0 + 0.12, 0.32, foot, fontsize=8.5, va="bottom", color="#333333")
            sw = f"{dc.name}.{dc.switch}"
            pos[sw] = (x0 + w / 2, 3.1)
            n = dc.workers
            idx = list(range(n)) if n <= MAX_WORKERS_DRAWN else list(range(MAX_WORKERS_DRAWN - 1)) + [None, n - 1]
            step = w / (len(idx) + 0.0)
            for k, i in enumerate(idx):
                cx = x0 + step * (k + 0.5)
                if i is None:
                    ax.text(cx, 1.25, "...", ha="center", va="center", fontsize=12)
                    continue
                wid = f"{dc.name}.w{i}"
                pos[wid] = (cx, 1.25)
                if dc.pluggable:
                    pos[f"{wid}.{dc.pluggable}"] = (cx, 2.05)
            x0 += w + gap
        styles = {"worker": ("#0072B2", "white"), "module": ("#E69F00", "black"), "switch": ("#009E73", "white")}
        drawn = set()
        for d in graph.edges():
            u, v = d.source, d.target
            if u not in pos or v not in pos or d.kind == "wan":
                continue
            key = tuple(sorted((u, v)))
            if key in drawn:
                continue
            drawn.add(key)
            (xu, yu), (xv, yv) = pos[u], pos[v]
            ax.plot([xu, xv], [yu, yv], color="#777777" if d.kind == "intra" else "#E69F00", linewidth=1.2, zorder=1)
        wans: dict[tuple[str, str], list] = {}
        for d in graph.edges():
            u, v = d.source, d.target
            if d.kind == "wan" and u in pos and v in pos:
                wans.setdefault(tuple(sorted((u, v))), []).append((u, v, d))
        order = [f"{dc.name}.{dc.switch}" for dc in dcs]
        for k, ((a, b), edges) in enumerate(sorted(wans.items())):
            if order.index(a) > order.index(b):
                a, b = b, a
            (xa, ya), (xb, yb) = pos[a], pos[b]
            both = len(edges) > 1
            style = "<|-|>" if both else ("-|>" if edges[0][0] == a else "<|-")
            if order.index(b) - order.index(a) == 1:
                start, stop, rad, ly = (xa + 0.66, ya), (xb - 0.66, yb), 0.0, ya - 0.22
            else:  # over the dcs in between
                start, stop, rad, ly = (xa, ya + 0.25), (xb, yb + 0.25), -0.18, ya + 0.25 + 0.09 * (xb - xa) + 0.1
            ax.add_patch(
                FancyArrowPatch(start, stop, arrowstyle=style, mutation_scale=16, linewidth=2.4, color="#D55E00", connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0, zorder=2)
            )
            d = edges[0][2]
            link = spec.links.get(d.link)
            label = f"WAN {d.link}\n{rate(link.bandwidth) if link else '?'}"
            if link is not None and isinstance(link.bandwidth, E.Sym):
                label += f"\n({link.bandwidth.name})"
            label += "\neach direction" if both else ""
            straight = rad == 0.0
            ax.text((xa + xb) / 2, ly, label, ha="center", va="top" if straight else "bottom", fontsize=9.5, color="#8a3a00", fontweight="bold", linespacing=1.25)
        for node, (x, y) in pos.items():
            kind = graph.node(node).kind
            face, ink = styles.get(kind, ("#999999", "white"))
            text = node.split(".")[-1] if kind != "module" else graph.node(node).definition
            wbox, hbox = (0.8, 0.42) if kind != "switch" else (1.3, 0.48)
            ax.add_patch(FancyBboxPatch((x - wbox / 2, y - hbox / 2), wbox, hbox, boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=face, edgecolor="black", linewidth=0.8, zorder=3))
            ax.text(x, y, text, ha="center", va="center", fontsize=9, color=ink, zorder=4, fontweight="bold" if kind == "switch" else "normal")
        from matplotlib.patches import Patch

        key = [Patch(facecolor=styles[k][0], edgecolor="black", label=t) for k, t in (("worker", "worker"), ("module", "module in its port"), ("switch", "switch"))]
        ax.legend(handles=key, loc="upper right", ncol=3, frameon=False, fontsize=9, handlelength=1.2)
    return fig


def png_bytes(fig, dpi: int = 150) -> bytes:
    """A figure as PNG bytes, without metadata that would change between runs."""
    import io

    mpl = _mpl()
    buf = io.BytesIO()
    with mpl.rc_context(RC):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def math_png(latex: str, fontsize: float = 13, dpi: int = 170) -> bytes | None:
    """LaTeX rendered by matplotlib's mathtext (no TeX needed), or None if mathtext cannot typeset it."""
    import io

    from matplotlib.mathtext import MathTextParser

    mpl = _mpl()
    try:
        MathTextParser("path").parse(f"${latex}$")
    except Exception:  # noqa: BLE001 - mathtext covers a subset of LaTeX
        return None
    with mpl.rc_context({**RC, "mathtext.fontset": "dejavusans"}):
        fig = new_figure(0.01, 0.01)
        fig.text(0, 0, f"${latex}$", fontsize=fontsize)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.04, metadata={"Software": None}, transparent=False)
    return buf.getvalue()
