"""The sweep figure: three panels laid out in inches, the curves over the two bar charts.

`sweep_figure(solution, curves)` draws what `ctdsl.numeric.crossings.sweep_curves`
computed (or, with None, says there is no param to plot against), the step
components and the module's stages. The heights follow the content: the notes
under the curves take a line each, the bar panels a row per scheme or stage.
"""

from __future__ import annotations

import math
from pathlib import PurePath

from ctdsl.report.encode import TICK_CHARS, clip, mpl_text
from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.curves import LINE, CurveView, curves_panel
from ctdsl.report.plots.steps import components_panel, module_panel, stage_labels
from ctdsl.report.plots.style import RC, fit_chars, text_width

WIDTH = 11.0  # inches
MIN_BARS = 2.0  # inches: the narrowest the components panel is drawn, however long the names beside it


NO_SCHEMES = "No schemes to plot: the spec declares no scheme."


def placeholder_figure(title: str, text: str):
    """A small figure that says why there is nothing to draw (a stated placeholder, not a crash)."""
    with mpl().rc_context(RC):
        fig = new_figure(WIDTH, 1.6)
        fig.suptitle(mpl_text(title), fontsize=14, fontweight="bold", y=0.85)
        fig.text(0.05, 0.35, mpl_text(text), fontsize=11, ha="left", va="center")
    return fig


def sweep_notes(sol, curves) -> list[tuple[str, list[str]]]:
    """The notes `sweep_figure` draws under the curves, as text: (heading, its lines) in order."""
    if not sol.schemes or curves is None:
        return []
    out: list[tuple[str, list[str]]] = []
    for kind, text, _ in CurveView(sol, curves).notes:
        if kind == "head" or not out:
            out.append((text if kind == "head" else "", []))
        if kind != "head":
            out[-1][1].append(text)
    return out


def _title(sol) -> str:
    return f"{PurePath(sol.spec.root).name}: which sync scheme reaches the target first"


def sweep_figure(sol, curves, notes: bool = True):
    """The three-panel figure: time to target against bandwidth, step components, module stages.

    `notes=False` leaves the notes under the curves out (the legend stays): a
    document gives them as text instead (`sweep_notes`), where they cost no
    drawing and read where an image does not.
    """
    if not sol.schemes:
        return placeholder_figure(_title(sol), NO_SCHEMES)
    matplotlib = mpl()
    with matplotlib.rc_context(RC):
        view = CurveView(sol, curves) if curves is not None else None
        if view is not None and not notes:
            view.notes = []
        n_legend = math.ceil(len(curves.ranked) / 2) if view else 0
        n_notes = len(view.notes) if view else 0
        modules = [r for r in sol.schemes.values() if r.module is not None]
        stage_texts = stage_labels(sol)
        # heights in inches, top to bottom
        top, below_main = 0.75, (0.65 if view else 0.1)
        main = 5.6 if view else 0.5
        notes_h = (0.32 + 0.215 * n_legend + 0.2 + LINE * n_notes + 0.05) if view else 0.01
        rows = max(len(sol.schemes), len(stage_texts))
        gap, panels, bottom = 0.95, min(7.0, max(1.6, 0.42 * rows + 0.3)), 0.6
        height = top + main + below_main + notes_h + gap + panels + bottom
        fig = new_figure(WIDTH, height)

        def box(left_in, bottom_in, width_in, height_in):
            return fig.add_axes([left_in / WIDTH, bottom_in / height, width_in / WIDTH, height_in / height])

        y = height - top - main
        ax = box(0.95, y, WIDTH - 1.25, main)
        y -= below_main + notes_h
        notes = box(0.95, y, WIDTH - 1.25, notes_h)
        # the label columns as wide as their widest tick label, measured (clipped at TICK_CHARS; beside
        # the stages panel the two columns share what the row leaves them, so the bars keep MIN_BARS)
        size = RC["ytick.labelsize"]
        scheme_names = list(sol.schemes)
        if modules:
            stages_w = 3.2
            names_w = text_width([clip(n, TICK_CHARS) for n in scheme_names], size)
            labels_w = text_width([clip(t, TICK_CHARS) for t in stage_texts], size)
            room = WIDTH - 0.3 - stages_w - 0.5 - MIN_BARS - 0.6
            names_w, labels_w = label_share(names_w, labels_w, room)
            names, names_w = fit_chars(scheme_names, names_w, size, TICK_CHARS)
            labels, labels_w = fit_chars(stage_texts, labels_w, size, TICK_CHARS)
            bars_left = 0.3 + names_w
            stage_left = 0.3 + labels_w
            bars_w = WIDTH - 0.3 - bars_left - stages_w - stage_left - 0.5
            bars = box(bars_left, bottom, bars_w, panels)
            stages = box(WIDTH - 0.3 - stages_w, bottom, stages_w, panels)
        else:
            names, names_w = fit_chars(scheme_names, WIDTH - 0.3 - MIN_BARS - 0.5, size, TICK_CHARS)
            bars_left = 0.3 + names_w
            bars = box(bars_left, bottom, WIDTH - 0.3 - bars_left - 0.2, panels)
            stages = labels = None
        fig.suptitle(mpl_text(_title(sol)), fontsize=14, fontweight="bold", y=1 - 0.3 / height)
        curves_panel(ax, notes, sol, view)
        components_panel(bars, sol, chars=names)
        if stages is not None:
            module_panel(stages, sol, chars=labels)
    return fig


def label_share(a: float, b: float, room: float) -> tuple[float, float]:
    """The inches two label columns take of the `a` and `b` their widest labels need when together
    they may take `room`: both whole when they fit, else the narrower whole where it takes at most
    half, the rest to the other."""
    if a + b <= room:
        return a, b
    first = min(a, max(room / 2, room - b))
    return first, min(b, room - first)
