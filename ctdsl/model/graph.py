"""Building the topology from a spec's definitions, and writing it out.

Nodes are workers (`east.w0`), the pluggable module in a worker's port
(`east.w0.qsfp`) and each data centre's switch (`east.tor`). Edges are directed,
one per direction, and carry their link's attributes as checked expressions:

- a worker's port: worker <-> module, at the module's line rate (its port rate
  capped by the host port), with the module's latency;
- the intra-DC link: module (or the worker, when no module is fitted) <-> switch;
- WAN links: switch -> switch, one edge per direction declared, so that two
  directions may differ.

A dc of replicas is a group instead (`east.gpu`, `count` its GPUs; its NICs one
edge group), and a dc of several alike sites (`sites`) one more: its switch node
counts the sites and the WAN from the dc to itself is one edge, from a site to
the next, whose `count` is the ring's WANs between its sites (`ring_wans`).
Nothing is unrolled; `expand` unrolls a small graph for drawing.

A transfer between two nodes follows the fewest hops; ties go to the route that
was declared first, so routing is deterministic.

The checker calls `build_graph` once per spec and the `Spec` carries the result
(`spec.topology`, a `ctdsl.model.topology.Topology`); back ends read that.

`to_dot` writes every id and label through `dot_quote`, DOT's encoder: a quoted
string with `\\` and `"` escaped, a newline as DOT's `\\n` and control characters
shown (`printable`), so that no name or label ends its string early, starts a
statement or reaches a terminal as an escape sequence.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence

from ctdsl.diagnostics.terminal import printable
from ctdsl.language.enums import Fabric, LinkKind
from ctdsl.model import expr as E
from ctdsl.model.entities import DataCentre, Link, Pluggable, Replica, Switch, WanLink
from ctdsl.model.topology import Edge, Node, NodeKind, Topology
from ctdsl.units import RATE, format_quantity


class Tables(Protocol):
    """What the topology is built from: a `Spec`, or the checker's tables before it."""

    @property
    def dcs(self) -> Mapping[str, DataCentre]: ...
    @property
    def links(self) -> Mapping[str, Link]: ...
    @property
    def pluggables(self) -> Mapping[str, Pluggable]: ...
    @property
    def switches(self) -> Mapping[str, Switch]: ...
    @property
    def wans(self) -> Sequence[WanLink]: ...
    @property
    def replicas(self) -> Mapping[str, Replica]: ...


def worker_id(dc: str, i: int) -> str:
    return f"{dc}.w{i}"


def gpus_id(dc: str) -> str:
    """The group node of all the GPUs of a dc of replicas (of all its sites)."""
    return f"{dc}.gpu"


NEXT = "@next"


def next_site(node: str) -> str:
    """The destination `node` of the next site of its dc (a dc of several sites, in a ring).

    Not a node of the graph: a transfer to it crosses the WAN from the dc to itself
    (`wan east <-> east`), from this site's switch to the next site's.
    """
    return node + NEXT


def several_sites(dc: DataCentre) -> bool:
    """Whether a dc stands for several alike sites (`sites`, which a param may set)."""
    return dc.sites is not None and (bool(E.symbols(dc.sites)) or dc.n_sites != 1)


def replicas_text(dc: DataCentre) -> str:
    """A dc of replicas as the report shows it: `256 x tp8pp4`, or `4 sites x 256 x tp8pp4` (a count
    as written where a param sets it)."""
    shown = lambda expr, n: E.render(expr) if E.symbols(expr) else str(n)  # noqa: E731
    text = f"{shown(dc.replicas, dc.workers)} x {dc.replica}"
    return f"{shown(dc.sites, dc.n_sites)} sites x {text}" if several_sites(dc) else text


def replica_counts(spec: Tables, dc_name: str, site: bool = False) -> tuple[E.Expr, E.Expr]:
    """(GPUs, NICs) of a dc of replicas, of all its sites (or of one, `site`), as expressions in the params."""
    dc = spec.dcs[dc_name]
    rep = spec.replicas[dc.replica]
    gpus = E.Mul(dc.replicas, rep.gpus)
    if dc.sites is not None and not site:
        gpus = E.Mul(dc.sites, gpus)
    if rep.nics is None:
        return gpus, gpus
    return gpus, E.Div(E.Mul(gpus, rep.nics), rep.gpus_per_node)


def ring_wans(spec: Tables, dc_name: str) -> E.Expr:
    """How many WANs join a site of `dc_name` to the next site of it, one way: in a ring of its
    own sites, all of them (sites, for two sites the two directions of one WAN); where the ring
    goes on to other dcs, all but the last site, which joins the next dc."""
    sites = spec.dcs[dc_name].sites
    return sites if len(spec.dcs) == 1 else E.Sub(sites, E.num(1))


def switch_id(spec: Tables, dc: str) -> str:
    return f"{dc}.{spec.dcs[dc].switch}"


def module_id(spec: Tables, dc: str, i: int | None) -> str | None:
    """The module in worker i's port; for a dc of replicas (i None), the group of its NICs' modules."""
    plug = spec.dcs[dc].pluggable
    if not plug:
        return None
    return f"{dc}.gpu.{plug}" if i is None else f"{dc}.w{i}.{plug}"


def _group(spec: Tables, dc_name: str, dc: DataCentre, sw: str, nodes: list, both_ways) -> None:
    """A dc of replicas: its GPUs as one node, its NICs (and their modules) as one edge group."""
    gpus, nics = replica_counts(spec, dc_name)
    g = gpus_id(dc_name)
    nodes.append(Node(g, NodeKind.WORKER, dc_name, dc.device, None, None, gpus))
    up = g
    if dc.pluggable:
        plug = spec.pluggables.get(dc.pluggable)
        m = module_id(spec, dc_name, None)
        nodes.append(Node(m, NodeKind.MODULE, dc_name, dc.pluggable, None, None, nics))
        if plug is not None and "port" in plug.stages:
            both_ways(g, m, LinkKind.PORT, dc.pluggable, plug.line_rate, plug.latency, E.num(0), nics)
        up = m
    link = spec.links.get(dc.link)
    if link is not None:
        bw = link.bandwidth
        if dc.fabric is Fabric.LEAF_SPINE and dc.oversubscription is not None:
            bw = E.Div(bw, dc.oversubscription)  # every flow between replicas crosses the spine
        both_ways(up, sw, LinkKind.INTRA, dc.link, bw, link.latency, link.energy_per_byte, nics)


def build_graph(spec: Tables) -> Topology:
    nodes: list[Node] = []
    edges: list[Edge] = []

    def both_ways(a: str, b: str, kind: LinkKind, link: str, bandwidth, latency, energy, count=None) -> None:
        edges.append(Edge(a, b, kind, link, bandwidth, latency, energy, count))
        edges.append(Edge(b, a, kind, link, bandwidth, latency, energy, count))

    for dc_name, dc in spec.dcs.items():
        sw = switch_id(spec, dc_name)
        switch = spec.switches.get(dc.switch)
        sites = dc.sites if dc.replica and several_sites(dc) else None  # one switch a site
        nodes.append(Node(sw, NodeKind.SWITCH, dc_name, dc.switch, None, switch.sum if switch is not None else None, sites))
        if dc.replica:
            _group(spec, dc_name, dc, sw, nodes, both_ways)
            continue
        link = spec.links.get(dc.link)
        for i in range(dc.workers):
            w = worker_id(dc_name, i)
            nodes.append(Node(w, NodeKind.WORKER, dc_name, dc.device, i, None))
            up = w
            plug_name = dc.pluggable
            if plug_name:
                plug = spec.pluggables.get(plug_name)
                m = module_id(spec, dc_name, i)
                nodes.append(Node(m, NodeKind.MODULE, dc_name, plug_name, i, None))
                if plug is not None and "port" in plug.stages:
                    both_ways(w, m, LinkKind.PORT, plug_name, plug.line_rate, plug.latency, E.num(0))
                up = m
            if link is not None:
                both_ways(up, sw, LinkKind.INTRA, dc.link, link.bandwidth, link.latency, link.energy_per_byte)
    for wan in spec.wans:
        link = spec.links.get(wan.link)
        if link is None or wan.a not in spec.dcs or wan.b not in spec.dcs:
            continue
        a, b = switch_id(spec, wan.a), switch_id(spec, wan.b)
        bw = link.bandwidth if wan.count is None else E.Mul(link.bandwidth, wan.count)  # links in parallel
        ring = ring_wans(spec, wan.a) if wan.a == wan.b and spec.dcs[wan.a].sites is not None else None
        edges.append(Edge(a, b, LinkKind.WAN, wan.link, bw, link.latency, link.energy_per_byte, ring))
    return Topology(nodes, edges)


def to_json(topology: Topology, defaults: dict[str, float]) -> dict:
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
        "nodes": [{"id": n.id, **attrs(n.attrs())} for n in topology.nodes()],
        "edges": [{"source": e.source, "target": e.target, **attrs(e.attrs())} for e in topology.edges()],
    }


def count_text(expr: E.Expr, defaults: dict[str, float]) -> str:
    """A group's count at the defaults, with its expression where a param sets it: `2048 (R * 32)`."""
    try:
        shown = f"{E.evaluate(expr, defaults):,.0f}"
    except E.EvalError:
        return E.render(expr)
    return shown + (f" ({E.render(expr)})" if E.symbols(expr) else "")


def expand(topology: Topology, defaults: dict[str, float], limit: int) -> Topology:
    """The graph with every group unrolled at the params' defaults: one node per GPU and per module,
    and a dc of several sites one switch per site (`east.s0.tor`, `east.s0.gpu0`, ...).

    GPU i of a group of G GPUs on M NICs uses NIC i M // G (its module, where the dc has one).
    The WAN from a dc to itself joins each site to the next, in the direction of the ring: all
    round when the dc is the only one, else from the first site to the last; a WAN to another
    dc leaves from the last site and one from another dc arrives at the first, as the ring goes.
    Raises ValueError when the unrolled graph would have more than `limit` nodes.
    """
    size = lambda n: int(round(E.evaluate(n.count, defaults))) if n.count is not None else 1  # noqa: E731
    sites = {n.dc: size(n) for n in topology.nodes() if n.kind is NodeKind.SWITCH}
    total = sum(size(n) for n in topology.nodes() if n.count is not None)  # what the groups unroll to
    if total > limit:
        raise ValueError(f"the groups unroll to {total:,} nodes; at most {limit:,} are drawn")
    nodes: list[Node] = []
    names: dict[str, list[list[str]]] = {}  # node -> its unrolled ids, site by site
    for n in topology.nodes():
        k = sites[n.dc]
        at = [_in_site(n.id, n.dc, s) for s in range(k)] if k > 1 else [n.id]
        if n.kind is NodeKind.SWITCH or n.count is None:
            names[n.id] = [[x] for x in at]
            nodes += [n if x == n.id else Node(x, n.kind, n.dc, n.definition, None, n.sum) for x in at]
            continue
        per_site = size(n) // k
        names[n.id] = []
        for x in at:
            stem, _, rest = x.partition(".gpu")
            ids = [f"{stem}.gpu{i}{rest}" for i in range(per_site)]
            names[n.id].append(ids)
            nodes += [Node(y, n.kind, n.dc, n.definition, i, n.sum) for i, y in enumerate(ids)]
    edges: list[Edge] = []
    for e in topology.edges():
        a, b = names[e.source], names[e.target]
        if e.source == e.target:  # the WAN from a dc to itself: each site to the next
            k = len(a)
            steps = k if int(round(E.evaluate(e.count, defaults))) >= k else k - 1
            pairs = [(a[s][0], a[(s + 1) % k][0]) for s in range(steps)]
        elif topology.node(e.source).dc == topology.node(e.target).dc:  # inside a dc, site by site
            pairs = [p for x, y in zip(a, b) for p in _pairs(x, y)]
        else:  # between two dcs: from the last site of one to the first of the other
            pairs = _pairs(a[-1], b[0])
        for x, y in pairs:
            edges.append(Edge(x, y, e.kind, e.link, e.bandwidth, e.latency, e.energy_per_byte))
    return Topology(nodes, edges)


def _in_site(node: str, dc: str, site: int) -> str:
    """A node's id in one site of its dc: `east.tor` -> `east.s0.tor`."""
    return f"{dc}.s{site}{node[len(dc):]}"


def _pairs(a: list[str], b: list[str]) -> list[tuple[str, str]]:
    """The edges an edge between two unrolled groups becomes: one to one, one to all, or i to i M // G."""
    if len(a) == len(b):
        return list(zip(a, b))
    if len(a) == 1 or len(b) == 1:
        return [(x, y) for x in a for y in b]
    if len(a) > len(b):
        return [(x, b[i * len(b) // len(a)]) for i, x in enumerate(a)]
    return [(a[i * len(a) // len(b)], y) for i, y in enumerate(b)]


def dot_quote(text: str) -> str:
    """`text` as a quoted DOT string (an id or a label): literal, one string, no control character."""
    return '"' + printable(str(text)).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", " ") + '"'


def to_dot(topology: Topology, defaults: dict[str, float]) -> str:
    q = dot_quote
    shapes = {NodeKind.WORKER: "box", NodeKind.MODULE: "component", NodeKind.SWITCH: "diamond"}
    lines = ["digraph ctdsl {", "  rankdir=LR;"]
    by_dc: dict[str, list[Node]] = {}
    for n in topology.nodes():
        by_dc.setdefault(n.dc, []).append(n)
    for dc, nodes in by_dc.items():
        lines.append(f"  subgraph {q(f'cluster_{dc}')} {{")
        lines.append(f"    label={q(dc)};")
        for n in nodes:
            if n.count is None:
                lines.append(f'    {q(n.id)} [shape={shapes.get(n.kind, "ellipse")}];')
            else:  # a group: how many nodes it stands for
                lines.append(f'    {q(n.id)} [shape=box3d, label={q(f"{n.id} x {count_text(n.count, defaults)}")}];')
        lines.append("  }")
    done = set()
    for e in topology.edges():
        a, b = e.source, e.target
        try:
            bw = format_quantity(E.evaluate(e.bandwidth, defaults), RATE)
        except E.EvalError:
            bw = E.render(e.bandwidth)
        if e.count is not None:
            bw += f" x {count_text(e.count, defaults)}"
        back = topology.edge(b, a) if topology.has_edge(b, a) and a != b else None  # a loop: each site to the next
        if back is not None and back.link == e.link and E.render(back.bandwidth) == E.render(e.bandwidth):
            if (b, a) in done:
                continue
            done.add((a, b))
            lines.append(f"  {q(a)} -> {q(b)} [dir=both, label={q(f'{e.link} {bw}')}];")
        else:
            lines.append(f"  {q(a)} -> {q(b)} [label={q(f'{e.link} {bw}')}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["build_graph", "to_json", "to_dot", "dot_quote", "worker_id", "gpus_id", "next_site", "several_sites", "replica_counts", "replicas_text", "count_text", "ring_wans", "expand", "switch_id", "module_id", "Tables", "Topology", "Edge", "Node", "NodeKind"]
