"""Per-scheme costs as sympy expressions in the spec's params (domain.md 4-7).

For one scheme:

- payload c (what a worker originates) and the dense size D = vP;
- the collective's phases, routed over the graph (`routing.py`), with the bytes on
  every link and the time of each phase;
- the transform: on the GPU a roofline, max(cost D / (peak eff), D / mem_bw); in
  a pluggable, D through the module's pipelined stages at the slowest stage's
  rate, plus its latency (a DCT costs the compute budget nothing when the optics
  performs it); at a switch, the streams it takes in over its total_rate
  (shared) and stream_rate (each stream's), the slower;
- step time = compute + (transform + sync + overhead) / H, or max(compute,
  (transform + sync + overhead) / H) when the scheme overlaps them; overhead is
  the scheme's fixed time per sync (the component "overhead");
- when the spec sets them: the M/D/1 queueing wait on loaded links, inside the
  phases that cross them (`queueing.py`, shown as the component "queueing on
  LINK"), and the wait for the slowest worker (`stragglers.py`, the component
  "stragglers"), added to compute;
- time to target = steps x step time; energy to target = steps x (static power x
  step time + energy per FLOP x FLOPs + energy per byte x bytes charged on each link,
  once per transfer or per hop as the link is counted (routing.py) + module and
  switch power x step time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.language.enums import Counted, LinkKind, PlacementKind
from ctdsl.model import payload as PL
from ctdsl.model.entities import Scheme, Spec
from ctdsl.model.topology import NodeKind, Topology
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic import stragglers as ST
from ctdsl.symbolic.convert import NumericError, Symbols, to_sympy, value
from ctdsl.symbolic.counts import Counts
from ctdsl.symbolic.sync_bytes import LoadedEdge, SyncBytes
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic import timeline as TL
from ctdsl.symbolic.energy import energy_parts
from ctdsl.symbolic.exposure import Sync, SyncPlan
from ctdsl.symbolic.routing import Edge, Phase, Router
from ctdsl.symbolic.transform import ModuleStages, transform

__all__ = ["CostModel", "SchemeCosts", "LoadedEdge", "ClosedForm", "ModuleStages"]

# an attribute that holds a field in other units than the spec writes it: the field's name
_WRITTEN = {("scheme", "value_bytes"): "bits", ("link", "energy_per_byte"): "energy_per_bit"}
# the schema kind of each entity class whose fields the costs read
_KIND = {"Model": "model", "Device": "device", "Link": "link", "Pluggable": "pluggable", "Switch": "switch", "DataCentre": "dc", "Scheme": "scheme"}


@dataclass(frozen=True)
class EdgeTerms:
    """One directed edge of the topology, its quantities as dimensioned sympy."""

    link: str
    kind: LinkKind
    bandwidth: DimExpr  # B/s
    latency: DimExpr  # s
    energy_per_byte: DimExpr  # J/B
    queue: Q.Queue | None  # the M/D/1 queue of a link with a background load
    per_hop: bool = True  # latency and energy on every edge; False: once per segment (`counted = transfer`)
    count: DimExpr = D.one()  # a group of alike edges (a dc's NICs): how many share its flows


@dataclass
class SchemeCosts:
    """One scheme's cost terms, each a DimExpr (its dimension in a comment where it is not obvious)."""

    scheme: Scheme
    dense: DimExpr
    payload: DimExpr
    up: DimExpr
    phases: list[Phase]
    compute: DimExpr
    transform: DimExpr
    transform_where: str  # gpu | pluggable NAME | switch NAME | none
    module: ModuleStages | None
    period: DimExpr  # dimensionless
    steps: DimExpr | None  # dimensionless
    components: dict[str, DimExpr]  # per step, each already divided by H where it applies
    sync: DimExpr  # per sync
    overhead: DimExpr  # fixed time per sync (the scheme's `overhead`), s
    step_time: DimExpr
    time_to_target: DimExpr | None
    energy_per_step: DimExpr
    energy_to_target: DimExpr | None
    energy_parts: dict[str, DimExpr]
    link_bytes: dict[Edge, DimExpr]  # bytes per sync on each edge
    wire: DimExpr  # bytes one worker sends per sync
    wan_bytes: DimExpr  # bytes per sync on the busiest WAN edge
    wan_edges: list[Edge]
    labels: dict[sp.Expr, str] = field(default_factory=dict)  # max/min argument -> meaning
    stragglers: ST.Straggler | None = None
    queues: dict[Edge, LoadedEdge] = field(default_factory=dict)  # loaded edges the sync crosses
    closed_forms: list["ClosedForm"] = field(default_factory=list)  # what is exact, what approximate
    compute_per_dc: dict[str, DimExpr] = field(default_factory=dict)  # one worker's inner step, by dc
    inner: DimExpr | None = None  # the inner step: compute and, with the timeline, model-parallel traffic, bubble, optimiser
    every_step: list[Phase] = field(default_factory=list)  # phases of a sync every step (inner = dc)
    syncs: list[Sync] = field(default_factory=list)  # exposure.py
    timeline: TL.Timeline | None = None  # timeline.py; None: compute as one block


@dataclass
class ClosedForm:
    """A term added for contention or stragglers, with how far to trust it."""

    component: str
    formula: str
    status: str  # exact | numerically integrated | approximation
    note: str = ""


class CostModel(Counts, SyncBytes):
    """Everything shared by the schemes of one spec: symbols, graph, edge attributes."""

    def __init__(self, spec: Spec, topology: Topology, symbols: Symbols):
        self.spec = spec
        self.topology = topology
        self.symbols = symbols
        self._memo: dict[int, sp.Expr] = {}
        self._edges: dict[Edge, EdgeTerms] = {}
        self._split: dict[str, dict[str, DimExpr]] = {}  # model -> dc -> a worker's FLOPs of a split batch
        self.router = Router(spec, topology, self.edge, self.node_latency)
        self.formulas = D.FieldAlgebra(self.field, self.shape)  # the model's formulas, dimensioned

    def sym(self, expr) -> sp.Expr:
        return to_sympy(expr, self.symbols, self._memo)

    def q(self, expr, dim: U.Dim) -> DimExpr:
        """A checked expression whose dimension the caller knows (a model formula's result)."""
        return DimExpr(self.sym(expr), dim)

    def field(self, entity, name: str) -> DimExpr:
        """A field of a checked entity, with the dimension the language's schema gives it."""
        kind = _KIND.get(type(entity).__name__)
        table = S.KINDS[kind] if kind is not None else S.STAGES[entity.name]
        return DimExpr(self.sym(getattr(entity, name)), table[_WRITTEN.get((kind, name), name)].dim)

    def shape(self, model, key: str) -> DimExpr:
        """One of a model's shape fields (layers, width, ...), with its schema dimension."""
        return DimExpr(self.sym(model.shape[key]), S.KINDS["model"][key].dim)

    def edge(self, e: Edge) -> EdgeTerms:
        if e not in self._edges:
            d = self.topology.edge(*e)
            bandwidth = self.q(d.bandwidth, U.RATE)
            link = self.spec.links.get(d.link) if d.kind in (LinkKind.INTRA, LinkKind.WAN) else None
            queue = None
            if link is not None and link.load is not None and link.transfer is not None:
                queue = Q.Queue.of(d.link, self.field(link, "load"), self.field(link, "transfer"), bandwidth)
            per_hop = link is None or link.counted is Counted.HOP  # a module's port: per crossing
            count = self.q(d.count, U.ONE) if d.count is not None else D.one()
            self._edges[e] = EdgeTerms(d.link, d.kind, bandwidth, self.q(d.latency, U.TIME), self.q(d.energy_per_byte, U.ENERGY_PER_DATA), queue, per_hop, count)
        return self._edges[e]

    def node_latency(self, node: str) -> DimExpr:
        n = self.topology.node(node)
        if n.kind is NodeKind.SWITCH:
            sw = self.spec.switches.get(n.definition)
            if sw is not None and sw.latency is not None:
                return self.field(sw, "latency")
        return D.zero(U.TIME)

    def devices(self):
        return {dc: self.spec.devices[d.device] for dc, d in self.spec.dcs.items()}

    # ---- one scheme -------------------------------------------------------------------

    def scheme(self, scheme: Scheme) -> SchemeCosts:
        model = self.spec.models[scheme.model]
        dense = PL.dense_bytes(model, self.formulas)
        payload = PL.payload_bytes(scheme, model, self.formulas)
        labels: dict[sp.Expr, str] = {}
        up = dense if scheme.at.kind == PlacementKind.SWITCH else payload
        plan = SyncPlan(self, scheme, model, payload, up, dense)
        flops, per_dc, compute = self._compute(model, labels)
        timeline = None
        if TL.applies(self.spec, model) and not self.measured():
            gather = plan.gather_time()
            timeline = TL.build(self, model, per_dc, lambda dc: gather, labels)
            per_dc = timeline.per_dc
        inner_step = timeline.inner if timeline is not None else compute
        # the window a sync hides in with overlap = backward: the last micro-batch's backward pass
        # (without the timeline, the step is one micro-batch: its backward, 2/3 of its compute)
        syncs = plan.syncs(timeline.window if timeline is not None else 2 * compute / 3, inner_step, labels)
        outer = syncs[-1]
        phases, every_step = outer.phases, (syncs[0].phases if len(syncs) > 1 else [])
        for ph in every_step + phases:
            labels.update(ph.bottlenecks)
        tr, where, module = transform(self, scheme, dense * self.shard(model), up * self.shard(model), labels)
        period = self.field(scheme, "period")
        overhead = self.field(scheme, "overhead")
        sync = D.total([ph.time for ph in phases], U.TIME)
        components = dict(timeline.components) if timeline is not None else {"compute": compute}
        components.update(self._components(syncs, tr, period))
        if overhead != 0:
            components["overhead"] = overhead * outer.fragments / period
        closed = [ClosedForm(k, Q.FORMULA, Q.STATUS, Q.LIMITS) for k in components if k.startswith("queueing on ")]
        queues = self._loaded_edges(syncs, period)
        strag = self._stragglers(per_dc, period, scheme.overlap)
        worked = inner_step
        if strag is not None:
            components["stragglers"] = strag.extra
            worked = inner_step + strag.extra
            closed.append(ClosedForm("stragglers", strag.formula, strag.status, strag.note))
        side = _side(syncs, tr, overhead, period)
        if scheme.overlap:  # the whole sync alongside the next H steps (checked: no inner sync, delay or fragments)
            step = D.emax(worked, side)
            labels[worked.e] = "compute"
            labels[side.e] = "transform and sync"
        else:
            step = worked + side
        steps = self.field(scheme, "steps") if scheme.steps is not None else None
        link_bytes = self._link_bytes(syncs, period)
        wan_edges = [e for e in link_bytes if self.edge(e).kind is LinkKind.WAN]
        wan_bytes = D.emax(*[link_bytes[e] for e in wan_edges]) if wan_edges else D.zero(U.DATA)
        energy = energy_parts(self, scheme, step, flops, dense, self._charged_bytes(syncs, period), period, where)
        if timeline is not None:
            energy["model-parallel links"] = self._traffic_energy(timeline)
        energy_step = D.total(energy.values(), U.ENERGY)
        return SchemeCosts(
            scheme=scheme, dense=dense, payload=payload, up=up, phases=phases, compute=compute,
            transform=tr, transform_where=where, module=module, period=period, steps=steps,
            components=components, sync=sync, overhead=overhead, step_time=step,
            time_to_target=steps * step if steps is not None else None,
            energy_per_step=energy_step,
            energy_to_target=steps * energy_step if steps is not None else None,
            energy_parts=energy,
            link_bytes=link_bytes,
            wire=self._wire(phases, every_step, period),
            wan_bytes=wan_bytes,
            wan_edges=wan_edges,
            labels=labels,
            stragglers=strag,
            queues=queues,
            closed_forms=closed,
            compute_per_dc=per_dc,
            inner=inner_step,
            every_step=every_step,
            syncs=syncs,
            timeline=timeline,
        )

    # ---- contention and stragglers ----------------------------------------------------------

    def _stragglers(self, per_dc: dict[str, DimExpr], period: DimExpr, overlap: bool) -> ST.Straggler | None:
        """The expected wait for the slowest worker, when a dc sets jitter (stragglers.py)."""
        spec = self.spec
        dcs = [d for d in spec.dcs.values() if d.workers > 0]
        if not any(d.jitter is not None for d in dcs):
            return None
        env = self.symbols.defaults()
        notes = []
        try:
            H = value(period, env)
        except (NumericError, ZeroDivisionError):  # pragma: no cover - bounds are checked
            return None
        if period.free_symbols:
            notes.append(f"H is taken at its default, {H:g}")
        keys = {}
        for d in dcs:
            jitter = self.field(d, "jitter") if d.jitter is not None else D.zero(U.TIME)
            sigma = self.field(d, "jitter_sigma") if d.jitter_sigma is not None else None
            keys[d.name] = (per_dc[d.name], jitter, d.jitter_kind if d.jitter is not None else None, sigma)
        if len(set(keys.values())) == 1:
            base, jitter, kind, sigma = next(iter(keys.values()))
            n = sum(d.workers * d.n_sites for d in dcs)  # replicas in every site
            sig = value(sigma, env) if sigma is not None else None
            if sigma is not None and sigma.free_symbols:
                notes.append(f"jitter_sigma is taken at its default, {sig:g}")
            c, status, formula = ST.unit_factor(kind, n, H, sig)
            extra = jitter * c
        else:
            groups = []
            for d in dcs:
                base, jitter, kind, sigma = keys[d.name]
                groups.append(
                    ST.Group(
                        d.workers * d.n_sites,
                        value(base, env),
                        value(jitter, env),
                        kind,
                        value(sigma, env) if sigma is not None else None,
                    )
                )
            x, status = ST.excess(groups, H)
            extra = DimExpr(sp.Float(x, 15), U.TIME)
            formula = "E[max over workers of their compute over H steps] / H - the slowest dc's compute, for unlike dcs"
            notes.append("integrated at the params' defaults: a number that does not follow a swept param")
        if overlap:
            status = ST.APPROXIMATION
            notes.append("with overlap, max(compute + stragglers, sync) stands for E[max(slowest compute, sync)], which is at least as large")
        return ST.Straggler(extra, status, formula, "; ".join(notes))


def _side(syncs: list[Sync], tr: DimExpr, overhead: DimExpr, period: DimExpr) -> DimExpr:
    """What the step adds to the inner step for its transform, overhead and syncs. The transform,
    the overhead and a plain sync every H steps share one quotient, as the step had it before
    exposed syncs and syncs every step existed: the same expression where those are absent."""
    outer = syncs[-1]
    numerator = tr + overhead * outer.fragments
    others = []
    for sy in syncs:
        total = D.total([ph.time for ph in sy.phases], U.TIME)
        if sy.exposed is not None:
            others.append(sy.exposed)
        elif sy is outer:
            numerator = tr + total + overhead * outer.fragments
        else:
            others.append(total / sy.every)
    return numerator / period + D.total(others, U.TIME)
