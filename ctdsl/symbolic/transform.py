"""Where a scheme's transform runs, and what it costs (domain.md section 6).

- on the GPU: a roofline, max(cost D / (peak eff), D / mem_bw), per dc; or its
  FLOPs alone, cost D / (peak eff), where the scheme or the device says
  `transform_charge = flops` (the scheme's word wins) or the device gives no mem_bw;
- in a pluggable: D through the module's pipelined stages at the slowest stage's
  rate, plus its latency; a DCT costs the compute budget nothing when the optics
  performs it (`language.transforms.optics_performs_transform`);
- at a switch: the streams it takes in, over its total_rate (shared by all of
  them) and over its stream_rate (each stream's own), the slower of the two.

Every term is a `DimExpr`: rates in B/s, times in s, costs in FLOP/B.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctdsl import units as U
from ctdsl.language.components import Place
from ctdsl.language.enums import PlacementKind, TransformCharge
from ctdsl.language.transforms import PAYLOAD_NEEDS, optics_performs_transform
from ctdsl.model.entities import Scheme
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr, per_dc_max


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Roofline:
    """A transform on one kind of GPU: both sides of its roofline and which is charged.

    The arithmetic intensity of the transform is its cost (FLOP per byte of the
    dense buffer); the ridge point is peak x efficiency / mem_bw, the intensity
    at which both sides take the same time. Below it the memory side binds.
    """

    device: str
    dcs: tuple[str, ...]
    charge: TransformCharge
    compute: DimExpr  # cost D / (peak eff), s
    memory: DimExpr | None  # D / mem_bw, s; None: the device gives no mem_bw
    intensity: DimExpr  # cost, FLOP/B
    ridge: DimExpr | None  # peak eff / mem_bw, FLOP/B

    @property
    def time(self) -> DimExpr:
        if self.memory is None or self.charge == TransformCharge.FLOPS:
            return self.compute
        return D.emax(self.compute, self.memory)


def charge_of(scheme, device) -> TransformCharge:
    """The scheme's `transform_charge`, else its device's (roofline by default)."""
    return TransformCharge(scheme.transform_charge or device.transform_charge)


def rooflines(ctx: Context, scheme: Scheme, dense: DimExpr) -> list[Roofline]:
    """One roofline per kind of device the scheme's workers run on, in dc order."""
    if scheme.at.kind != PlacementKind.GPU or not PAYLOAD_NEEDS.get(scheme.payload, ()):
        return []
    cost = ctx.field(scheme, "cost")
    out: dict[str, Roofline] = {}
    for dc, dev in C.devices(ctx).items():
        if dev.name in out:
            out[dev.name] = replace(out[dev.name], dcs=(*out[dev.name].dcs, dc))
            continue
        rate = ctx.field(dev, "peak") * ctx.field(dev, "efficiency")
        mem = ctx.field(dev, "mem_bw") if dev.mem_bw is not None else None
        out[dev.name] = Roofline(
            dev.name,
            (dc,),
            charge_of(scheme, dev),
            cost * dense / rate,
            dense / mem if mem is not None else None,
            cost,
            rate / mem if mem is not None else None,
        )
    return list(out.values())


@dataclass(frozen=True)
class Transform:
    """Where a scheme's transform runs and what one transform costs (per sync)."""

    time: DimExpr  # s, one transform of the scheme's dense buffer (0 s: none)
    where: str  # gpu | pluggable NAME | switch NAME | none
    place: Place = Place.GPU  # where its term is charged: the GPUs, a module's stages, a switch
    module: ModuleStages | None = None  # the pluggable's stages, when it runs in one
    on: str | None = None  # the pluggable or the switch it runs in


def transform(ctx: Context, scheme: Scheme, dense: DimExpr, up: DimExpr, labels: dict) -> Transform:
    """The transform of `dense` bytes (`up` what a worker sends up to a switch), where the scheme puts it."""
    if not PAYLOAD_NEEDS.get(scheme.payload, ()):
        return Transform(D.zero(U.TIME), "none")
    cost = ctx.field(scheme, "cost")
    at = scheme.at
    if at.kind == PlacementKind.GPU:
        return Transform(_on_gpu(ctx, scheme, dense, labels), "gpu")
    if at.kind == PlacementKind.PLUGGABLE:
        module = _in_module(ctx, scheme, cost, dense, labels)
        return Transform(module.time, f"pluggable {module.pluggable}", Place.MODULE, module, module.pluggable)
    sw = ctx.spec.switches[at.name]
    return Transform(_at_switch(ctx, sw, up, labels), f"switch {sw.name}", Place.SWITCH, on=sw.name)


def _at_switch(ctx: Context, sw, up: DimExpr, labels: dict) -> DimExpr:
    """The L streams of u bytes a dc's switch takes in: L u / total_rate (one rate shared by
    all of them), u / stream_rate (each stream at its own rate, all at once), the slower of
    the two when both are given; no time when neither is."""
    per_dc = {}
    for dc, d in ctx.spec.dcs.items():
        parts = []
        if sw.total_rate is not None:
            parts.append(C.device_count(ctx, d.name) / C.site_count(ctx, d.name) * up / ctx.field(sw, "total_rate"))  # one switch a site
            labels.setdefault(parts[-1].e, f"total_rate of switch {sw.name}")
        if sw.stream_rate is not None:
            parts.append(up / ctx.field(sw, "stream_rate"))
            labels.setdefault(parts[-1].e, f"stream_rate of switch {sw.name}")
        if parts:
            per_dc[dc] = D.emax(*parts) if len(parts) > 1 else parts[0]
    if not per_dc:
        return D.zero(U.TIME)
    return per_dc_max(per_dc, "switch in dc {}", labels)


def _on_gpu(ctx: Context, scheme: Scheme, dense: DimExpr, labels: dict) -> DimExpr:
    by_device = {}
    for r in rooflines(ctx, scheme, dense):
        if r.memory is not None and r.charge == TransformCharge.ROOFLINE:
            labels.setdefault(r.compute.e, "transform arithmetic on the GPU")
            labels.setdefault(r.memory.e, "transform memory traffic on the GPU")
        by_device[r.device] = r.time
    per_dc = {dc: by_device[dev.name] for dc, dev in C.devices(ctx).items()}
    return per_dc_max(per_dc, "transform in dc {}", labels)


def _in_module(ctx: Context, scheme: Scheme, cost: DimExpr, dense: DimExpr, labels: dict) -> ModuleStages:
    plug = ctx.spec.pluggables[scheme.at.name]
    charged = cost
    optics = plug.stages.get("optics")
    if optics is not None and optics_performs_transform(scheme.payload, optics.performs):
        charged = D.zero(U.OPS_PER_DATA)
    line_rate = ctx.q(plug.line_rate, U.RATE)
    rates: dict[str, DimExpr] = {"port": line_rate}
    if optics is not None:
        rates["optics"] = ctx.field(optics, "rate")
    compute_stage = plug.stages.get("compute")
    if compute_stage is not None and charged != 0:
        rates["compute"] = ctx.field(compute_stage, "budget") / charged
    fpga = plug.stages.get("fpga")
    if fpga is not None:
        rates["fpga"] = ctx.field(fpga, "rate")
    rates = {k: v for k, v in rates.items() if v != 0}
    for k, v in rates.items():
        labels.setdefault(v.e, f"{k} stage of {plug.name}")
    return ModuleStages(
        plug.name,
        rates,
        dense,
        ctx.field(plug, "latency"),
        charged,
        line_rate=line_rate,
        budget=ctx.field(compute_stage, "budget") if compute_stage is not None else None,
    )


__all__ = ["Transform", "ModuleStages", "Roofline", "transform", "rooflines", "charge_of"]
