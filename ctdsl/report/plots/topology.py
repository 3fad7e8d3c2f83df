"""The topology drawn by data centre: workers, modules in their ports, the switch; WAN links between.

Each data centre is a box with its switch on top, its workers below (at most
`MAX_WORKERS_DRAWN`, the rest as '...'), and a module above each worker when the
dc puts one in its ports. WAN links are arrows between switches (one way or
both), arched over the dcs in between. Rates are the spec's values at the
defaults, evaluated from the model's expressions.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.model import expr as E
from ctdsl.model.graph import replicas_text
from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.style import RC

MAX_WORKERS_DRAWN = 6
GAP = 3.0  # between dc boxes
STYLES = {"worker": ("#0072B2", "white"), "module": ("#E69F00", "black"), "switch": ("#009E73", "white")}  # face, ink


def topology_figure(spec, graph):
    """The graph drawn by data centre: workers, modules in their ports, the switch; WAN links between."""
    from matplotlib.patches import Patch

    env = spec.defaults()

    def rate(e) -> str:
        try:
            return U.format_quantity(E.evaluate(e, env), U.RATE)
        except Exception:  # noqa: BLE001 - a label only
            return "?"

    dcs = list(spec.dcs.values())
    widths = [_dc_width(dc) for dc in dcs]
    total = sum(widths) + GAP * (len(dcs) - 1) + 0.6
    with mpl().rc_context(RC):
        fig = new_figure(min(11.0, max(6.0, total * 0.95)), 4.3)
        ax = fig.add_axes([0.01, 0.01, 0.98, 0.98])
        ax.set_xlim(0, total)
        ax.set_ylim(0, 4.6)
        ax.axis("off")
        pos = _draw_dcs(ax, spec, dcs, widths, rate)
        _draw_intra(ax, graph, pos)
        _draw_wans(ax, spec, graph, pos, [f"{dc.name}.{dc.switch}" for dc in dcs], rate)
        _draw_nodes(ax, graph, pos)
        key = [Patch(facecolor=STYLES[k][0], edgecolor="black", label=t) for k, t in (("worker", "worker"), ("module", "module in its port"), ("switch", "switch"))]
        ax.legend(handles=key, loc="upper right", ncol=3, frameon=False, fontsize=9, handlelength=1.2)
    return fig


def _dc_width(dc) -> float:
    if dc.replica:  # one group of GPUs
        return 2.6
    shown = min(dc.workers, MAX_WORKERS_DRAWN)
    return max(2.6, 1.0 + 1.05 * (shown + (1 if dc.workers > MAX_WORKERS_DRAWN else 0)))


def _draw_dcs(ax, spec, dcs, widths, rate) -> dict[str, tuple[float, float]]:
    """Each dc's box and caption; the positions of its switch, workers and modules."""
    from matplotlib.patches import FancyBboxPatch

    pos: dict[str, tuple[float, float]] = {}
    x0 = 0.3
    for dc, w in zip(dcs, widths):
        ax.add_patch(FancyBboxPatch((x0, 0.25), w, 3.55, boxstyle="round,pad=0.02,rounding_size=0.15", facecolor="#f4f4f4", edgecolor="#888888", linewidth=1.0))
        dev = spec.devices.get(dc.device)
        link = spec.links.get(dc.link)
        ax.text(x0 + 0.12, 3.68, f"dc {dc.name}", fontsize=11, fontweight="bold", va="top")
        foot = _count_text(spec, dc) + (f" ({dev.name})" if dev is not None and dev.name != dc.device else "")
        if link is not None:
            foot += f"\nintra: {dc.link} {rate(link.bandwidth)}"
        plug = spec.pluggables.get(dc.pluggable) if dc.pluggable else None
        if plug is not None:
            foot += f"\nmodule: {plug.name} {rate(plug.line_rate)}"
        ax.text(x0 + 0.12, 0.32, foot, fontsize=8.5, va="bottom", color="#333333")
        pos[f"{dc.name}.{dc.switch}"] = (x0 + w / 2, 3.1)
        if dc.replica:  # the GPUs of all its replicas are one group node
            pos[f"{dc.name}.gpu"] = (x0 + w / 2, 1.25)
            if dc.pluggable:
                pos[f"{dc.name}.gpu.{dc.pluggable}"] = (x0 + w / 2, 2.05)
            x0 += w + GAP
            continue
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
        x0 += w + GAP
    return pos


def _count_text(spec, dc) -> str:
    """`4 x h100`, or `256 x tp8pp4 of h100` for a dc of replicas (the count as written, if a param)."""
    if not dc.replica:
        return f"{dc.workers} x {dc.device}"
    return f"{replicas_text(dc)} of {dc.device}"


def _draw_intra(ax, graph, pos) -> None:
    """The links inside each dc, one line per pair of nodes drawn."""
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


def _draw_wans(ax, spec, graph, pos, order: list[str], rate) -> None:
    """WAN links between switches: straight between neighbours, arched over the dcs in between."""
    from matplotlib.patches import FancyArrowPatch

    wans: dict[tuple[str, str], list] = {}
    for d in graph.edges():
        u, v = d.source, d.target
        if d.kind == "wan" and u in pos and v in pos:
            wans.setdefault(tuple(sorted((u, v))), []).append((u, v, d))
    for (a, b), edges in sorted(wans.items()):
        if order.index(a) > order.index(b):
            a, b = b, a
        (xa, ya), (xb, yb) = pos[a], pos[b]
        both = len(edges) > 1
        style = "<|-|>" if both else ("-|>" if edges[0][0] == a else "<|-")
        if a == b:  # a dc of several sites: a loop over its switch, each site to the next
            start, stop, rad, ly = (xa - 0.35, ya + 0.25), (xa + 0.35, ya + 0.25), -0.9, ya + 0.4
        elif order.index(b) - order.index(a) == 1:
            start, stop, rad, ly = (xa + 0.66, ya), (xb - 0.66, yb), 0.0, ya - 0.22
        else:  # over the dcs in between
            start, stop, rad, ly = (xa, ya + 0.25), (xb, yb + 0.25), -0.18, ya + 0.25 + 0.09 * (xb - xa) + 0.1
        ax.add_patch(
            FancyArrowPatch(start, stop, arrowstyle=style, mutation_scale=16, linewidth=2.4, color="#D55E00", connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0, zorder=2)
        )
        d = edges[0][2]
        link = spec.links.get(d.link)
        label = f"WAN {d.link}" + (" " if a == b else "\n") + rate(d.bandwidth)  # the edge's: N links in parallel (`= dci * 16`)
        if link is not None and isinstance(link.bandwidth, E.Sym):
            label += f"\n({link.bandwidth.name})"
        label += "\neach direction" if both else ""
        label += "\nsite to site" if a == b else ""
        straight = rad == 0.0
        at, ha = ((xa + 0.52, "left") if a == b else ((xa + xb) / 2, "center"))  # a loop's label beside it
        ax.text(at, ly, label, ha=ha, va="top" if straight else "bottom", fontsize=9.5, color="#8a3a00", fontweight="bold", linespacing=1.25)


def _draw_nodes(ax, graph, pos) -> None:
    """A rounded box per node: workers and modules small, switches wider."""
    from matplotlib.patches import FancyBboxPatch

    for node, (x, y) in pos.items():
        kind = graph.node(node).kind
        face, ink = STYLES.get(kind, ("#999999", "white"))
        text = node.split(".")[-1] if kind != "module" else graph.node(node).definition
        wbox, hbox = (0.8, 0.42) if kind != "switch" else (1.3, 0.48)
        ax.add_patch(FancyBboxPatch((x - wbox / 2, y - hbox / 2), wbox, hbox, boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=face, edgecolor="black", linewidth=0.8, zorder=3))
        ax.text(x, y, text, ha="center", va="center", fontsize=9, color=ink, zorder=4, fontweight="bold" if kind == "switch" else "normal")
