"""Does the shard fit? Memory per GPU against the device's HBM, per model and dc.

For each model a scheme trains and each dc (memory.py has the formulas and their
sources, parallelism.md section 10):

- a dc of replicas: the most-loaded GPU's shard of the replica's tp, pp and ep
  (`memory.model_shard`, or P / (tp pp) for a model given by its params), its
  weights, gradients and optimiser states under the replica's ZeRO stage over the
  dc's cp R data-parallel ranks (Megatron's bytes per parameter: 2, 4, 12), and
  activations (Korthikanti) for its micro-batch, recomputation and sequence
  parallelism, when the model gives its sequence length (`seq`);
- a dc of single-device workers: the whole model on each, ZeRO stage 0 (plain
  data parallelism), the step's tokens as one batch of `seq`-token sequences.

Without `seq` the activations are left out, and the note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic, Label, Severity
from ctdsl.language.enums import ComputeModel
from ctdsl.model import payload as PL
from ctdsl.model.entities import Model, Spec
from ctdsl.results.solution import MemoryResult
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import memory as MEM
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import NumericError, value
from ctdsl.symbolic.dimensioned import DimExpr


@dataclass
class Fit:
    model: str
    dc: str
    parts: dict[str, DimExpr]  # weights, gradients, optimizer, activations (bytes per GPU)
    total: DimExpr
    capacity: DimExpr | None  # the device's memory; None: not given
    note: str


def fits(ctx: Context, models: list[str]) -> list[Fit]:
    out = []
    for name in models:
        model = ctx.spec.models[name]
        for dc in ctx.spec.dcs:
            out.append(_fit(ctx, model, dc))
    return out


def _fit(ctx: Context, model: Model, dc_name: str) -> Fit:
    dc = ctx.spec.dcs[dc_name]
    dev = ctx.spec.devices[dc.device]
    A = ctx.formulas
    notes = []
    rep = ctx.spec.replicas.get(dc.replica) if dc.replica else None
    q = lambda x, default: ctx.q(x, U.ONE) if x is not None else DimExpr(sp.Integer(default), U.ONE)  # noqa: E731
    if rep is not None:
        tp, pp, cp, ep = (q(getattr(rep, k), 1) for k in ("tp", "pp", "cp", "ep"))
        ranks = cp * ctx.q(dc.replicas, U.ONE)
        stage = int(value(q(rep.zero, 1), ctx.symbols.defaults()))
        micro = q(rep.micro_batch, 1)
        recompute, sp_on = str(rep.recompute), rep.sequence_parallel
        flash = rep.flash and rep.compute is ComputeModel.OPERATIONS  # the fused attention core keeps no scores
        share = ctx.field(rep, "recompute_share") if rep.recompute_share is not None else None
    else:
        tp = pp = cp = ep = D.one()
        ranks = DimExpr(sp.Integer(max(1, dc.workers)), U.ONE)
        stage, micro, recompute, sp_on, flash = 0, None, "none", False, False
        share = None
    if PL.full_shape(model):
        shard = MEM.model_shard(model, A, tp, pp, ep, D.one())
        expert_ranks = ranks * tp / ep if PL.is_moe(model) else ranks
    else:
        shard = MEM.Shard(A.get(model, "params") / (tp * pp), D.zero(U.ONE))
        expert_ranks = ranks
    parts = MEM.shard_states(shard, ranks, expert_ranks, stage)
    parts["activations"] = _activations(ctx, model, tp, pp, cp, micro, recompute, sp_on, flash, notes)
    if share is not None and recompute != "none":  # the layers `recompute` leaves out store all their activations
        kept = _activations(ctx, model, tp, pp, cp, micro, "none", sp_on, flash, [])
        parts["activations"] = share * parts["activations"] + (1 - share) * kept
    total = D.total(list(parts.values()), U.DATA)
    capacity = ctx.field(dev, "memory") if dev.memory is not None else None
    if capacity is None:
        notes.append(f"device '{dev.name}' gives no memory")
    notes.insert(0, f"ZeRO stage {stage} over the dc's data-parallel ranks")
    return Fit(model.name, dc_name, parts, total, capacity, "; ".join(notes))


def _activations(ctx: Context, model: Model, tp, pp, cp, micro, recompute: str, sp_on: bool, flash: bool, notes: list[str]) -> DimExpr:
    if not (PL.full_shape(model) and PL.has(model, "seq")):
        notes.append("activations left out: the model gives no seq (sequence length)")
        return D.zero(U.DATA)
    seq = ctx.shape(model, "seq")
    tokens = ctx.field(model, "tokens") if model.tokens is not None else None
    if micro is None:  # single-device workers: the step's tokens in one batch
        batch = tokens / seq if tokens is not None else D.one()
        microbatches = None
    else:
        batch = micro
        microbatches = tokens / (seq * micro) if tokens is not None else None
    try:
        return MEM.activations(
            seq, batch, ctx.shape(model, "width"), ctx.shape(model, "heads"), ctx.shape(model, "layers"),
            tp, sp_on, recompute, pp, microbatches, 1, cp, ctx.shape(model, "vocab"), flash,
        )
    except (ValueError, NumericError) as err:  # a degree given by a param: structural branches need numbers
        notes.append(f"activations left out: {err}")
        return D.zero(U.DATA)


def warnings(spec: Spec, memory: Sequence[MemoryResult]) -> list[Diagnostic]:
    """CT425 at each dc whose GPUs cannot hold their shard of a model, with the figures."""
    out = []
    for m in memory:
        if m.fits is not False:
            continue
        dc = spec.dcs[m.dc]
        parts = ", ".join(f"{k} {U.format_quantity(q.value, U.DATA)}" for k, q in m.parts.items() if q.value)
        rep = spec.replicas.get(dc.replica) if dc.replica else None
        out.append(
            Diagnostic(
                "CT425",
                f"a GPU of dc '{m.dc}' needs {U.format_quantity(m.total.value, U.DATA)} for model '{m.model}' "
                f"({parts}), more than its device's {U.format_quantity(m.capacity.value, U.DATA)}",
                dc.spans.get("device", dc.span),
                Severity.WARNING,
                label=f"{U.format_quantity(m.capacity.value, U.DATA)} of memory",
                secondary=(Label(rep.span, f"replica '{rep.name}'"),) if rep is not None else (),
                help="shard it: give the dc a replica with tp and pp (and a ZeRO stage), or recompute activations"
                if rep is None
                else "raise tp or pp, the ZeRO stage, or recomputation; or take a device with more memory",
            )
        )
    return out
