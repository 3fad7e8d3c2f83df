"""Per-scheme costs as sympy expressions in the spec's params (domain.md 4-7).

For one scheme:

- payload c (what a worker originates) and the dense size D = vP;
- the collective's phases, routed over the graph (`routing.py`), with the bytes on
  every link and the time of each phase;
- the transform: on the GPU a roofline, max(cost D / (peak eff), D / mem_bw); in
  a pluggable, D through the module's pipelined stages at the slowest stage's
  rate, plus its latency (a DCT costs the compute budget nothing when the optics
  performs it); at a switch, the streams it takes in over its rate;
- step time = compute + (transform + sync) / H, or max(compute, (transform +
  sync) / H) when the scheme overlaps them;
- when the spec sets them: the M/D/1 queueing wait on loaded links, inside the
  phases that cross them (`queueing.py`, shown as the component "queueing on
  LINK"), and the wait for the slowest worker (`stragglers.py`, the component
  "stragglers"), added to compute;
- time to target = steps x step time; energy to target = steps x (static power x
  step time + energy per FLOP x FLOPs + energy per byte x bytes on every link crossed
  + module and switch power x step time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ctdsl.language import schema as S
from ctdsl.language.enums import LinkKind
from ctdsl.language.transforms import optics_performs_transform
from ctdsl.model import payload as PL
from ctdsl.model.entities import Scheme, Spec
from ctdsl.model.topology import NodeKind, Topology
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic import stragglers as ST
from ctdsl.symbolic.convert import NumericError, Symbols, to_sympy, value
from ctdsl.symbolic.maxmin import emax, emin
from ctdsl.symbolic.routing import Edge, Phase, Router

ZERO = sp.Integer(0)


@dataclass(frozen=True)
class EdgeTerms:
    """One directed edge of the topology, its quantities as sympy."""

    link: str
    kind: LinkKind
    bandwidth: sp.Expr  # B/s
    latency: sp.Expr  # s
    energy_per_byte: sp.Expr  # J/B
    queue: Q.Queue | None  # the M/D/1 queue of a link with a background load


@dataclass
class ModuleStages:
    """A pluggable's pipelined stages for one scheme's transform."""

    pluggable: str
    rates: dict[str, sp.Expr]  # stage -> B/s
    stream: sp.Expr  # bytes that pass through (the dense buffer)
    latency: sp.Expr
    charged_cost: sp.Expr  # FLOP per byte charged to the compute budget
    line_rate: sp.Expr = None  # the port stage's rate
    budget: sp.Expr | None = None  # FLOP/s of the compute stage

    @property
    def budget_per_byte(self) -> sp.Expr | None:
        """FLOPs the budget affords per byte at line rate: budget / line rate."""
        return self.budget / self.line_rate if self.budget is not None else None

    @property
    def rate(self) -> sp.Expr:
        args = list(self.rates.values())
        return emin(*args) if len(args) > 1 else args[0]

    def times(self) -> dict[str, sp.Expr]:
        return {k: self.stream / r for k, r in self.rates.items()}

    @property
    def time(self) -> sp.Expr:
        return self.stream / self.rate + self.latency


@dataclass
class SchemeCosts:
    scheme: Scheme
    dense: sp.Expr
    payload: sp.Expr
    up: sp.Expr
    phases: list[Phase]
    compute: sp.Expr
    transform: sp.Expr
    transform_where: str  # gpu | pluggable NAME | switch NAME | none
    module: ModuleStages | None
    period: sp.Expr
    steps: sp.Expr | None
    components: dict[str, sp.Expr]  # per step, each already divided by H where it applies
    sync: sp.Expr  # per sync
    step_time: sp.Expr
    time_to_target: sp.Expr | None
    energy_per_step: sp.Expr
    energy_to_target: sp.Expr | None
    energy_parts: dict[str, sp.Expr]
    link_bytes: dict[Edge, sp.Expr]  # bytes per sync on each edge
    wire: sp.Expr  # bytes one worker sends per sync
    wan_bytes: sp.Expr  # bytes per sync on the busiest WAN edge
    wan_edges: list[Edge]
    labels: dict[sp.Expr, str] = field(default_factory=dict)  # max/min argument -> meaning
    stragglers: ST.Straggler | None = None
    queues: dict[Edge, "LoadedEdge"] = field(default_factory=dict)  # loaded edges the sync crosses
    closed_forms: list["ClosedForm"] = field(default_factory=list)  # what is exact, what approximate


@dataclass
class LoadedEdge:
    """A directed edge with background traffic that this scheme's sync crosses."""

    edge: Edge
    queue: Q.Queue
    phases: list[str]  # the phases that pay its wait
    waits_per_sync: int  # phase steps per sync that wait for it
    busy: sp.Expr  # seconds per step the sync keeps it busy (divided by H)


@dataclass
class ClosedForm:
    """A term added for contention or stragglers, with how far to trust it."""

    component: str
    formula: str
    status: str  # exact | numerically integrated | approximation
    note: str = ""


class CostModel:
    """Everything shared by the schemes of one spec: symbols, graph, edge attributes."""

    def __init__(self, spec: Spec, topology: Topology, symbols: Symbols):
        self.spec = spec
        self.topology = topology
        self.symbols = symbols
        self._memo: dict[int, sp.Expr] = {}
        self._edges: dict[Edge, EdgeTerms] = {}
        self.router = Router(spec, topology, self.edge, self.node_latency)

    def sym(self, expr) -> sp.Expr:
        return to_sympy(expr, self.symbols, self._memo)

    def edge(self, e: Edge) -> EdgeTerms:
        if e not in self._edges:
            d = self.topology.edge(*e)
            bandwidth, latency, energy = self.sym(d.bandwidth), self.sym(d.latency), self.sym(d.energy_per_byte)
            link = self.spec.links.get(d.link) if d.kind in (LinkKind.INTRA, LinkKind.WAN) else None
            queue = None
            if link is not None and link.load is not None and link.transfer is not None:
                queue = Q.Queue.of(d.link, self.sym(link.load), self.sym(link.transfer), bandwidth)
            self._edges[e] = EdgeTerms(d.link, d.kind, bandwidth, latency, energy, queue)
        return self._edges[e]

    def node_latency(self, node: str) -> sp.Expr:
        n = self.topology.node(node)
        if n.kind is NodeKind.SWITCH:
            sw = self.spec.switches.get(n.definition)
            if sw is not None and sw.latency is not None:
                return self.sym(sw.latency)
        return ZERO

    # ---- one scheme -------------------------------------------------------------------

    def scheme(self, scheme: Scheme) -> SchemeCosts:
        spec = self.spec
        model = spec.models[scheme.model]
        dense = self.sym(PL.dense_bytes(model))
        payload = self.sym(PL.payload_bytes(scheme, model))
        labels: dict[sp.Expr, str] = {}
        up = dense if scheme.at.kind == "switch" else payload
        phases = self.router.plan(scheme.collective, payload, up, scheme.loopback)
        for ph in phases:
            labels.update(ph.bottlenecks)
        flops = self.sym(PL.compute_flops(model))
        per_dc = {dc: flops / (self.sym(dev.peak) * self.sym(dev.efficiency)) for dc, dev in self._devices().items()}
        compute = self._per_dc_max(per_dc, "compute in dc {}", labels)
        transform, where, module = self._transform(scheme, model, dense, up, labels)
        period = self.sym(scheme.period)
        sync = sp.Add(*[ph.time for ph in phases]) if phases else ZERO
        components: dict[str, sp.Expr] = {"compute": compute}
        if transform != 0:
            components["transform"] = transform / period
        queueing: dict[str, sp.Expr] = {}
        for ph in phases:
            if ph.waits:
                components[ph.name] = ph.steps * ph.free_step_time / period
                links = ", ".join(dict.fromkeys(self.edge(e).link for e in ph.waits))
                key = f"queueing on {links}"
                queueing[key] = queueing.get(key, ZERO) + ph.steps * ph.queueing / period
            else:
                components[ph.name] = ph.time / period
        components.update(queueing)
        closed: list[ClosedForm] = []
        queues = self._loaded_edges(phases, period)
        for key in queueing:
            closed.append(ClosedForm(key, Q.FORMULA, Q.STATUS, Q.LIMITS))
        strag = self._stragglers(per_dc, period, scheme.overlap)
        worked = compute
        if strag is not None:
            components["stragglers"] = strag.extra
            worked = compute + strag.extra
            closed.append(ClosedForm("stragglers", strag.formula, strag.status, strag.note))
        side = (transform + sync) / period
        if scheme.overlap:
            step = emax(worked, side)
            labels[worked] = "compute"
            labels[side] = "transform and sync"
        else:
            step = worked + side
        steps = self.sym(scheme.steps) if scheme.steps is not None else None
        link_bytes: dict[Edge, sp.Expr] = {}
        for ph in phases:
            for e in ph.loads:
                link_bytes[e] = link_bytes.get(e, ZERO) + ph.bytes_on(e)
        wan_edges = [e for e in link_bytes if self.edge(e).kind is LinkKind.WAN]
        wan_bytes = ZERO
        if wan_edges:
            wan_bytes = emax(*[link_bytes[e] for e in wan_edges]) if len(wan_edges) > 1 else link_bytes[wan_edges[0]]
        senders: dict[str, sp.Expr] = {}
        for ph in phases:
            for t in ph.transfers:
                if self.topology.node(t.src).kind is NodeKind.WORKER:
                    senders[t.src] = senders.get(t.src, ZERO) + ph.steps * t.nbytes
        wire = emax(*senders.values()) if len(senders) > 1 else (next(iter(senders.values())) if senders else ZERO)
        energy_parts = self._energy(scheme, model, step, flops, dense, link_bytes, period, where)
        energy = sp.Add(*energy_parts.values())
        return SchemeCosts(
            scheme=scheme,
            dense=dense,
            payload=payload,
            up=up,
            phases=phases,
            compute=compute,
            transform=transform,
            transform_where=where,
            module=module,
            period=period,
            steps=steps,
            components=components,
            sync=sync,
            step_time=step,
            time_to_target=steps * step if steps is not None else None,
            energy_per_step=energy,
            energy_to_target=steps * energy if steps is not None else None,
            energy_parts=energy_parts,
            link_bytes=link_bytes,
            wire=wire,
            wan_bytes=wan_bytes,
            wan_edges=wan_edges,
            labels=labels,
            stragglers=strag,
            queues=queues,
            closed_forms=closed,
        )

    # ---- contention and stragglers ----------------------------------------------------------

    def _loaded_edges(self, phases: list[Phase], period: sp.Expr) -> dict[Edge, LoadedEdge]:
        out: dict[Edge, LoadedEdge] = {}
        for ph in phases:
            for e in ph.waits:
                q = self.edge(e).queue
                le = out.setdefault(e, LoadedEdge(e, q, [], 0, ZERO))
                le.phases.append(ph.name)
                le.waits_per_sync += ph.steps
        for e, le in out.items():
            bw = self.edge(e).bandwidth
            le.busy = sp.Add(*[ph.bytes_on(e) for ph in phases]) / bw / period
        return out

    def _stragglers(self, per_dc: dict[str, sp.Expr], period: sp.Expr, overlap: bool) -> ST.Straggler | None:
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
            jitter = self.sym(d.jitter) if d.jitter is not None else ZERO
            sigma = self.sym(d.jitter_sigma) if d.jitter_sigma is not None else None
            keys[d.name] = (per_dc[d.name], jitter, d.jitter_kind if d.jitter is not None else None, sigma)
        if len(set(keys.values())) == 1:
            base, jitter, kind, sigma = next(iter(keys.values()))
            n = sum(d.workers for d in dcs)
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
                        d.workers,
                        value(base, env),
                        value(jitter, env),
                        kind,
                        value(sigma, env) if sigma is not None else None,
                    )
                )
            x, status = ST.excess(groups, H)
            extra = sp.Float(x, 15)
            formula = "E[max over workers of their compute over H steps] / H - the slowest dc's compute, for unlike dcs"
            notes.append("integrated at the params' defaults: a number that does not follow a swept param")
        if overlap:
            status = ST.APPROXIMATION
            notes.append("with overlap, max(compute + stragglers, sync) stands for E[max(slowest compute, sync)], which is at least as large")
        return ST.Straggler(extra, status, formula, "; ".join(notes))

    def _devices(self):
        return {dc: self.spec.devices[d.device] for dc, d in self.spec.dcs.items()}

    def _per_dc_max(self, per_dc: dict[str, sp.Expr], label: str, labels) -> sp.Expr:
        unique: dict[sp.Expr, str] = {}
        for dc, e in per_dc.items():
            unique.setdefault(e, label.format(dc))
        if len(unique) == 1:
            return next(iter(unique))
        labels.update(unique)
        return emax(*unique)

    def _transform(self, scheme: Scheme, model, dense, up, labels):
        needs = S.PAYLOAD_NEEDS.get(scheme.payload, ())
        if not needs:
            return ZERO, "none", None
        cost = self.sym(scheme.cost)
        at = scheme.at
        if at.kind == "gpu":
            per_dc = {}
            for dc, dev in self._devices().items():
                arith = cost * dense / (self.sym(dev.peak) * self.sym(dev.efficiency))
                if dev.mem_bw is not None:
                    memory = dense / self.sym(dev.mem_bw)
                    labels.setdefault(arith, "transform arithmetic on the GPU")
                    labels.setdefault(memory, "transform memory traffic on the GPU")
                    per_dc[dc] = emax(arith, memory)
                else:
                    per_dc[dc] = arith
            return self._per_dc_max(per_dc, "transform in dc {}", labels), "gpu", None
        if at.kind == "pluggable":
            plug = self.spec.pluggables[at.name]
            charged = cost
            optics = plug.stages.get("optics")
            if optics is not None and optics_performs_transform(scheme.payload, optics.performs):
                charged = ZERO
            rates: dict[str, sp.Expr] = {"port": self.sym(plug.line_rate)}
            if optics is not None:
                rates["optics"] = self.sym(optics.rate)
            compute_stage = plug.stages.get("compute")
            if compute_stage is not None and charged != 0:
                rates["compute"] = self.sym(compute_stage.budget) / charged
            fpga = plug.stages.get("fpga")
            if fpga is not None:
                rates["fpga"] = self.sym(fpga.rate)
            rates = {k: v for k, v in rates.items() if v != 0}
            for k, v in rates.items():
                labels.setdefault(v, f"{k} stage of {plug.name}")
            module = ModuleStages(
                plug.name,
                rates,
                dense,
                self.sym(plug.latency),
                charged,
                line_rate=self.sym(plug.line_rate),
                budget=self.sym(compute_stage.budget) if compute_stage is not None else None,
            )
            return module.time, f"pluggable {plug.name}", module
        # at a switch: it takes in every worker's stream
        sw = self.spec.switches[at.name]
        if sw.rate is None:
            return ZERO, f"switch {sw.name}", None
        per_dc = {dc: d.workers * up / self.sym(sw.rate) for dc, d in self.spec.dcs.items()}
        return self._per_dc_max(per_dc, "switch in dc {}", labels), f"switch {sw.name}", None

    def _energy(self, scheme, model, step, flops, dense, link_bytes, period, where) -> dict[str, sp.Expr]:
        """Energy of one step by part. Powers are summed first and multiply the step
        time once: the step time is the largest expression here."""
        spec = self.spec
        static_w, module_w, switch_w, arith = [], [], [], []
        for d in spec.dcs.values():
            dev = spec.devices[d.device]
            static_w.append(d.workers * self.sym(dev.static_power))
            arith.append(d.workers * self.sym(dev.energy_per_flop) * flops)
            if where == "gpu":
                per_byte = self.sym(dev.energy_per_flop) * self.sym(scheme.cost) + self.sym(dev.energy_per_byte)
                arith.append(d.workers * per_byte * dense / period)
            if d.pluggable:
                module_w.append(d.workers * self.sym(spec.pluggables[d.pluggable].power))
            sw = spec.switches.get(d.switch)
            if sw is not None:
                switch_w.append(self.sym(sw.power))
        links = sp.Add(*[self.edge(e).energy_per_byte * nbytes for e, nbytes in link_bytes.items()]) / period
        return {
            "static": sp.Add(*static_w) * step,
            "arithmetic": sp.Add(*arith),
            "links": links,
            "modules": sp.Add(*module_w) * step,
            "switches": sp.Add(*switch_w) * step,
        }
