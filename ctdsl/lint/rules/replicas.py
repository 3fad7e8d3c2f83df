"""CTL012, CTL013: what the training step's timeline needs of a dc of replicas."""

from __future__ import annotations

from typing import Iterator

from ctdsl.diagnostics import Severity
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, shown_label
from ctdsl.model import payload as PL

# ---- CTL012 ---------------------------------------------------------------------------


@rule(
    "CTL012",
    "no-training-step",
    Severity.WARNING,
    "Replicas split over several GPUs train a model that gives no sequence length, so their step is its FLOPs alone.",
    bad="""
    model job : llama3_70b { tokens = 131072 }
    replica r { tp = 8; pp = 2; scaleup_link = nvlink4 }
    """,
    good="""
    model job : llama3_70b { seq = 8192; tokens = 16 * 8192 }
    replica r { tp = 8; pp = 2; scaleup_link = nvlink4 }
    """,
)
def no_training_step(ctx: Context) -> Iterator[Hit]:
    """
    A replica of tp x pp x cp GPUs spends its step on more than its FLOPs: the
    tensor-parallel all-reduces of every layer, the pipeline's transfers and its
    bubble, recomputation and the optimiser (docs/cost-model.md, "The training
    step"). ctdsl builds that timeline from the model's shape and its sequence
    length `seq`, which sets the micro-batches. A model without them leaves every
    such term out, and the step, the compute utilisation and every break-even
    come out optimistic: give the model its `seq` (and its shape), or, with a
    measured figure, the device's `mfu`.
    """
    spec = ctx.spec
    if not spec.has_replicas or any(spec.devices[d.device].mfu is not None for d in spec.dcs.values()):
        return
    rep = spec.replica
    gpus = ctx.value(rep.gpus)
    if gpus is None or gpus <= 1:
        return
    seen = set()
    for s in spec.schemes.values():
        model = spec.models[s.model]
        if model.name in seen or (PL.full_shape(model) and PL.has(model, "seq")):
            continue
        seen.add(model.name)
        if not is_user(ctx, model):
            continue
        missing = "seq (sequence length)" if PL.full_shape(model) else "its shape and seq"
        yield Hit(
            f"model '{model.name}' gives no {missing}: the {gpus:g}-GPU replicas of '{rep.name}' are costed by their FLOPs alone",
            ctx.at(model, "tokens"),
            label="no micro-batches without seq",
            secondary=shown_label(ctx, rep.span, f"{gpus:g} GPUs a replica"),
            notes=("tensor and pipeline traffic, the bubble, recomputation and the optimiser are left out of the step",),
            help="give the model its seq, e.g. seq = 8192 (or a device a measured mfu)",
        )


# ---- CTL013 ---------------------------------------------------------------------------


@rule(
    "CTL013",
    "no-scaleup-link",
    Severity.WARNING,
    "A replica with tensor parallelism names no scale-up link, so its all-reduces run on the dc's NIC link.",
    bad="""
    replica r { tp = 8; pp = 2 }
    """,
    good="""
    replica r { tp = 8; pp = 2; scaleup_link = nvlink4 }
    """,
)
def no_scaleup_link(ctx: Context) -> Iterator[Hit]:
    """
    Tensor parallelism all-reduces activations in every layer, inside a node on
    NVLink or NVSwitch. A replica that names no `scaleup_link` has no such link:
    the training step's timeline then costs that traffic on the dc's own `link`
    (a NIC, ten times slower or more), and the tensor-parallel component of the
    step says so by its size. Name the node's link: `scaleup_link = nvlink4`.
    """
    spec = ctx.spec
    if not spec.has_replicas:
        return
    for name in dict.fromkeys(d.replica for d in spec.dcs.values()):
        rep = spec.replicas[name]
        tp = ctx.value(rep.tp)
        if rep.scaleup_link is not None or tp is None or tp <= 1 or not is_user(ctx, rep):
            continue
        yield Hit(
            f"replica '{rep.name}' splits each layer {tp:g} ways but names no scaleup_link: its all-reduces are costed on the dc's link",
            ctx.at(rep, "tp"),
            label=f"tp = {tp:g}",
            help="name the node's link, e.g. scaleup_link = nvlink4",
        )
