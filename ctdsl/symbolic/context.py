"""The frozen context a spec's costs are built in: its symbols, its topology and every edge's terms.

A `Context` is made once per set of sites a scheme may run on (`contexts`: the sites as
declared, and each variant), before any scheme is costed, and never changes: every
edge's bandwidth, latency, energy per byte and background queue is converted to
dimensioned sympy up front (`edges`), and so is every switch's latency. The cost
functions (counts.py, exposure.py, timeline.py, transform.py, ...) take it, or the
narrower parts of it they need, and return terms; none of them calls back into a
shared object or leaves state in it.

The conversions of the checked model into dimensioned sympy are here too: `field` gives
a field of an entity with the dimension the language's schema declares for it, `q` a
checked expression whose dimension the caller knows, `shape` a model's shape field.
Shared nodes of the checked expressions are converted once (a memo by node, which is
the one thing in a Context that fills as it is used: a cache, not state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Mapping

import sympy as sp

from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.language.enums import Counted, LinkKind, ModuleLatency
from ctdsl.model.entities import Spec
from ctdsl.model.topology import NodeKind, Topology
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic.convert import Symbols, to_sympy
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.routing import Edge, EdgeTerms, Router

# an attribute that holds a field in other units than the spec writes it: the field's name
_WRITTEN = {("scheme", "value_bytes"): "bits", ("link", "energy_per_byte"): "energy_per_bit"}
# the schema kind of each entity class whose fields the costs read
_KIND = {"Model": "model", "Device": "device", "Link": "link", "Pluggable": "pluggable", "Switch": "switch", "DataCentre": "dc", "Scheme": "scheme", "Replica": "replica"}


@dataclass(frozen=True, eq=False)
class Context:
    """A spec seen from one set of sites, in dimensioned sympy."""

    spec: Spec
    topology: Topology
    symbols: Symbols
    edges: Mapping[Edge, EdgeTerms] = field(repr=False)
    node_latency: Mapping[str, DimExpr] = field(repr=False)  # the switches'; other nodes add none
    router: Router = field(repr=False)
    formulas: D.FieldAlgebra = field(repr=False)  # the model's formulas (ctdsl.model.payload), dimensioned
    _memo: dict = field(repr=False)

    def sym(self, expr) -> sp.Expr:
        return to_sympy(expr, self.symbols, self._memo)

    def q(self, expr, dim: U.Dim) -> DimExpr:
        """A checked expression whose dimension the caller knows (a model formula's result)."""
        return DimExpr(self.sym(expr), dim)

    def field(self, entity, name: str) -> DimExpr:
        """A field of a checked entity, with the dimension the language's schema gives it."""
        return _field(self.symbols, self._memo, entity, name)

    def shape(self, model, key: str) -> DimExpr:
        """One of a model's shape fields (layers, width, ...), with its schema dimension."""
        return _shape(self.symbols, self._memo, model, key)

    def edge(self, e: Edge) -> EdgeTerms:
        return self.edges[e]


def _field(symbols: Symbols, memo: dict, entity, name: str) -> DimExpr:
    kind = _KIND.get(type(entity).__name__)
    table = S.KINDS[kind] if kind is not None else S.STAGES[entity.name]
    return DimExpr(to_sympy(getattr(entity, name), symbols, memo), table[_WRITTEN.get((kind, name), name)].dim)


def _shape(symbols: Symbols, memo: dict, model, key: str) -> DimExpr:
    return DimExpr(to_sympy(model.shape[key], symbols, memo), S.KINDS["model"][key].dim)


def context(spec: Spec, symbols: Symbols) -> Context:
    """The context of `spec` as it stands (its declared sites, or the variant `spec.on` gave)."""
    memo: dict = {}
    field_of = partial(_field, symbols, memo)
    q = lambda expr, dim: DimExpr(to_sympy(expr, symbols, memo), dim)  # noqa: E731
    edges = MappingProxyType({e.key: _edge_terms(spec, e, q, field_of) for e in spec.topology.edges()})
    latency = MappingProxyType({n.id: _node_latency(spec, n, field_of) for n in spec.topology.nodes() if n.kind is NodeKind.SWITCH})
    router = Router(spec, spec.topology, edges, latency)
    formulas = D.FieldAlgebra(field_of, partial(_shape, symbols, memo))
    return Context(spec, spec.topology, symbols, edges, latency, router, formulas, memo)


def contexts(spec: Spec, symbols: Symbols) -> dict[str | None, Context]:
    """One context per set of sites a scheme may run on: None (the sites as declared) and each variant.

    Each reads the spec as seen from its sites (`Spec.on`), so that a scheme's time and
    energy use its variant's dcs, links and graph; the symbols are shared, so that
    expressions from two variants (a break-even) are in the same params.
    """
    out = {None: context(spec, symbols)}
    for name, sites in spec.variants.items():
        out[name] = context(spec.on(sites), symbols)
    return out


def _edge_terms(spec: Spec, d, q, field_of) -> EdgeTerms:
    link = spec.link_of(d)
    bandwidth = q(d.bandwidth, U.RATE)
    if link is not None and link.efficiency is not None:  # the achieved fraction of line rate (collectives.py)
        bandwidth = bandwidth * field_of(link, "efficiency")
    queue = None
    if link is not None and link.loaded:
        queue = Q.Queue.of(d.link, field_of(link, "load"), field_of(link, "transfer"), bandwidth, link.sharing)
    per_hop = link is None or link.counted is Counted.HOP  # a module's port: per crossing
    count = q(d.count, U.ONE) if d.count is not None else D.one()
    latency = q(d.latency, U.TIME)
    plug = spec.pluggables.get(d.link) if d.kind is LinkKind.PORT else None
    if plug is not None and plug.counted is ModuleLatency.ONCE:  # charged in the module's own time only
        latency = D.zero(U.TIME)
    per_route = link is not None and link.counted is Counted.ROUTE
    return EdgeTerms(d.link, d.kind, bandwidth, latency, q(d.energy_per_byte, U.ENERGY_PER_DATA), queue, per_hop, count, per_route)


def _node_latency(spec: Spec, n, field_of) -> DimExpr:
    sw = spec.switches.get(n.definition)
    if sw is not None and sw.latency is not None:
        return field_of(sw, "latency")
    return D.zero(U.TIME)


__all__ = ["Context", "context", "contexts", "EdgeTerms"]
