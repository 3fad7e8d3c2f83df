"""The topology of a checked spec: typed nodes and edges over a networkx graph.

The checker builds it once (`ctdsl.model.graph.build_graph`) and the `Spec`
carries it (`spec.topology`); nothing rebuilds it. Back ends read it through
the accessors here: `node(id)`, `edge(u, v)`, `edges()`, `route(a, b)`. The
networkx graph itself is `.graph` (frozen), for networkx algorithms and for
writing the graph out (`ctdsl graph --format json|dot`); its node and edge
attributes are the plain data of `Node.attrs()` and `Edge.attrs()`.

Nodes are workers (`east.w0`), the pluggable module in a worker's port
(`east.w0.qsfp`) and each data centre's switch (`east.tor`). Edges are
directed, one per direction. A dc of replicas is a group instead: one node for
all its GPUs (`east.gpu`, with `count` = replicas x GPUs per replica), one for
their modules, and one edge group for their NICs (`count` = the NICs), so that
nothing is unrolled and a count may be a param. A dc of several alike sites
counts its switches too (`east.tor`, `count` = the sites), and the WAN from it to
itself is a loop, one edge from a site to the next (`count` = such WANs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Iterator, Mapping

import networkx as nx

from ctdsl.language.enums import LinkKind
from ctdsl.model.expr import Expr


class NodeKind(StrEnum):
    """A node of the topology graph."""

    WORKER = "worker"
    MODULE = "module"  # the pluggable module in a worker's port
    SWITCH = "switch"


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    kind: NodeKind
    dc: str
    definition: str  # the worker's device, the module's pluggable, the switch's switch
    index: int | None  # a worker's (and its module's) index in its dc; None for a switch and a group
    sum: bool | None  # whether a switch sums the streams through it; None for the others
    count: Expr | None = None  # a group: how many alike nodes it stands for (the GPUs of a dc's replicas)

    def attrs(self) -> dict[str, object]:
        """The node's attributes in the networkx graph (and in `ctdsl graph` output)."""
        out: dict[str, object] = {"kind": self.kind, "dc": self.dc}
        if self.index is not None:
            out["index"] = self.index
        if self.count is not None:
            out["count"] = self.count
        out["definition"] = self.definition
        if self.sum is not None:
            out["sum"] = self.sum
        return out


@dataclass(frozen=True, slots=True)
class Edge:
    """One direction of a link, with its checked quantities (base units)."""

    source: str
    target: str
    kind: LinkKind
    link: str  # the link definition; for a worker's port, the pluggable's
    bandwidth: Expr  # B/s
    latency: Expr  # s
    energy_per_byte: Expr  # J/B
    count: Expr | None = None  # a group of alike edges (one per NIC): how many; the load spreads evenly

    @property
    def key(self) -> tuple[str, str]:
        return (self.source, self.target)

    def attrs(self) -> dict[str, object]:
        """The edge's attributes in the networkx graph (and in `ctdsl graph` output).

        The energy keeps its output name `energy_per_bit` so that the graph's JSON
        stays as it was; its value is in J per byte, like every quantity there.
        """
        out: dict[str, object] = {
            "kind": self.kind,
            "link": self.link,
            "bandwidth": self.bandwidth,
            "latency": self.latency,
            "energy_per_bit": self.energy_per_byte,
        }
        if self.count is not None:
            out["count"] = self.count
        return out


class Topology:
    """Typed nodes and edges, in the order they were added, and the frozen networkx graph."""

    __slots__ = ("_nodes", "_edges", "_graph")

    def __init__(self, nodes: list[Node], edges: list[Edge]):
        g = nx.DiGraph()
        for n in nodes:
            g.add_node(n.id, **n.attrs())
        by_key: dict[tuple[str, str], Edge] = {}
        for e in edges:
            g.add_edge(e.source, e.target, **e.attrs())
            by_key[e.key] = e  # a later edge between the same nodes replaces it, as in networkx
        self._nodes: Mapping[str, Node] = MappingProxyType({n.id: n for n in nodes})
        # in the graph's edge order, which networkx fixes by node, then by insertion
        self._edges: Mapping[tuple[str, str], Edge] = MappingProxyType({(a, b): by_key[(a, b)] for a, b in g.edges})
        self._graph = nx.freeze(g)

    @property
    def graph(self) -> nx.DiGraph:
        """The networkx graph (frozen: adding or removing a node or edge raises)."""
        return self._graph

    def node(self, node_id: str) -> Node:
        return self._nodes[node_id]

    def nodes(self) -> tuple[Node, ...]:
        return tuple(self._nodes.values())

    def edge(self, source: str, target: str) -> Edge:
        return self._edges[(source, target)]

    def has_edge(self, source: str, target: str) -> bool:
        return (source, target) in self._edges

    def edges(self) -> tuple[Edge, ...]:
        """Every directed edge, in the graph's order."""
        return tuple(self._edges.values())

    def workers(self, dc: str | None = None) -> list[str]:
        """The worker nodes (of one dc), in order."""
        return [n.id for n in self._nodes.values() if n.kind is NodeKind.WORKER and (dc is None or n.dc == dc)]

    def route(self, source: str, target: str) -> tuple[str, ...]:
        """The route of a transfer: fewest hops; ties go to the route declared first."""
        return tuple(nx.shortest_path(self._graph, source, target))

    def reachable(self, source: str) -> set[str]:
        """The nodes a transfer from `source` can reach."""
        return nx.descendants(self._graph, source)

    def __iter__(self) -> Iterator[Node]:
        return iter(self._nodes.values())

    def __len__(self) -> int:
        return len(self._nodes)

    def __repr__(self) -> str:
        return f"<Topology: {len(self._nodes)} nodes, {len(self._edges)} edges>"


__all__ = ["Topology", "Node", "Edge", "NodeKind"]
