"""Energy of one step, by part (domain.md section 7).

static power x step time, energy per FLOP x FLOPs (and, for a transform on the
GPU, its FLOPs and memory bytes), energy per byte x the bytes each link charges
(once per transfer, or on every edge for a link counted per hop: `Phase.charged`),
and module and switch power x step time. Powers are summed first and multiply
the step time once: the step time is the largest expression here.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ctdsl import units as U
from ctdsl.model.entities import Scheme
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.routing import Edge

def energy_parts(
    ctx: Context, scheme: Scheme, step: DimExpr, compute: C.Compute, dense: DimExpr, charged_bytes: Mapping[Edge, DimExpr],
    period: DimExpr, where: str, dcs: Iterable[str] | None = None,
) -> dict[str, DimExpr]:  # fmt: skip
    """Energy per step by part, of the hardware of `dcs` (every dc by default) and the bytes `charged_bytes` puts on links."""
    spec = ctx.spec
    model = spec.models[scheme.model]
    static_w, module_w, switch_w, arith = [], [], [], []
    for name in spec.dcs if dcs is None else dcs:
        d = spec.dcs[name]
        dev = spec.devices[d.device]
        n = C.device_count(ctx, d.name)  # workers, or the GPUs of the replicas, each with its share of the work
        static_w.append(n * ctx.field(dev, "static_power"))
        arith.append(n * ctx.field(dev, "energy_per_flop") * compute.worker_flops(d.name) / C.member_gpus(ctx, d.name))
        if where == "gpu":
            per_byte = ctx.field(dev, "energy_per_flop") * ctx.field(scheme, "cost") + ctx.field(dev, "energy_per_byte")
            arith.append(n * per_byte * dense * C.mean_shard(ctx, model) / period)  # every GPU's own shard
        if d.pluggable:
            module_w.append(C.module_count(ctx, d.name) * ctx.field(spec.pluggables[d.pluggable], "power"))
        sw = spec.switches.get(d.switch)
        if sw is not None:
            switch_w.append(C.site_count(ctx, d.name) * ctx.field(sw, "power"))  # one switch a site
    links = D.total([ctx.edges[e].energy_per_byte * nbytes for e, nbytes in charged_bytes.items()], U.ENERGY) / period
    return {
        "static": D.total(static_w, U.POWER) * step,
        "arithmetic": D.total(arith, U.ENERGY),
        "links": links,
        "modules": D.total(module_w, U.POWER) * step,
        "switches": D.total(switch_w, U.POWER) * step,
    }


__all__ = ["energy_parts"]
