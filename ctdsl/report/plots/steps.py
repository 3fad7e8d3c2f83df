"""The figure's two lower panels: each scheme's step time by component, and the module's stage times.

Both read the solution's numbers at the params' values (the defaults, or
`--set`): nothing is evaluated here.
"""

from __future__ import annotations

import numpy as np

from ctdsl import units as U
from ctdsl.report.encode import TICK_CHARS, clip
from ctdsl.report.plots.style import GROUPS, plain_formatter, style_of


NOT_FINITE = "not finite"


def _finite(x: float) -> float:
    """A length to draw: the value where it is a finite number, else 0 (and the label says "not finite")."""
    return x if np.isfinite(x) else 0.0


def _shown(value: float, unit) -> str:
    return U.format_quantity(value, unit) if np.isfinite(value) else NOT_FINITE


def shown_groups(sol) -> list[str]:
    """The component groups the step panel draws (and its legend lists): those with a positive time somewhere."""
    schemes = list(sol.schemes.values())
    values = {g: 0.0 for g, _, _ in GROUPS}
    for r in schemes:
        for t in r.terms:
            values[style_of(t.group)] += _finite(t.value.value)
    return [g for g, _, _ in GROUPS if values[g] > 0]


def components_panel(ax, sol, columns: int = 3, fontsize: float = 9.5, title_x: float = 0.0, chars: int = TICK_CHARS) -> None:
    """Stacked bars of each scheme's step, by component group; the group that binds outlined; the
    legend above it in `columns` entries a row (as many as its width holds: `winner.legend_columns`);
    `title_x`: where the title starts, in the axes' width (a panel starts it at the figure's left
    edge, over the names, so that it fits a column); `chars`: the characters a name keeps."""
    from matplotlib.patches import Patch

    schemes = list(sol.schemes.values())
    names = [clip(r.name, chars) for r in schemes]
    known = [g for g, _, _ in GROUPS]
    values: dict[str, list[float]] = {g: [0.0] * len(schemes) for g in known}
    binding_group = []
    for k, r in enumerate(schemes):
        for t in r.terms:
            values[style_of(t.group)][k] += _finite(t.value.value)
        binding_group.append(style_of(r.binding.group))
    totals = [_finite(r.step_time.value) for r in schemes]
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
    xmax = xmax if np.isfinite(xmax) else 1.0
    for k, r in enumerate(schemes):
        tail = " (overlapped)" if r.overlap else ""
        ax.text(left[k] + xmax * 0.015, y[k], f"{_shown(r.step_time.value, U.TIME)}{tail}", va="center", ha="left", fontsize=9.5)
    ax.set_xlim(0, xmax * 1.3)
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.set_xlabel(f"time per step ({unit})")
    ax.set_title("Step time at the defaults, by component", loc="left", x=title_x)
    handles = [Patch(facecolor=c, hatch=h, edgecolor="white", label=g) for g, c, h in shown]
    handles.append(Patch(facecolor="white", edgecolor="black", linewidth=2.0, label="binds the step"))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.07), ncol=columns, frameon=False, fontsize=fontsize, handlelength=1.6, columnspacing=1.0)
    ax.grid(True, axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.xaxis.set_major_formatter(plain_formatter())


def stage_labels(sol) -> list[str]:
    """The stages panel's labels, top to bottom: each stage's name, "scheme: stage" where several
    schemes run a module (unclipped)."""
    rows = [r for r in sol.schemes.values() if r.module is not None]
    return [st.name if len(rows) == 1 else f"{r.name}: {st.name}" for r in rows for st in r.module.stages]


def module_panel(ax, sol, chars: int = TICK_CHARS) -> None:
    """The pluggable module's stages for the dense stream: rate and time of each, the bottleneck
    highlighted; `chars`: the characters a stage's label keeps."""
    rows = [r for r in sol.schemes.values() if r.module is not None]
    if not rows:
        ax.axis("off")
        ax.text(0.5, 0.5, "No scheme runs its transform\nin a pluggable module", ha="center", va="center", fontsize=10, transform=ax.transAxes)
        return
    labels = [clip(t, chars) for t in stage_labels(sol)]
    times, rates, bottleneck, raw = [], [], [], []
    for r in rows:
        m = r.module
        for st in m.stages:
            times.append(_finite(st.time.value))
            raw.append(st.time.value)
            rates.append(st.rate.value)
            bottleneck.append(st.name == m.binding)
    scale, unit = U.best_unit(times, U.TIME)
    y = np.arange(len(labels))[::-1].astype(float)
    v = np.array(times) / scale
    for k in range(len(labels)):
        b = bottleneck[k]
        ax.barh(y[k], v[k], color="#D55E00" if b else "#bbbbbb", hatch="xx" if b else "", edgecolor="black" if b else "white", linewidth=1.2 if b else 0.5, height=0.62)
    vmax = float(v.max()) if v.size else 1.0
    vmax = vmax if np.isfinite(vmax) else 1.0
    for k in range(len(labels)):
        text = f"{_shown(rates[k], U.RATE)}, {_shown(raw[k], U.TIME)}"
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
    ax.xaxis.set_major_formatter(plain_formatter())
