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
- time to target = steps x step time; energy to target = steps x (static power x
  step time + energy per FLOP x FLOPs + energy per bit x bits on every link crossed
  + module and switch power x step time).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import sympy as sp

from ctdsl.symbolic.maxmin import emax, emin

from ctdsl.check import schema as S
from ctdsl.model import payload as PL
from ctdsl.model.entities import Scheme, Spec
from ctdsl.symbolic.convert import Symbols, to_sympy
from ctdsl.symbolic.routing import Edge, Phase, Router

ZERO = sp.Integer(0)


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


class CostModel:
    """Everything shared by the schemes of one spec: symbols, graph, edge attributes."""

    def __init__(self, spec: Spec, g: nx.DiGraph, symbols: Symbols):
        self.spec = spec
        self.g = g
        self.symbols = symbols
        self._memo: dict[int, sp.Expr] = {}
        self._edges: dict[Edge, dict] = {}
        self.router = Router(spec, g, self.edge_attr, self.node_latency)

    def sym(self, expr) -> sp.Expr:
        return to_sympy(expr, self.symbols, self._memo)

    def edge_attr(self, e: Edge) -> dict:
        if e not in self._edges:
            d = self.g.edges[e]
            self._edges[e] = {
                "bandwidth": self.sym(d["bandwidth"]),
                "latency": self.sym(d["latency"]),
                "energy_per_bit": self.sym(d["energy_per_bit"]),
                "link": d["link"],
                "kind": d["kind"],
            }
        return self._edges[e]

    def node_latency(self, node: str) -> sp.Expr:
        d = self.g.nodes[node]
        if d.get("kind") == "switch":
            sw = self.spec.switches.get(d["definition"])
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
        compute = self._per_dc_max(
            {dc: flops / (self.sym(dev.peak) * self.sym(dev.efficiency)) for dc, dev in self._devices().items()},
            "compute in dc {}",
            labels,
        )
        transform, where, module = self._transform(scheme, model, dense, up, labels)
        period = self.sym(scheme.period)
        sync = sp.Add(*[ph.time for ph in phases]) if phases else ZERO
        components: dict[str, sp.Expr] = {"compute": compute}
        if transform != 0:
            components["transform"] = transform / period
        for ph in phases:
            components[ph.name] = ph.time / period
        side = (transform + sync) / period
        if scheme.overlap:
            step = emax(compute, side)
            labels[compute] = "compute"
            labels[side] = "transform and sync"
        else:
            step = compute + side
        steps = self.sym(scheme.steps) if scheme.steps is not None else None
        link_bytes: dict[Edge, sp.Expr] = {}
        for ph in phases:
            for e in ph.loads:
                link_bytes[e] = link_bytes.get(e, ZERO) + ph.bytes_on(e)
        wan_edges = [e for e in link_bytes if self.edge_attr(e)["kind"] == "wan"]
        wan_bytes = ZERO
        if wan_edges:
            wan_bytes = emax(*[link_bytes[e] for e in wan_edges]) if len(wan_edges) > 1 else link_bytes[wan_edges[0]]
        senders: dict[str, sp.Expr] = {}
        for ph in phases:
            for t in ph.transfers:
                if self.g.nodes[t.src]["kind"] == "worker":
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
        )

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
            if optics is not None and any(op in optics.performs for op in needs if op in ("fft", "dct", "ntt")):
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
        spec = self.spec
        static = ZERO
        arith = ZERO
        for dc, d in spec.dcs.items():
            dev = spec.devices[d.device]
            static += d.workers * self.sym(dev.static_power) * step
            arith += d.workers * self.sym(dev.energy_per_flop) * flops
            if where == "gpu":
                arith += (
                    d.workers
                    * (self.sym(dev.energy_per_flop) * self.sym(scheme.cost) * dense + self.sym(dev.energy_per_byte) * dense)
                    / period
                )
        links = ZERO
        for e, nbytes in link_bytes.items():
            links += self.edge_attr(e)["energy_per_bit"] * nbytes / period
        modules = ZERO
        switches = ZERO
        for dc, d in spec.dcs.items():
            if d.pluggable:
                modules += d.workers * self.sym(spec.pluggables[d.pluggable].power) * step
            sw = spec.switches.get(d.switch)
            if sw is not None:
                switches += self.sym(sw.power) * step
        return {"static": static, "arithmetic": arith, "links": links, "modules": modules, "switches": switches}
