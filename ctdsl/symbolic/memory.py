"""Memory per GPU: the shard of the parameters it holds, their states, and activations.

Pure functions over dimensioned sympy (`DimExpr`): counts are dimensionless, and
every result is in bytes. A degree (tp, pp, dp, ...) may be a number or a symbol;
the only branches on a degree are structural (pp = 1 keeps both embedding tables
on one stage; interleaving), and those take a number. Formulas and sources:
parallelism.md sections 1.3 and 10.

Parameters a GPU holds (section 1.3, Megatron `theoretical_memory_usage.py`,
"most loaded model shard", and the MoE README's parallel folding):

    dense   (P_layers / pp + V d) / tp   (+ V d / tp more when untied and pp = 1)
    experts (L_moe / pp) (E / ep) m d f_e / etp

Model states per parameter held, with w, g, o bytes per parameter of weights,
gradients and optimiser states, N the ranks they are sharded over (ZeRO,
arXiv:1910.02054 section 5; N = dp cp for dense parameters, edp for experts):

    stage 0  w + g + o          stage 2  w + (g + o) / N
    stage 1  w + g + o / N      stage 3  (w + g + o) / N

DeepSpeed's mixed-precision Adam is w, g, o = 2, 2, 12 (16 bytes; ZeRO's
figures). Megatron keeps fp32 main gradients: 2, 4, 12 (18 bytes, or 6 + 12/N
with its distributed optimizer, which is stage 1).

Activations per layer (Korthikanti et al., arXiv:2205.05198; 16-bit activations,
s sequence, b micro-batch, d width, h heads, t = tp; MHA, f = 4d):

    none, no SP         s b d (10 + 24/t + 5 h s / (d t))   (eq. 2; eq. 1 at t = 1)
    none, SP            s b d / t (34 + 5 h s / d)          (eq. 4)
    selective, no SP    s b d (10 + 24/t)                   (Table 2)
    selective, SP       34 s b d / t                        (Table 2)
    full                2 s b d                             (Table 2)

With the attention core fused (FlashAttention), no s x s scores are stored: the
5 h s / d term goes under every mode (parallelism.md section 10).

The first pipeline stage holds pp micro-batches of L/pp layers, L layers' worth
(eq. 5), x (1 + (pp - 1)/(pp v)) interleaved over v chunks, x min(1, m/pp) with
fewer micro-batches m than stages; context parallelism divides s by cp; and
the embedding dropout, final norm and logits add s b d pp / t, plus
(4 s b d / t)(1 + V/d) when pp = 1 (section 4.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

from ctdsl import units as U
from ctdsl.model import payload as PL
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr, DimensionError

BYTE = DimExpr(sp.Integer(1), U.DATA)
RECOMPUTE = ("none", "selective", "full")


def count(x) -> DimExpr:
    """A dimensionless count from a DimExpr, a sympy expression or a number."""
    if isinstance(x, DimExpr):
        if x.dim != U.ONE:
            raise DimensionError(f"a count of {x.dim.describe()}: {x.e}")
        return x
    if isinstance(x, bool):
        raise TypeError("a bool is not a count")
    if isinstance(x, int):
        return DimExpr(sp.Integer(x), U.ONE)
    if isinstance(x, Fraction):
        return DimExpr(sp.Rational(x.numerator, x.denominator), U.ONE)
    if isinstance(x, sp.Expr):
        return DimExpr(x, U.ONE)
    raise TypeError(f"not a count: {x!r}")


def _number(x, what: str):
    """A degree a branch depends on, as a number."""
    e = count(x).e
    if not e.is_Number:
        raise ValueError(f"{what} must be a number here, not {e}")
    return e


# ---- what a GPU holds ---------------------------------------------------------------


@dataclass(frozen=True)
class Shard:
    """Parameters one GPU holds: dense (split by tp and pp) and routed experts (also by ep)."""

    dense: DimExpr
    experts: DimExpr

    @property
    def total(self) -> DimExpr:
        return self.dense + self.experts


def dense_shard(layer_params, embedding, tp=1, pp=1, untied=True) -> DimExpr:
    """Most-loaded dense shard: (P_layers/pp + V d)/tp, and another V d/tp when untied and pp = 1.

    layer_params: the dense weights of all the layers (attention, dense MLPs, shared experts,
    routers, norms; not the routed experts); embedding: one table, V d."""
    layers, emb, t, p = count(layer_params), count(embedding), count(tp), count(pp)
    out = (layers / p + emb) / t
    if untied and _number(pp, "pp") == 1:
        out = out + emb / t
    return out


def expert_shard(expert_layer_params, moe_layers, pp=1, ep=1, etp=1) -> DimExpr:
    """Routed experts a GPU holds: (L_moe/pp) x (E/ep) m d f_e / etp.

    expert_layer_params: the routed experts of one MoE layer, E m d f_e."""
    return count(moe_layers) / count(pp) * count(expert_layer_params) / (count(ep) * count(etp))


def shard(layer_params, embedding, tp=1, pp=1, untied=True, expert_layer_params=0, moe_layers=0, ep=1, etp=1) -> Shard:
    return Shard(dense_shard(layer_params, embedding, tp, pp, untied), expert_shard(expert_layer_params, moe_layers, pp, ep, etp))


def model_shard(model, A, tp=1, pp=1, ep=1, etp=1) -> Shard:
    """shard() of a model given by its full shape, its counts from ctdsl.model.payload in the
    algebra A (a Context's `formulas`: dimensioned sympy in the spec's params)."""
    if not PL.full_shape(model):
        raise ValueError(f"model '{model.name}' has no shape to cut a shard from")
    experts = PL.expert_layer_params(model, A)
    return shard(
        PL.layer_params(model, A), PL.embedding_params(model, A), tp, pp, not model.tied,
        experts if experts is not None else 0, PL.moe_layers(model, A) if experts is not None else 0, ep, etp,
    )


# ---- model states -------------------------------------------------------------------


@dataclass(frozen=True)
class Precision:
    """Bytes per parameter of weights, gradients and optimiser states."""

    weights: Fraction
    grads: Fraction
    optimizer: Fraction

    @property
    def total(self) -> Fraction:
        return self.weights + self.grads + self.optimizer


DEEPSPEED = Precision(Fraction(2), Fraction(2), Fraction(12))  # bf16 weights and grads; fp32 master, m, v
MEGATRON = Precision(Fraction(2), Fraction(4), Fraction(12))  # fp32 main gradients


def states(params, ranks, stage: int, precision: Precision = MEGATRON) -> dict[str, DimExpr]:
    """Weights, gradients and optimiser states of `params` parameters held, in bytes, under
    ZeRO stage 0..3 over `ranks` data-parallel ranks."""
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage is 0, 1, 2 or 3, not {stage}")
    p, n = count(params), count(ranks)
    w, g, o = (p * count(x) * BYTE for x in (precision.weights, precision.grads, precision.optimizer))
    return {
        "weights": w / n if stage >= 3 else w,
        "gradients": g / n if stage >= 2 else g,
        "optimizer": o / n if stage >= 1 else o,
    }


def shard_states(s: Shard, dense_ranks, expert_ranks, stage: int, precision: Precision = MEGATRON) -> dict[str, DimExpr]:
    """states() of the dense part over N_dense = dp cp ranks plus the experts over edp ranks."""
    dense = states(s.dense, dense_ranks, stage, precision)
    experts = states(s.experts, expert_ranks, stage, precision)
    return {k: dense[k] + experts[k] for k in dense}


# ---- activations --------------------------------------------------------------------


def layer_activations(seq, batch, width, heads, tp=1, sp_on=False, recompute="none", flash=False) -> DimExpr:
    """Activation bytes of one transformer layer on one GPU (Korthikanti, module docstring).

    flash: the attention core is one fused kernel (FlashAttention, arXiv:2205.14135), which
    keeps no s x s scores: the 5 h s / d term goes, as under selective recomputation
    (parallelism.md section 10); the rest of the layer's activations are as without it."""
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute is one of {', '.join(RECOMPUTE)}, not {recompute!r}")
    s, b, d, h, t = (count(x) for x in (seq, batch, width, heads, tp))
    sbd = s * b * d
    if recompute == "full":
        return 2 * sbd * BYTE
    scores = 0 if flash else 5 * h * s / d  # the stored s x s scores and softmax: none of it under selective recompute
    if sp_on:
        inner = 34 + scores if recompute == "none" else count(34)
        return sbd / t * inner * BYTE
    inner = 10 + 24 / t + (scores / t if recompute == "none" else 0)
    return sbd * inner * BYTE


def activations(
    seq, batch, width, heads, layers, tp=1, sp_on=False, recompute="none",
    pp=1, microbatches=None, interleave=1, cp=1, vocab=None, flash=False,
) -> DimExpr:
    """Activation bytes on the most-loaded GPU, the first pipeline stage (eq. 5 and section 4.3)."""
    s = count(seq) / count(cp)
    p = count(pp)
    out = layer_activations(s, batch, width, heads, tp, sp_on, recompute, flash) * count(layers)
    v = _number(interleave, "interleave")
    if v != 1:
        out = out * (1 + (p - 1) / (p * count(v)))
    if microbatches is not None:
        out = out * D.emin(count(1), count(microbatches) / p)
    if vocab is not None:
        sbd_t = s * count(batch) * count(width) / count(tp)
        extra = sbd_t * p
        if _number(pp, "pp") == 1:
            extra = extra + 4 * sbd_t * (1 + count(vocab) / count(width))
        out = out + extra * BYTE
    return out


# ---- all together -------------------------------------------------------------------


def per_gpu(s: Shard, dense_ranks, expert_ranks, stage: int, activation: DimExpr, precision: Precision = MEGATRON) -> dict[str, DimExpr]:
    """Weights, gradients, optimiser states, activations and their total, in bytes."""
    out = shard_states(s, dense_ranks, expert_ranks, stage, precision)
    if activation.dim != U.DATA:
        raise DimensionError(f"activations of {activation.dim.describe()}")
    out["activations"] = activation
    out["total"] = D.total(list(out.values()), U.DATA)
    return out


def headroom(total: DimExpr, capacity: DimExpr) -> DimExpr:
    """HBM left over: capacity - total (negative: the shard does not fit)."""
    return capacity - total
