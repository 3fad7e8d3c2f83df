"""Compute per operation: a layer's operations, each timed by its roofline (issue 27, item 2).

With `compute = operations` on a replica, one micro-batch of b sequences on one GPU of a
pipeline stage is the sum of its operations' times instead of FLOPs / (peak x efficiency).
Each operation has forward FLOPs F and bytes Q moved to and from memory, and takes

    t = max((F + F_half) / (peak x eff), Q / (mem_bw x mem_eff))        a GEMM
    t = Q / (mem_bw x mem_eff)                                         a memory-bound operation

where peak and eff are those of the operation's precision (`gemm_precision` for the linear
layers, `attention_precision` for the attention core: peak and efficiency, or peak_fp8 and
efficiency_fp8), and F_half is the device's `gemm_half`: the GEMM size at which a GEMM
reaches half its large-GEMM efficiency, eff(F) = eff x F / (F + F_half), so that a GEMM costs
its FLOPs plus F_half at the large-GEMM rate. The memory-bound operations' FLOPs (a few a
value) are under the ridge of the GPU's vector units, so their bytes time them (Calculon,
calculon-ai/calculon `calculon/llm/layers.py`, times the same operations on a vector engine
and adds their memory time).

A layer's operations, one micro-batch, one GPU (T = b s / cp tokens, h width, a heads and g
KV heads of d_h, f the MLP width, tp the tensor-parallel degree, beta the bytes of a value;
parallelism.md section 2 for the FLOPs, a GEMM of m x k by k x n moving beta (m k + k n + m n)):

    QKV            GEMM  m = T, k = h, n = (a + 2 g) d_h / tp
    attention      flash: one fused kernel, 2 c T s a d_h / tp FLOPs (c = 1 causal, 2 the
                   full square), beta (2 T a d_h + 2 b s g d_h) / tp bytes (Q and O, K and V);
                   otherwise (Megatron's 2022 kernels) the full square, through memory:
                   scores (GEMM, 2 T s a d_h / tp, writes N = b (a/tp) (s/cp) s scores),
                   softmax (reads and writes N: 2 beta N), dropout (reads, writes, a 1-byte
                   mask: (2 beta + 1) N), values (GEMM, 2 T s a d_h / tp, reads N)
    projection     GEMM  m = T, k = a d_h / tp, n = h
    MLP up         GEMM  m = T, k = h, n = f / tp (2 f / tp gated: gate and up)
    activation     memory: reads the up GEMM's output, writes T f / tp values
    MLP down       GEMM  m = T, k = f / tp, n = h
    norms, dropout memory: two norms (read, write) and two fused bias-dropout-adds (read the
    and residual   output and the residual, write the sum and a 1-byte mask; Megatron-LM's
                   `bias_dropout_add_fused_train`) of T h values, / tp with sequence
                   parallelism: (10 beta + 2 B) T h / r, r = tp with it, else 1

Tile and wave quantisation (a device with `sms`, `tile_m` and `tile_n`): a GEMM's m x n output
runs in tiles of tile_m x tile_n, one tile an SM at a time, in waves of `sms` tiles; the last
wave's idle SMs and the tiles' overhang are paid for. Its work is w = ceil(ceil(m / t_m)
ceil(n / t_n) / sms) sms t_m t_n / (m n) times its useful work, with the tile either way round,
whichever gives the smaller w (NVIDIA, "Matrix Multiplication Background User's Guide",
"Dimension Quantization Effects": an A100's 108 SMs run one 256 x 128 tile each at once). A
GEMM's FLOPs are multiplied by the mean of w over its three passes' outputs: the forward (m x n),
the input gradient (m x k) and the weight gradient (k x n). Every GEMM built by `gemm` pays it
(the linear layers, the router, the LM head); the attention core's batched GEMMs and the
experts' grouped GEMMs do not.

The embedding (the first stage: gather T rows, write them, 2 beta T h) and the LM head (the
last stage: a GEMM m = T, k = h, n = V / tp, and the cross-entropy reading the logits and
writing their gradient, 2 beta T V / tp) sit on the end stages (Narayanan et al.
arXiv:2104.04473 place them there; vTrain's predictor adds them to the first and last
stage). The backward pass of every operation is twice its forward (a GEMM's activation and
weight gradients, each of the forward's shape; an element-wise operation reads the
gradient and its saved input and writes a gradient: Calculon's convention), so a layer's
forward and backward take 3 x its forward. Recomputation: full, the forward of every layer
again; selective, the forward of the attention core (Korthikanti et al. arXiv:2205.05198).

Per micro-batch on the slowest stage, as terms: `compute` (the GEMMs of its layers),
`memory_bound` (the memory-bound operations of its layers), `end_stages` (what the
embedding and the LM head add to the slowest stage: max over the stages of L_i t_layer +
e_i, less L_max t_layer), `recompute`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import ComponentKey
from ctdsl.language.enums import Precision
from ctdsl.model import payload as PL
from ctdsl.model.entities import Model
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr

K = ComponentKey
GEMM, ATTENTION, MEMORY = "gemm", "attention", "memory"
# the operations of the attention core (recomputed by selective recomputation)
CORE = ("attention", "attention scores", "softmax", "attention dropout", "attention over values")


@dataclass(frozen=True)
class Op:
    """One operation of a layer: forward FLOPs and bytes on one GPU for one micro-batch."""

    name: str
    cls: str  # GEMM (linear layers), ATTENTION (the attention core's GEMMs) or MEMORY
    flops: DimExpr
    nbytes: DimExpr
    launches: DimExpr | int = 1  # GEMMs of one shape it stands for (per-expert GEMMs), each paying F_half


@dataclass(frozen=True)
class Rates:
    """What an operation is timed against."""

    gemm: DimExpr  # FLOP/s of a large linear-layer GEMM: peak x efficiency at its precision
    attention: DimExpr  # FLOP/s of a large attention GEMM
    half: DimExpr  # FLOP: F_half
    memory: DimExpr  # B/s: mem_bw x mem_efficiency


@dataclass(frozen=True)
class Waves:
    """Tile and wave quantisation (module docstring): the SMs and the output tile."""

    sms: DimExpr
    tm: DimExpr
    tn: DimExpr

    def waste(self, m: DimExpr, n: DimExpr) -> DimExpr:
        """Work done over useful work for an m x n output: whole waves of whole tiles, the tile
        either way round (the smaller)."""
        sms, tm, tn = self.sms, self.tm, self.tn

        def one(a: DimExpr, b: DimExpr) -> DimExpr:
            waves = D.ceiling(D.ceiling(m / a) * D.ceiling(n / b) / sms)
            return waves * sms * a * b / (m * n)

        return D.emin(one(tm, tn), one(tn, tm))


@dataclass(frozen=True)
class Dims:
    """The shape of one micro-batch of one layer on one GPU, dimensionless but beta."""

    T: DimExpr  # tokens a GPU computes: b s / cp
    b: DimExpr
    s: DimExpr
    h: DimExpr
    a: DimExpr
    g: DimExpr
    dh: DimExpr
    f: DimExpr
    V: DimExpr
    tp: DimExpr
    r: DimExpr  # the residual stream's split: tp with sequence parallelism, else 1
    beta: DimExpr  # B a value
    gated: bool
    causal_c: int  # c: 1 causal, 2 the full square
    flash: bool
    moe: "Moe | None" = None
    waves: Waves | None = None  # the device's tile and wave quantisation; None: none


@dataclass(frozen=True)
class Moe:
    """A MoE layer's routed experts on one GPU (module docstring, "MoE")."""

    E: DimExpr  # routed experts
    k: DimExpr  # experts a token is routed to
    fe: DimExpr  # an expert's MLP width
    shared: DimExpr | None  # the shared experts' MLP width; None: none
    ep: DimExpr
    Tg: DimExpr  # tokens the GPU routes: T / tp with sequence parallelism, else T
    load: DimExpr  # the most-loaded rank's tokens over the balanced: CF padded, min(1 + imbalance, CF), or 1 + imbalance
    pad: DimExpr  # the dispatch buffer over the routed copies: CF padded, else 1
    grouped: bool
    share: DimExpr  # MoE layers / layers


def _ops(x: DimExpr) -> DimExpr:
    return DimExpr(x.e, U.OPS)


def gemm(name: str, m: DimExpr, k: DimExpr, n: DimExpr, beta: DimExpr, waves: Waves | None = None) -> Op:
    """A GEMM of m x k by k x n: 2 m k n FLOPs, beta (m k + k n + m n) bytes; with `waves`, its
    FLOPs times the mean quantisation of its three passes' outputs (module docstring)."""
    flops = 2 * m * k * n
    if waves is not None:
        flops = flops * (waves.waste(m, n) + waves.waste(m, k) + waves.waste(k, n)) / 3
    return Op(name, GEMM, _ops(flops), beta * (m * k + k * n + m * n))


def attention_ops(x: Dims) -> list[Op]:
    """The forward operations of a layer but its MLP (the module docstring's table)."""
    T, beta = x.T, x.beta
    ops = [gemm("QKV", T, x.h, (x.a + 2 * x.g) * x.dh / x.tp, beta, x.waves)]
    qo = T * x.a * x.dh / x.tp  # Q (or O) values
    kv = x.b * x.s * x.g * x.dh / x.tp  # K (or V) values
    if x.flash:
        flops = 2 * x.causal_c * T * x.s * x.a * x.dh / x.tp
        ops.append(Op("attention", ATTENTION, _ops(flops), beta * (2 * qo + 2 * kv)))
    else:
        scores = (x.a / x.tp) * T * x.s  # b (a/tp) (s/cp) s
        half = _ops(2 * T * x.s * x.a * x.dh / x.tp)
        one = DimExpr(sp.Integer(1), U.DATA)
        ops += [
            Op("attention scores", ATTENTION, half, beta * (qo + kv + scores)),
            Op("softmax", MEMORY, D.zero(U.OPS), 2 * beta * scores),
            Op("attention dropout", MEMORY, D.zero(U.OPS), (2 * beta + one) * scores),
            Op("attention over values", ATTENTION, half, beta * (scores + kv + qo)),
        ]
    ops += [
        gemm("projection", T, x.a * x.dh / x.tp, x.h, beta, x.waves),
        Op("norms, dropout and residual adds", MEMORY, D.zero(U.OPS), (10 * beta + DimExpr(sp.Integer(2), U.DATA)) * T * x.h / x.r),
    ]
    return ops


def mlp_ops(x: Dims, f: DimExpr, name: str = "MLP") -> list[Op]:
    """A dense MLP of width f, split tp ways: up (gate and up when gated), activation, down."""
    T, beta = x.T, x.beta
    up = (2 if x.gated else 1) * f / x.tp
    return [
        gemm(f"{name} up", T, x.h, up, beta, x.waves),
        Op(f"{name} activation", MEMORY, D.zero(U.OPS), beta * (T * up + T * f / x.tp)),
        gemm(f"{name} down", T, f / x.tp, x.h, beta, x.waves),
    ]


def moe_ops(x: Dims, m: Moe) -> list[Op]:
    """A MoE layer's MLP on the most-loaded GPU of its expert-parallel group: the router, the
    permutation before the dispatch and after the combine, the local experts' GEMMs (grouped,
    or one per expert) on load x the balanced tokens, and the shared experts as a dense MLP."""
    beta, h = x.beta, x.h
    local = m.E / m.ep  # experts on the GPU
    rows = m.load * m.Tg * m.k  # token copies its experts compute
    up = (2 if x.gated else 1) * m.fe
    launches = 1 if m.grouped else local
    ops = [
        gemm("router", m.Tg, h, m.E, beta, x.waves),
        Op("permutation", MEMORY, D.zero(U.OPS), 4 * beta * m.pad * m.Tg * m.k * h),
        Op("experts up", GEMM, _ops(2 * rows * h * up), beta * (rows * h + local * h * up + rows * up), launches),
        Op("experts activation", MEMORY, D.zero(U.OPS), beta * rows * (up + m.fe)),
        Op("experts down", GEMM, _ops(2 * rows * m.fe * h), beta * (rows * m.fe + local * m.fe * h + rows * h), launches),
    ]
    if m.shared is not None:
        ops += mlp_ops(x, m.shared, "shared experts")
    return ops


def layer_ops(x: Dims) -> list[Op]:
    """A dense layer's forward operations."""
    return attention_ops(x) + mlp_ops(x, x.f)


def embedding_ops(x: Dims) -> list[Op]:
    """The first stage's extra: the embedding lookup."""
    return [Op("embedding", MEMORY, D.zero(U.OPS), 2 * x.beta * x.T * x.h)]


def head_ops(x: Dims) -> list[Op]:
    """The last stage's extra: the LM head GEMM and the cross-entropy over its logits."""
    return [
        gemm("LM head", x.T, x.h, x.V / x.tp, x.beta, x.waves),
        Op("cross-entropy", MEMORY, D.zero(U.OPS), 2 * x.beta * x.T * x.V / x.tp),
    ]


def op_time(op: Op, rates: Rates) -> DimExpr:
    """The operation's forward time by its roofline (module docstring)."""
    memory = op.nbytes / rates.memory
    if op.cls == MEMORY:
        return memory
    peak = rates.gemm if op.cls == GEMM else rates.attention
    return D.emax((op.flops + op.launches * rates.half) / peak, memory)


def forward(ops: list[Op], rates: Rates, classes: tuple[str, ...] | None = None, names: tuple[str, ...] | None = None) -> DimExpr:
    """The forward time of the operations of the given classes (or names)."""
    chosen = [o for o in ops if (classes is None or o.cls in classes) and (names is None or o.name in names)]
    return D.total([op_time(o, rates) for o in chosen], U.TIME)


def rates(ctx: Context, dev, rep) -> Rates:
    """The rates of a replica's operations on `dev`."""

    def peak(p: Precision) -> DimExpr:
        if p is Precision.FP8:
            eff = ctx.field(dev, "efficiency_fp8") if dev.efficiency_fp8 is not None else ctx.field(dev, "efficiency")
            return ctx.field(dev, "peak_fp8") * eff
        return ctx.field(dev, "peak") * ctx.field(dev, "efficiency")

    half = ctx.field(dev, "gemm_half") if dev.gemm_half is not None else D.zero(U.OPS)
    mem_eff = ctx.field(dev, "mem_efficiency") if dev.mem_efficiency is not None else D.one()
    return Rates(peak(rep.gemm_precision), peak(rep.attention_precision), half, ctx.field(dev, "mem_bw") * mem_eff)


def dims(ctx: Context, model: Model, rep, tp: DimExpr, cp: DimExpr, ep: DimExpr, b: DimExpr, dev=None) -> Dims:
    sh = lambda key: ctx.shape(model, key)  # noqa: E731
    s, h, a = sh("seq"), sh("width"), sh("heads")
    dh = sh("head_dim") if PL.has(model, "head_dim") else h / a
    T = b * s / cp
    r = tp if rep.sequence_parallel else D.one()
    return Dims(
        T=T, b=b, s=s, h=h, a=a, g=sh("kv_heads"), dh=dh, f=sh("mlp"), V=sh("vocab"), tp=tp,
        r=r, beta=ctx.field(model, "bytes_per_value"),
        gated=model.gated, causal_c=PL.attention_factor(model) if rep.flash else 2, flash=rep.flash,
        moe=_moe(ctx, model, rep, ep, T / r) if PL.is_moe(model) else None,
        waves=_waves(ctx, dev),
    )  # fmt: skip


def _waves(ctx: Context, dev) -> Waves | None:
    """The device's tile and wave quantisation, where it gives sms (and its tile: CT441)."""
    if dev is None or dev.sms is None or dev.tile_m is None or dev.tile_n is None:
        return None
    return Waves(ctx.field(dev, "sms"), ctx.field(dev, "tile_m"), ctx.field(dev, "tile_n"))


def _moe(ctx: Context, model: Model, rep, ep: DimExpr, Tg: DimExpr) -> Moe:
    """The routed tokens' load and padding from the replica's capacity_factor, pad_to_capacity
    and moe_imbalance (module docstring, "MoE")."""
    sh = lambda key: ctx.shape(model, key)  # noqa: E731
    excess = D.one() + (ctx.field(rep, "moe_imbalance") if rep.moe_imbalance is not None else D.zero(U.ONE))
    if rep.capacity_factor is None:
        load, pad = excess, D.one()
    else:
        cf = ctx.field(rep, "capacity_factor")
        load, pad = (cf, cf) if rep.pad_to_capacity else (D.emin(excess, cf), D.one())
    shared = sh("shared_mlp") if PL.has(model, "shared_mlp") else None
    return Moe(
        E=sh("experts"), k=sh("experts_per_token"), fe=sh("expert_mlp"), shared=shared, ep=ep, Tg=Tg,
        load=load, pad=pad, grouped=rep.grouped_gemm, share=PL.moe_layers(model, ctx.formulas) / sh("layers"),
    )  # fmt: skip


@dataclass(frozen=True)
class StageCompute:
    """One micro-batch on the slowest stage, by term, and what it was made of."""

    per_micro: dict[ComponentKey, DimExpr]  # compute, memory_bound, end_stages, recompute
    forward: DimExpr  # the forward of one micro-batch on the slowest stage (without recomputation)
    layer_forward: DimExpr  # t_layer / 3: one layer's forward
    ops: tuple[Op, ...]  # a layer's forward operations
    wgrad: tuple[DimExpr, ...] = ()  # per layer: the weight-gradient GEMMs of its column-parallel layers (QKV, MLP up)


def stage_compute(x: Dims, r: Rates, stages: "Stages", recompute: str) -> StageCompute:
    """The per-micro-batch terms of the slowest stage (module docstring)."""
    ops = attention_ops(x)
    dense, moe = mlp_ops(x, x.f), moe_ops(x, x.moe) if x.moe is not None else []
    share = x.moe.share if x.moe is not None else D.zero(U.ONE)  # the MoE layers' share of a stage's layers

    def mixed(classes):
        mlp = forward(dense, r, classes) * (1 - share) + (forward(moe, r, classes) * share if moe else D.zero(U.TIME))
        return forward(ops, r, classes) + mlp

    gemms, memory = mixed((GEMM, ATTENTION)), mixed((MEMORY,))
    layer = gemms + memory
    emb, head = forward(embedding_ops(x), r), forward(head_ops(x), r)
    L = stages.most
    # per stage, forward and backward: 3 x (its layers' forward + its end's), each over L t_layer
    # (the difference taken per stage, so that a stage of L layers adds exactly 0)
    first = (stages.first - L) * layer + emb + (1 - stages.split) * head
    last = (stages.last - L) * layer + head
    middle = (stages.middle - L) * layer
    ends = 3 * D.emax(first, last, middle)
    per: dict[ComponentKey, DimExpr] = {K.COMPUTE: 3 * L * gemms, K.MEMORY_BOUND: 3 * L * memory}
    if ends != 0:
        per[K.END_STAGES] = ends
    if recompute == "full":
        per[K.RECOMPUTE] = L * layer
    elif recompute == "selective":
        per[K.RECOMPUTE] = L * forward(ops, r, names=CORE)
    # a weight-gradient GEMM has its forward's shape, so its time is the forward's (overlaps.py)
    up = forward(dense, r, names=("MLP up",)) * (1 - share) + (forward(moe, r, names=("experts up",)) * share if moe else D.zero(U.TIME))
    wgrad = (forward(ops, r, names=("QKV",)), up)
    return StageCompute(per, L * layer + D.emax(first, last, middle), layer, tuple(ops + dense + moe), wgrad)


@dataclass(frozen=True)
class Stages:
    """The layers of the first, last and other stages, the most any holds, and whether there
    are several stages (split = 1 with pp > 1, else 0: one stage holds the embedding and the head)."""

    first: DimExpr
    last: DimExpr
    middle: DimExpr
    most: DimExpr
    split: DimExpr


__all__ = ["Op", "Rates", "Dims", "Stages", "StageCompute", "gemm", "layer_ops", "embedding_ops", "head_ops", "op_time", "forward", "rates", "dims", "stage_compute"]
