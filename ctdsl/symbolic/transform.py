"""Where a scheme's transform runs, and what it costs (domain.md section 6).

- on the GPU: a roofline, max(cost D / (peak eff), D / mem_bw), per dc;
- in a pluggable: D through the module's pipelined stages at the slowest stage's
  rate, plus its latency; a DCT costs the compute budget nothing when the optics
  performs it (`language.transforms.optics_performs_transform`);
- at a switch: the streams it takes in, over its total_rate (shared by all of
  them) and over its stream_rate (each stream's own), the slower of the two.

Every term is a `DimExpr`: rates in B/s, times in s, costs in FLOP/B.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U
from ctdsl.language.enums import PlacementKind
from ctdsl.language.transforms import PAYLOAD_NEEDS, optics_performs_transform
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr


@dataclass
class ModuleStages:
    """A pluggable's pipelined stages for one scheme's transform."""

    pluggable: str
    rates: dict[str, DimExpr]  # stage -> B/s
    stream: DimExpr  # bytes that pass through (the dense buffer)
    latency: DimExpr
    charged_cost: DimExpr  # FLOP per byte charged to the compute budget
    line_rate: DimExpr  # the port stage's rate
    budget: DimExpr | None = None  # FLOP/s of the compute stage

    @property
    def budget_per_byte(self) -> DimExpr | None:
        """FLOPs the budget affords per byte at line rate: budget / line rate."""
        return self.budget / self.line_rate if self.budget is not None else None

    @property
    def rate(self) -> DimExpr:
        args = list(self.rates.values())
        return D.emin(*args) if len(args) > 1 else args[0]

    def times(self) -> dict[str, DimExpr]:
        return {k: self.stream / r for k, r in self.rates.items()}

    @property
    def time(self) -> DimExpr:
        return self.stream / self.rate + self.latency


def per_dc_max(per_dc: dict[str, DimExpr], label: str, labels: dict) -> DimExpr:
    """The slowest dc's term; alike dcs give one term, unlike ones a max labelled per dc."""
    unique: dict[DimExpr, str] = {}
    for dc, e in per_dc.items():
        unique.setdefault(e, label.format(dc))
    if len(unique) == 1:
        return next(iter(unique))
    labels.update({q.e: text for q, text in unique.items()})
    return D.emax(*unique)


def transform(cm, scheme, dense: DimExpr, up: DimExpr, labels: dict) -> tuple[DimExpr, str, ModuleStages | None]:
    """(time of one transform, where it runs, the module's stages when in a pluggable)."""
    if not PAYLOAD_NEEDS.get(scheme.payload, ()):
        return D.zero(U.TIME), "none", None
    cost = cm.field(scheme, "cost")
    at = scheme.at
    if at.kind == PlacementKind.GPU:
        return _on_gpu(cm, cost, dense, labels), "gpu", None
    if at.kind == PlacementKind.PLUGGABLE:
        module = _in_module(cm, scheme, cost, dense, labels)
        return module.time, f"pluggable {module.pluggable}", module
    sw = cm.spec.switches[at.name]
    return _at_switch(cm, sw, up, labels), f"switch {sw.name}", None


def _at_switch(cm, sw, up: DimExpr, labels: dict) -> DimExpr:
    """The L streams of u bytes a dc's switch takes in: L u / total_rate (one rate shared by
    all of them), u / stream_rate (each stream at its own rate, all at once), the slower of
    the two when both are given; no time when neither is."""
    per_dc = {}
    for dc, d in cm.spec.dcs.items():
        parts = []
        if sw.total_rate is not None:
            parts.append(d.workers * up / cm.field(sw, "total_rate"))
            labels.setdefault(parts[-1].e, f"total_rate of switch {sw.name}")
        if sw.stream_rate is not None:
            parts.append(up / cm.field(sw, "stream_rate"))
            labels.setdefault(parts[-1].e, f"stream_rate of switch {sw.name}")
        if parts:
            per_dc[dc] = D.emax(*parts) if len(parts) > 1 else parts[0]
    if not per_dc:
        return D.zero(U.TIME)
    return per_dc_max(per_dc, "switch in dc {}", labels)


def _on_gpu(cm, cost: DimExpr, dense: DimExpr, labels: dict) -> DimExpr:
    per_dc = {}
    for dc, dev in cm.devices().items():
        arith = cost * dense / (cm.field(dev, "peak") * cm.field(dev, "efficiency"))
        if dev.mem_bw is not None:
            memory = dense / cm.field(dev, "mem_bw")
            labels.setdefault(arith.e, "transform arithmetic on the GPU")
            labels.setdefault(memory.e, "transform memory traffic on the GPU")
            per_dc[dc] = D.emax(arith, memory)
        else:
            per_dc[dc] = arith
    return per_dc_max(per_dc, "transform in dc {}", labels)


def _in_module(cm, scheme, cost: DimExpr, dense: DimExpr, labels: dict) -> ModuleStages:
    plug = cm.spec.pluggables[scheme.at.name]
    charged = cost
    optics = plug.stages.get("optics")
    if optics is not None and optics_performs_transform(scheme.payload, optics.performs):
        charged = D.zero(U.OPS_PER_DATA)
    line_rate = cm.q(plug.line_rate, U.RATE)
    rates: dict[str, DimExpr] = {"port": line_rate}
    if optics is not None:
        rates["optics"] = cm.field(optics, "rate")
    compute_stage = plug.stages.get("compute")
    if compute_stage is not None and charged != 0:
        rates["compute"] = cm.field(compute_stage, "budget") / charged
    fpga = plug.stages.get("fpga")
    if fpga is not None:
        rates["fpga"] = cm.field(fpga, "rate")
    rates = {k: v for k, v in rates.items() if v != 0}
    for k, v in rates.items():
        labels.setdefault(v.e, f"{k} stage of {plug.name}")
    return ModuleStages(
        plug.name,
        rates,
        dense,
        cm.field(plug, "latency"),
        charged,
        line_rate=line_rate,
        budget=cm.field(compute_stage, "budget") if compute_stage is not None else None,
    )
