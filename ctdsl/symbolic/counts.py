"""What a dc counts, and how the work divides among it: workers, or replicas of GPUs.

Pure functions of the context (context.py): the devices and modules of a dc, the GPUs
of one data-parallel worker, the part of the model one device holds, and the compute
time of a step (`compute`), with `batch_tokens` split across the replicas in proportion
to their compute (the split is part of the `Compute` it returns, for whoever needs a
replica's share: the energy's arithmetic, the training step's micro-batches).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import sympy as sp

from ctdsl import units as U
from ctdsl.model import payload as PL
from ctdsl.model.entities import Device, Model
from ctdsl.model.graph import gpus_id, module_id
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import value
from ctdsl.symbolic.dimensioned import DimExpr, per_dc_max


def devices(ctx: Context) -> dict[str, Device]:
    """Each dc's device, by dc."""
    return {dc: ctx.spec.devices[d.device] for dc, d in ctx.spec.dcs.items()}


def member_gpus(ctx: Context, dc: str) -> DimExpr:
    """GPUs in one data-parallel worker of `dc`: 1, or a replica's tp x pp x cp."""
    d = ctx.spec.dcs[dc]
    return ctx.q(ctx.spec.replicas[d.replica].gpus, U.ONE) if d.replica else D.one()


def device_count(ctx: Context, dc: str) -> DimExpr:
    """Devices in `dc`: its workers, or its replicas' GPUs."""
    d = ctx.spec.dcs[dc]
    return ctx.q(ctx.topology.node(gpus_id(dc)).count, U.ONE) if d.replica else D.DimExpr(sp.Integer(d.workers), U.ONE)


def module_count(ctx: Context, dc: str) -> DimExpr:
    """Pluggable modules in `dc`: one per worker, or one per NIC."""
    d = ctx.spec.dcs[dc]
    if d.replica and d.pluggable:
        return ctx.q(ctx.topology.node(module_id(ctx.spec, dc, None)).count, U.ONE)
    return device_count(ctx, dc)


def site_count(ctx: Context, dc: str) -> DimExpr:
    """Alike sites `dc` stands for: its `sites` (a param may set it), or 1."""
    d = ctx.spec.dcs[dc]
    return ctx.q(d.sites, U.ONE) if d.replica and d.sites is not None else D.one()


def mean_shard(ctx: Context, model: Model) -> DimExpr:
    """The part of the model a device holds on average (every device's part summed, over the
    devices): 1, or with replicas 1 / (tp x pp), however uneven the pipeline stages."""
    if not ctx.spec.has_replicas:
        return D.one()
    rep = ctx.spec.replica
    return D.one() / (ctx.q(rep.tp, U.ONE) * ctx.q(rep.pp, U.ONE))


def shard(ctx: Context, model: Model) -> DimExpr:
    """The part of the model the most-loaded device holds: 1, or with replicas (the dcs pair
    their shards) 1 / (tp x pp), or with uneven stages the largest stage's layers / (L x tp)."""
    if not ctx.spec.has_replicas:
        return D.one()
    rep = ctx.spec.replica
    tp, pp = ctx.q(rep.tp, U.ONE), ctx.q(rep.pp, U.ONE)
    ends = [ctx.q(x, U.ONE) for x in (rep.first_stage_layers, rep.last_stage_layers) if x is not None]
    if not ends or not model.shape or "layers" not in model.shape:
        return D.one() / (tp * pp)
    layers = ctx.shape(model, "layers")
    middle = (layers - D.total(ends, U.ONE)) / (pp - len(ends))
    return D.emax(middle, *ends) / (layers * tp)


def zero_stage(ctx: Context) -> int:
    """The replicas' ZeRO stage (every dc shards alike, CT421), at the params' defaults: 1 by default."""
    rep = ctx.spec.replica
    if rep.zero is None:
        return 1
    return int(round(value(ctx.q(rep.zero, U.ONE).e, ctx.symbols.defaults())))


def rate(ctx: Context, dev: Device) -> DimExpr:
    """A device's FLOP/s for the step's compute: peak x efficiency, or with a measured `mfu`
    peak x mfu (the whole inner step at that utilisation)."""
    return ctx.field(dev, "peak") * ctx.field(dev, "mfu" if dev.mfu is not None else "efficiency")


def measured(ctx: Context) -> bool:
    """Whether a dc's device gives a measured MFU: then the inner step is one block at it."""
    return any(dev.mfu is not None for dev in devices(ctx).values())


@dataclass(frozen=True)
class Compute:
    """The compute of one step of a model: FLOPs of a worker, its time per dc, and the step's."""

    flops: DimExpr  # FLOPs per step of one worker (the first dc's, with a split batch)
    per_dc: Mapping[str, DimExpr]  # one worker's compute time, by dc
    time: DimExpr  # the step's compute: the slowest dc's
    split: Mapping[str, DimExpr] = field(default_factory=dict)  # dc -> a worker's FLOPs of a split batch (`batch_tokens`)

    def worker_flops(self, dc: str) -> DimExpr:
        """FLOPs per step of one worker (replica) of `dc`: `flops`, or its share of a split batch."""
        return self.split.get(dc, self.flops)


def compute(ctx: Context, model: Model, labels: dict) -> Compute:
    """The compute of a step of `model`; `labels` gets what each argument of its max means.

    With `batch_tokens` the job's tokens are split across the replicas in proportion to
    their compute, so every dc computes for the same time: the batch's FLOPs over the sum
    of every device's peak x efficiency; a worker's FLOPs are then its dc's share.
    """
    rates = {dc: rate(ctx, dev) for dc, dev in devices(ctx).items()}
    if model.batch_tokens is None:
        flops = PL.compute_flops(model, ctx.formulas)
        per_dc = {dc: flops / (member_gpus(ctx, dc) * rates[dc]) for dc in rates}
        return Compute(flops, per_dc, per_dc_max(per_dc, "compute in dc {}", labels))
    batch = ctx.field(model, "batch_tokens") * ctx.formulas.get(model, "flops_per_token")
    total = D.total([device_count(ctx, dc) * r for dc, r in rates.items()], U.OPS_RATE)
    time = batch / total
    labels[time.e] = "compute (the batch split by compute)"
    split = {dc: time * r * member_gpus(ctx, dc) for dc, r in rates.items()}
    first = next(iter(rates))
    return Compute(time * rates[first] * member_gpus(ctx, first), {dc: time for dc in rates}, time, split)


__all__ = [
    "Compute", "compute", "devices", "member_gpus", "device_count", "module_count", "site_count", "mean_shard", "shard",
    "zero_stage", "rate", "measured",
]  # fmt: skip
