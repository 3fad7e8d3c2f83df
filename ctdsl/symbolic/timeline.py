"""The inner step of a replica: compute, recomputation, model-parallel traffic, the pipeline
bubble and the optimiser, as exact expressions (parallelism.md sections 2 to 7 and 11).

It applies to a dc of replicas whose model gives its shape and sequence length s
(`seq`): then a replica's step is m = tokens / (b s) micro-batches of b sequences
through pp stages (1F1B, or interleaved over v model chunks per GPU). Per
micro-batch on the most-loaded stage (one GPU):

- t_c = the step's compute / m: forward t_c / 3 and backward 2 t_c / 3 (the FLOPs
  per token are the model's, 6 P or the full form with attention; the compute is
  the replica's FLOPs over its tp pp cp GPUs at peak x efficiency);
- recomputation t_r: full, one more forward (t_c / 3); selective, the forward of the
  attention core, t_c x 2 c L s (h d_h) / F_tok (Korthikanti et al. arXiv:2205.05198,
  eqs. 7 and 8); none, 0;
- the tensor, context and expert parallel traffic on the critical path
  (`traffic.py`): t_tp, t_cp, t_ep.

Per step (Narayanan et al. arXiv:2104.04473 section 3.4, eq. 1, with section 2.2.2 for
v; Calculon's `_compute_batch_stats` for what is exposed):

    compute            m t_c
    recompute          m t_r
    tensor parallel    m t_tp      (and context, expert parallel alike)
    pipeline bubble    (pp - 1) / v x (t_c + t_r + t_tp + t_cp + t_ep + t_g - the end stages' extra)
    pipeline parallel  (2 v m + 2 (pp - 1)) (alpha + b (s/cp) d beta / tp / W)
    optimiser          Megatron's optimiser step's passes over memory: 38 B per
                       parameter a GPU updates (the gradient norm, Adam, the copy to the
                       16-bit weights; the parameters over the dc's cp R data-parallel
                       ranks under ZeRO 1 to 3) and 4 B per parameter it holds (the
                       gradient buffer zeroed), / (mem_bw x mem_efficiency; mem_bw
                       alone with compute = block)
    parameter gathers  ZeRO-3 only: the dense shard all-gathered among the dc's cp R
                       ranks before each micro-batch's forward and backward, prefetched
                       layer by layer: t_g = max(T_ag / L_st, T_ag - t_f) + max(T_ag / L_st,
                       T_ag - t_b) per micro-batch, the bubble's micro-batches too (derived:
                       the gather of layer i + 1 hides behind the compute of layer i)

Their sum is the inner step; the data-parallel sync comes on top (`exposure.py`).
The backward pass of the last micro-batch, t_b + t_r, is the window a sync that
overlaps the backward pass can hide in (parallelism.md section 7: only the last
micro-batch's gradients are final during the step).

Unlike dcs (other devices, other replica counts): each component is the slowest
dc's, so the inner step is an upper bound where different dcs bind different
components; the closed-form notes say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import INNER, ComponentKey, of
from ctdsl.language.enums import ComputeModel
from ctdsl.model.entities import Model
from ctdsl.model import payload as PL
from ctdsl.symbolic import compute_ops as OPS
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import memory as MEM
from ctdsl.symbolic import overlaps as OV
from ctdsl.symbolic import traffic as TR
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import NumericError, value
from ctdsl.symbolic.dimensioned import DimExpr, per_dc_max

K = ComponentKey
# The optimiser step's passes over memory, after Megatron-LM's mixed-precision optimiser
# (megatron/core/optimizer/optimizer.py, MixedPrecisionOptimizer.step and zero_grad; w, g, o =
# 2, 4, 12 B a parameter: 16-bit weights, fp32 main gradients, fp32 master weights and Adam's
# two moments), per parameter a GPU updates:
#   the gradient norm for clipping (clip_grad_norm_fp32) reads the gradient       g       4 B
#   Adam (multi-tensor) reads the gradient, master, m and v, writes master, m, v   g + 2 o 28 B
#   the master weights are copied to the 16-bit model weights (read, write)       o/3 + w 6 B
# and, per parameter whose gradient the GPU holds (all of its shard's, or its ZeRO 2-3 share),
# the gradient buffer is zeroed for the next step (zero_grad_buffer): g = 4 B. All at
# mem_bw x mem_efficiency (with compute = operations; mem_bw with compute = block).
_P = MEM.MEGATRON
_UPDATE = _P.grads + (_P.grads + 2 * _P.optimizer) + (_P.optimizer / 3 + _P.weights)
UPDATE_BYTES = sp.Rational(_UPDATE.numerator, _UPDATE.denominator)  # 38 B per parameter updated
ZEROED_BYTES = sp.Rational(_P.grads.numerator, _P.grads.denominator)  # 4 B per parameter held
# With `loss_scaling` (fp16 with a loss scale, Megatron's --fp16, whose gradient buffer is 16-bit:
# --accumulate-allreduce-grads-in-fp32 is off unless bf16), Megatron's Float16OptimizerWithFloat16Params
# (megatron/optimizer/optimizer.py) also, per parameter a GPU updates:
#   copies the 16-bit gradient to the fp32 main gradient (_copy_model_grads_to_main_grads:
#   main_param.grad = model_param.main_grad.float(), read w, write g)                      w + g   6 B
#   unscales it in place and checks it for inf and NaN (_unscale_main_grads_and_check_for_nan:
#   torch._amp_foreach_non_finite_check_and_unscale_, read g, write g)                      2 g     8 B
# and zeroes a 16-bit gradient buffer (w = 2 B a parameter held) in place of the fp32 one (g = 4 B).
_SCALED = _P.weights + 3 * _P.grads
SCALED_BYTES = sp.Rational(_SCALED.numerator, _SCALED.denominator)  # 14 B more per parameter updated
SCALED_ZEROED = sp.Rational(_P.weights.numerator, _P.weights.denominator)  # 2 B per parameter held


def applies(spec, model) -> bool:
    """The timeline needs replicas and a model with its full shape and seq."""
    return spec.has_replicas and PL.full_shape(model) and PL.has(model, "seq")


@dataclass
class DcStep:
    """One dc's inner step."""

    micro: DimExpr  # m, micro-batches per step
    per_micro: dict[ComponentKey, DimExpr]  # t_c, t_r, t_tp, t_cp, t_ep: per micro-batch on one stage
    components: dict[ComponentKey, DimExpr]  # per step
    window: DimExpr  # the backward pass of the last micro-batch: t_b + t_r
    traffic: list[TR.Traffic]
    pp: DimExpr
    v: DimExpr  # virtual stages
    exposures: dict = field(default_factory=dict)  # key -> the Exposure of an overlapped component (overlaps.py)


@dataclass
class Timeline:
    """The inner step of every dc, and the slowest dc's components."""

    dcs: dict[str, DcStep]
    components: dict[ComponentKey, DimExpr]  # per step, each the slowest dc's
    inner: DimExpr
    per_dc: dict[str, DimExpr]  # each dc's inner step (what a replica computes, for stragglers and the simulation)
    window: DimExpr
    notes: list[str] = field(default_factory=list)
    exposures: dict = field(default_factory=dict)  # key -> the Exposure of an overlapped component (overlaps.py)

    @property
    def micro(self) -> DimExpr:
        return next(iter(self.dcs.values())).micro


def build(ctx: Context, model: Model, compute: C.Compute, gather: DimExpr | None, labels: dict) -> Timeline:
    """`gather` is the time of one all-gather of a GPU's parameter shard among its dc's data-parallel
    ranks (ZeRO-3), or None where the replicas do not shard their parameters."""
    notes: list[str] = []
    steps = {dc: _dc_step(ctx, model, dc, t, compute, gather, notes) for dc, t in compute.per_dc.items()}
    names = [k for k in INNER if any(k in s.components for s in steps.values())]
    comps = {}
    for k in names:
        per = {dc: s.components.get(k, D.zero(U.TIME)) for dc, s in steps.items()}
        comps[k] = per_dc_max(per, of(k).label + " in dc {}", labels)
    per_dc = {dc: D.total(list(s.components.values()), U.TIME) for dc, s in steps.items()}
    if len({tuple(s.components.items()) for s in steps.values()}) > 1:
        notes.append("the dcs differ: each component is the slowest dc's, an upper bound where different dcs bind different components")
    window = D.emin(*[s.window for s in steps.values()]) if len({s.window for s in steps.values()}) > 1 else next(iter(steps.values())).window
    exposures = {k: x for st in steps.values() for k, x in st.exposures.items()}
    return Timeline(steps, comps, D.total(list(comps.values()), U.TIME), per_dc, window, notes, exposures)


def _sm_share(ctx: Context, link, dev) -> DimExpr:
    """The share of the device's SMs a collective on `link` holds while it runs (its channels over
    the device's sms, at most 1: overlaps.py); 0 where either gives none."""
    if link.channels is None or dev.sms is None:
        return D.zero(U.ONE)
    return D.emin(D.one(), ctx.field(link, "channels") / ctx.field(dev, "sms"))


def _dc_step(ctx: Context, model: Model, dc: str, compute: DimExpr, whole: C.Compute, gather: DimExpr | None, notes: list[str]) -> DcStep:
    spec = ctx.spec
    d = spec.dcs[dc]
    rep = spec.replicas[d.replica]
    dev = spec.devices[d.device]
    rate = ctx.field(dev, "peak") * ctx.field(dev, "efficiency")
    links = TR.ReplicaLinks(ctx, dc, notes)
    stage_layers = ctx.shape(model, "layers") * ctx.q(rep.tp, U.ONE) * C.shard(ctx, model)
    tr = TR.ReplicaTraffic(ctx, model, dc, links, stage_layers, rate)
    # a replica's share of a split batch, in tokens: its FLOPs over the FLOPs per token
    tokens = ctx.field(model, "tokens") if model.batch_tokens is None else whole.split[dc] / ctx.formulas.get(model, "flops_per_token")
    micro = tokens / (tr.b * tr.s)
    if rep.compute is ComputeModel.OPERATIONS:
        x = OPS.dims(ctx, model, rep, tr.tp, tr.cp, tr.ep, tr.b, dev)
        sc = OPS.stage_compute(x, OPS.rates(ctx, dev, rep), _stages(ctx, model, rep, tr.pp, stage_layers), str(rep.recompute))
        per_micro = dict(sc.per_micro)
        t_r = per_micro.get(K.RECOMPUTE, D.zero(U.TIME))
        t_c = D.total([v for k, v in per_micro.items() if k is not K.RECOMPUTE], U.TIME)
    else:
        t_c = compute / micro
        t_r = _recompute(ctx, model, str(rep.recompute), t_c, tr)
        per_micro = {K.COMPUTE: t_c}
        if t_r != 0:
            per_micro[K.RECOMPUTE] = t_r
    if K.RECOMPUTE in per_micro and rep.recompute_share is not None:  # only that share of the layers recomputes
        t_r = per_micro[K.RECOMPUTE] = per_micro[K.RECOMPUTE] * ctx.field(rep, "recompute_share")
    traffic = [t for t in (tr.tensor(), tr.context(), tr.expert()) if t is not None]
    for t in traffic:
        per_micro[t.kind] = t.time
    exposures = {}
    if rep.tp_comm_overlap and K.TENSOR_PARALLEL in per_micro:  # overlaps.py
        per_micro[K.TENSOR_PARALLEL] = OV.tensor(per_micro[K.TENSOR_PARALLEL], t_c + t_r, tr.tp)
        exposures[K.TENSOR_PARALLEL] = OV.exposure("the GEMMs of each micro-batch", micro * (t_c + t_r), OV.TP_RULE)
    elif rep.tp_async_backward and rep.compute is ComputeModel.OPERATIONS and K.TENSOR_PARALLEL in per_micro:  # overlaps.py: Megatron's asynchronous backward collectives
        sp_on = bool(rep.sequence_parallel)
        (tp_link,) = [t.link for t in traffic if t.kind is K.TENSOR_PARALLEL]
        f = _sm_share(ctx, spec.links[tp_link.link], dev)
        per_micro[K.TENSOR_PARALLEL] = OV.backward_async(per_micro[K.TENSOR_PARALLEL], 4 + 2 * tr.again + tr.regather, sp_on, sc.wgrad, tr.stage_layers, tr.regather, f)
        behind = "the weight- and input-gradient GEMMs of the column-parallel layers" if sp_on else "the weight-gradient GEMMs of the column-parallel layers"
        window = (1 + tr.regather) * D.total(list(sc.wgrad), U.TIME) if sp_on else D.total(list(sc.wgrad), U.TIME)
        exposures[K.TENSOR_PARALLEL] = OV.exposure(behind, micro * tr.stage_layers * window, OV.ASYNC_RULE)
    if gather is not None:  # ZeRO-3: every micro-batch, the bubble's ones too, gathers before its forward and backward
        t_f, t_b = t_c / 3, 2 * t_c / 3 + t_r
        one_layer = gather / stage_layers
        per_micro[K.PARAMETER_GATHERS] = D.emax(one_layer, gather - t_f) + D.emax(one_layer, gather - t_b)
    comps = {k: micro * x for k, x in per_micro.items()}
    traffic = [replace(t, sent=micro * t.sent, busy=micro * t.busy) for t in traffic]  # per step
    slot = D.total(list(per_micro.values()), U.TIME)
    # the fill and drain pass through the other stages: the slowest stage's end-stage work (the LM
    # head's, compute = operations) sets the steady state's pace but is not in the bubble's slots
    # (a pipeline of identical micro-batches takes sum_i t_i + (m - 1) max_i t_i; the other end's
    # smaller extra, the embedding's lookup, is left out with it)
    bubble = (tr.pp - 1) / tr.v * (slot - per_micro.get(K.END_STAGES, D.zero(U.TIME)))
    if bubble != 0:
        comps[K.PIPELINE_BUBBLE] = bubble
    pipe = tr.pipeline(micro)
    if pipe is not None:
        comps[K.PIPELINE_PARALLEL] = pipe.time
        if rep.overlap_p2p:  # overlaps.py
            one, on = pipe.link.latency + pipe.per_micro / pipe.link.bandwidth, TR.indicator(tr.pp)
            comps[K.PIPELINE_PARALLEL] = on * OV.pipeline(one, 2 * tr.v * micro, 2 * (tr.pp - 1), micro * (t_c + t_r))
            exposures[K.PIPELINE_PARALLEL] = OV.exposure("the compute of the steady state's micro-batches", micro * (t_c + t_r), OV.P2P_RULE)
        traffic.append(pipe)
    opt = _optimiser(ctx, model, dc, dev, rep, notes)
    if opt is not None:
        comps[K.OPTIMISER] = opt
    window = 2 * t_c / 3 + t_r
    return DcStep(micro, per_micro, comps, window, traffic, tr.pp, tr.v, exposures)


def _stages(ctx: Context, model: Model, rep, pp: DimExpr, most: DimExpr) -> OPS.Stages:
    """The layers of the first, last and other pipeline stages (uneven ends as given)."""
    L = ctx.shape(model, "layers")
    ends = {k: ctx.q(getattr(rep, k), U.ONE) for k in ("first_stage_layers", "last_stage_layers") if getattr(rep, k) is not None}
    middle = (L - D.total(list(ends.values()), U.ONE)) / (pp - len(ends)) if ends else L / pp
    first, last = ends.get("first_stage_layers", middle), ends.get("last_stage_layers", middle)
    return OPS.Stages(first, last, middle, most, TR.indicator(pp))


def _recompute(ctx: Context, model: Model, kind: str, t_c: DimExpr, tr: TR.ReplicaTraffic) -> DimExpr:
    if kind == "full":
        return t_c / 3
    if kind == "none":
        return D.zero(U.TIME)
    c = PL.attention_factor(model)
    core = 2 * c * tr.L * tr.s * tr.heads * tr.dh  # forward FLOPs of the attention core per token
    per_token = ctx.formulas.get(model, "flops_per_token")
    return t_c * DimExpr(core.e, U.OPS) / per_token


def _optimiser(ctx: Context, model: Model, dc: str, dev, rep, notes: list[str]) -> DimExpr | None:
    if dev.mem_bw is None:
        note = f"device '{dev.name}' gives no mem_bw: the optimiser step is left out"
        if note not in notes:
            notes.append(note)
        return None
    q = lambda x: ctx.q(x, U.ONE) if x is not None else D.one()  # noqa: E731
    tp, pp, cp, ep = q(rep.tp), q(rep.pp), q(rep.cp), q(rep.ep)
    shard = MEM.model_shard(model, ctx.formulas, tp, pp, ep, D.one())
    ranks = cp * ctx.q(ctx.spec.dcs[dc].replicas, U.ONE)
    try:
        stage = int(value(q(rep.zero).e, ctx.symbols.defaults())) if rep.zero is not None else 1
    except NumericError:  # pragma: no cover - a ZeRO stage is checked
        stage = 1
    dense, experts = shard.dense, shard.experts
    held = dense + experts  # the gradient buffer: the whole shard's, but under ZeRO 2 and 3 (below)
    if stage >= 1:
        dense = dense / ranks
        experts = experts / (ranks * tp / ep) if PL.is_moe(model) else experts
    params = dense + experts
    if stage >= 2:  # the gradients sharded too
        held = params
    if rep.loss_scaling:
        moved = DimExpr(params.e * (UPDATE_BYTES + SCALED_BYTES) + held.e * SCALED_ZEROED, U.DATA)
    else:
        moved = DimExpr(params.e * UPDATE_BYTES + held.e * ZEROED_BYTES, U.DATA)
    # the device's mem_efficiency where the replica times its operations by their rooflines (compute = block reads none of their fields)
    mem_eff = ctx.field(dev, "mem_efficiency") if dev.mem_efficiency is not None and rep.compute is ComputeModel.OPERATIONS else D.one()
    return moved / (ctx.field(dev, "mem_bw") * mem_eff)
