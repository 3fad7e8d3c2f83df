"""What a dc counts, and how the work divides among it: workers, or replicas of GPUs.

A mixin of `CostModel` (costs.py): the devices and modules of a dc, the GPUs of
one data-parallel worker, the part of the model one device holds, and the
compute time of a step, with `batch_tokens` split across the replicas in
proportion to their compute.
"""

from __future__ import annotations

import sympy as sp

from ctdsl import units as U
from ctdsl.model import payload as PL
from ctdsl.model.graph import gpus_id, module_id
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.convert import value
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.transform import per_dc_max


class Counts:
    """Needs `spec`, `topology`, `q`, `field`, `shape`, `formulas`, `devices` and `_split` (CostModel's)."""

    def member_gpus(self, dc: str) -> DimExpr:
        """GPUs in one data-parallel worker of `dc`: 1, or a replica's tp x pp x cp."""
        d = self.spec.dcs[dc]
        return self.q(self.spec.replicas[d.replica].gpus, U.ONE) if d.replica else D.one()

    def device_count(self, dc: str) -> DimExpr:
        """Devices in `dc`: its workers, or its replicas' GPUs."""
        d = self.spec.dcs[dc]
        return self.q(self.topology.node(gpus_id(dc)).count, U.ONE) if d.replica else D.DimExpr(sp.Integer(d.workers), U.ONE)

    def module_count(self, dc: str) -> DimExpr:
        """Pluggable modules in `dc`: one per worker, or one per NIC."""
        d = self.spec.dcs[dc]
        if d.replica and d.pluggable:
            return self.q(self.topology.node(module_id(self.spec, dc, None)).count, U.ONE)
        return self.device_count(dc)

    def site_count(self, dc: str) -> DimExpr:
        """Alike sites `dc` stands for: its `sites` (a param may set it), or 1."""
        d = self.spec.dcs[dc]
        return self.q(d.sites, U.ONE) if d.replica and d.sites is not None else D.one()

    def mean_shard(self, model) -> DimExpr:
        """The part of the model a device holds on average (every device's part summed, over the
        devices): 1, or with replicas 1 / (tp x pp), however uneven the pipeline stages."""
        if not self.spec.has_replicas:
            return D.one()
        rep = self.spec.replicas[next(iter(self.spec.dcs.values())).replica]
        return D.one() / (self.q(rep.tp, U.ONE) * self.q(rep.pp, U.ONE))

    def shard(self, model) -> DimExpr:
        """The part of the model the most-loaded device holds: 1, or with replicas (the dcs pair
        their shards) 1 / (tp x pp), or with uneven stages the largest stage's layers / (L x tp)."""
        if not self.spec.has_replicas:
            return D.one()
        rep = self.spec.replicas[next(iter(self.spec.dcs.values())).replica]
        tp, pp = self.q(rep.tp, U.ONE), self.q(rep.pp, U.ONE)
        ends = [self.q(x, U.ONE) for x in (rep.first_stage_layers, rep.last_stage_layers) if x is not None]
        if not ends or not model.shape or "layers" not in model.shape:
            return D.one() / (tp * pp)
        layers = self.shape(model, "layers")
        middle = (layers - D.total(ends, U.ONE)) / (pp - len(ends))
        return D.emax(middle, *ends) / (layers * tp)

    def zero_stage(self) -> int:
        """The replicas' ZeRO stage (every dc shards alike, CT421), at the params' defaults: 1 by default."""
        rep = self.spec.replicas[next(iter(self.spec.dcs.values())).replica]
        if rep.zero is None:
            return 1
        return int(round(value(self.q(rep.zero, U.ONE).e, self.symbols.defaults())))

    def _compute(self, model, labels: dict) -> tuple[DimExpr, dict[str, DimExpr], DimExpr]:
        """(FLOPs per step per worker, compute time per dc, the step's compute time).

        With `batch_tokens` the job's tokens are split across the replicas in proportion to
        their compute, so every dc computes for the same time: the batch's FLOPs over the sum
        of every device's peak x efficiency; a worker's FLOPs are then its dc's share.
        """
        rate = {dc: self.rate(dev) for dc, dev in self.devices().items()}
        if model.batch_tokens is None:
            flops = PL.compute_flops(model, self.formulas)
            per_dc = {dc: flops / (self.member_gpus(dc) * rate[dc]) for dc in rate}
            return flops, per_dc, per_dc_max(per_dc, "compute in dc {}", labels)
        batch = self.field(model, "batch_tokens") * self.formulas.get(model, "flops_per_token")
        total = D.total([self.device_count(dc) * r for dc, r in rate.items()], U.OPS_RATE)
        compute = batch / total
        labels[compute.e] = "compute (the batch split by compute)"
        self._split[model.name] = {dc: compute * r * self.member_gpus(dc) for dc, r in rate.items()}
        return compute * next(iter(rate.values())) * self.member_gpus(next(iter(rate))), {dc: compute for dc in rate}, compute

    def rate(self, dev) -> DimExpr:
        """A device's FLOP/s for the step's compute: peak x efficiency, or with a measured `mfu`
        peak x mfu (the whole inner step at that utilisation)."""
        return self.field(dev, "peak") * self.field(dev, "mfu" if dev.mfu is not None else "efficiency")

    def measured(self) -> bool:
        """Whether a dc's device gives a measured MFU: then the inner step is one block at it."""
        return any(dev.mfu is not None for dev in self.devices().values())

    def worker_flops(self, model, dc: str, flops: DimExpr) -> DimExpr:
        """FLOPs per step of one worker (replica) of `dc`: `flops`, or its share of a split batch."""
        return self._split.get(model.name, {}).get(dc, flops)

