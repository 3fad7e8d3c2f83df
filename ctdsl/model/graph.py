"""The topology as a networkx graph.

Nodes are workers (`east.w0`), the pluggable module in a worker's port
(`east.w0.qsfp`) and each data centre's switch (`east.tor`). Edges are directed,
one per direction, and carry their link's attributes as checked expressions:

- a worker's port: worker <-> module, at the module's line rate (its port rate
  capped by the host port), with the module's latency;
- the intra-DC link: module (or the worker, when no module is fitted) <-> switch;
- WAN links: switch -> switch, one edge per direction declared, so that two
  directions may differ.

A transfer between two nodes follows the fewest hops; ties go to the route that
was declared first, so routing is deterministic.
"""

from __future__ import annotations

import networkx as nx

from ctdsl.model import expr as E
from ctdsl.model.entities import Spec


def worker_id(dc: str, i: int) -> str:
    return f"{dc}.w{i}"


def switch_id(spec: Spec, dc: str) -> str:
    return f"{dc}.{spec.dcs[dc].switch}"


def module_id(spec: Spec, dc: str, i: int) -> str | None:
    plug = spec.dcs[dc].pluggable
    return f"{dc}.w{i}.{plug}" if plug else None


def build_graph(spec: Spec) -> nx.DiGraph:
    g = nx.DiGraph()
    for dc_name, dc in spec.dcs.items():
        sw = switch_id(spec, dc_name)
        switch = spec.switches.get(dc.switch)
        g.add_node(sw, kind="switch", dc=dc_name, definition=dc.switch)
        link = spec.links.get(dc.link)
        for i in range(dc.workers):
            w = worker_id(dc_name, i)
            g.add_node(w, kind="worker", dc=dc_name, index=i, definition=dc.device)
            up = w
            plug_name = dc.pluggable
            if plug_name:
                plug = spec.pluggables.get(plug_name)
                m = module_id(spec, dc_name, i)
                g.add_node(m, kind="module", dc=dc_name, index=i, definition=plug_name)
                if plug is not None and "port" in plug.stages:
                    attrs = dict(
                        kind="port",
                        link=plug_name,
                        bandwidth=plug.line_rate,
                        latency=plug.latency,
                        energy_per_bit=E.num(0),
                    )
                    g.add_edge(w, m, **attrs)
                    g.add_edge(m, w, **attrs)
                up = m
            if link is not None:
                attrs = dict(
                    kind="intra",
                    link=dc.link,
                    bandwidth=link.bandwidth,
                    latency=link.latency,
                    energy_per_bit=link.energy_per_bit,
                )
                g.add_edge(up, sw, **attrs)
                g.add_edge(sw, up, **attrs)
        if switch is not None:
            g.nodes[sw]["sum"] = switch.sum
    for wan in spec.wans:
        link = spec.links.get(wan.link)
        if link is None or wan.a not in spec.dcs or wan.b not in spec.dcs:
            continue
        g.add_edge(
            switch_id(spec, wan.a),
            switch_id(spec, wan.b),
            kind="wan",
            link=wan.link,
            bandwidth=link.bandwidth,
            latency=link.latency,
            energy_per_bit=link.energy_per_bit,
        )
    return g


def workers(spec: Spec, dc: str | None = None) -> list[str]:
    names = [dc] if dc else list(spec.dcs)
    return [worker_id(d, i) for d in names for i in range(spec.dcs[d].workers)]


def path(g: nx.DiGraph, src: str, dst: str) -> list[str]:
    """The route of a transfer: fewest hops, deterministic."""
    return nx.shortest_path(g, src, dst)


def to_json(g: nx.DiGraph, defaults: dict[str, float]) -> dict:
    """Node-link JSON with each expression as text and its value at the defaults."""

    def attrs(d: dict) -> dict:
        out = {}
        for k in sorted(d):
            v = d[k]
            if isinstance(v, E.Expr):
                out[k] = E.render(v)
                try:
                    out[k + "_value"] = E.evaluate(v, defaults)
                except E.EvalError:
                    out[k + "_value"] = None
            else:
                out[k] = v
        return out

    return {
        "directed": True,
        "nodes": [{"id": n, **attrs(d)} for n, d in g.nodes(data=True)],
        "edges": [{"source": a, "target": b, **attrs(d)} for a, b, d in g.edges(data=True)],
    }


def to_dot(g: nx.DiGraph, defaults: dict[str, float]) -> str:
    from ctdsl.units import RATE, format_quantity

    shapes = {"worker": "box", "module": "component", "switch": "diamond"}
    lines = ["digraph ctdsl {", "  rankdir=LR;"]
    by_dc: dict[str, list[str]] = {}
    for n, d in g.nodes(data=True):
        by_dc.setdefault(d.get("dc", ""), []).append(n)
    for dc, nodes in by_dc.items():
        lines.append(f'  subgraph "cluster_{dc}" {{')
        lines.append(f'    label="{dc}";')
        for n in nodes:
            lines.append(f'    "{n}" [shape={shapes.get(g.nodes[n]["kind"], "ellipse")}];')
        lines.append("  }")
    done = set()
    for a, b, d in g.edges(data=True):
        try:
            bw = format_quantity(E.evaluate(d["bandwidth"], defaults), RATE)
        except E.EvalError:
            bw = E.render(d["bandwidth"])
        if g.has_edge(b, a) and g.edges[b, a]["link"] == d["link"] and E.render(g.edges[b, a]["bandwidth"]) == E.render(d["bandwidth"]):
            if (b, a) in done:
                continue
            done.add((a, b))
            lines.append(f'  "{a}" -> "{b}" [dir=both, label="{d["link"]} {bw}"];')
        else:
            lines.append(f'  "{a}" -> "{b}" [label="{d["link"]} {bw}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
