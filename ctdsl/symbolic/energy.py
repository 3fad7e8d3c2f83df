"""Energy of one step, by part (domain.md section 7).

static power x step time, energy per FLOP x FLOPs (and, for a transform on the
GPU, its FLOPs and memory bytes), energy per byte x the bytes each link charges
(once per transfer, or on every edge for a link counted per hop: `Phase.charged`),
and module and switch power x step time. Powers are summed first and multiply
the step time once: the step time is the largest expression here.
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr


def energy_parts(cm, scheme, step: DimExpr, flops: DimExpr, dense: DimExpr, charged_bytes: dict, period: DimExpr, where: str) -> dict[str, DimExpr]:
    spec = cm.spec
    static_w, module_w, switch_w, arith = [], [], [], []
    for d in spec.dcs.values():
        dev = spec.devices[d.device]
        n = cm.device_count(d.name)  # workers, or the GPUs of the replicas, each with its share of the work
        static_w.append(n * cm.field(dev, "static_power"))
        worker = cm.worker_flops(spec.models[scheme.model], d.name, flops)
        arith.append(n * cm.field(dev, "energy_per_flop") * worker / cm.member_gpus(d.name))
        if where == "gpu":
            per_byte = cm.field(dev, "energy_per_flop") * cm.field(scheme, "cost") + cm.field(dev, "energy_per_byte")
            arith.append(n * per_byte * dense * cm.mean_shard(spec.models[scheme.model]) / period)  # every GPU's own shard
        if d.pluggable:
            module_w.append(cm.module_count(d.name) * cm.field(spec.pluggables[d.pluggable], "power"))
        sw = spec.switches.get(d.switch)
        if sw is not None:
            switch_w.append(cm.site_count(d.name) * cm.field(sw, "power"))  # one switch a site
    links = D.total([cm.edge(e).energy_per_byte * nbytes for e, nbytes in charged_bytes.items()], U.ENERGY) / period
    return {
        "static": D.total(static_w, U.POWER) * step,
        "arithmetic": D.total(arith, U.ENERGY),
        "links": links,
        "modules": D.total(module_w, U.POWER) * step,
        "switches": D.total(switch_w, U.POWER) * step,
    }
