"""An inference instance's steps as rooflines, exact in the params (docs/serving.md).

The conventions are the sister simulator's (BrendanJamesLynskey/Disaggregated_Inference_Sim,
hardware.py and examples/results.md), so that its published step times reproduce:

- the weights a step reads are the ones in a matmul, M = P - V d (the layers and the LM
  head; the input embedding is a lookup), plus one embedding row (d v) per token; a tied
  model reads its one table as the head, M = P; a mixture-of-experts model multiplies by
  its active weights (P_act) and reads its fixed weights and the experts its tokens are
  expected to touch, E (1 - (1 - k/E)^tokens) of the E a layer (uniform routing);
- a prefill of n prompts of s tokens: FLOPs 2 M n s (the LM head on every prompt token,
  as a plain forward pass computes it) plus causal attention, QK^T and AV at each
  position c = 1..s, 2 L d s (s + 1); bytes M v + n s d v + n s k (its KV written);
- a decode step of b sequences at context c each: FLOPs 2 M b + 4 L d b (c + 1) (each new
  token attends to its context and to itself); bytes M v + b d v + b (c + 1) k;
- time on the instance's g = tp x pp GPUs: max(FLOPs / (g peak efficiency),
  bytes / (g mem_bw mem_efficiency)) + the per-step overhead; plus, when the instance
  names a scale-up link, two ring all-reduces of the step's activations per layer
  (Megatron-LM, arXiv:1909.08053; 2 (tp - 1)/tp S / B + 2 (tp - 1) latency each, NCCL's
  ring) and one activation hop per pipeline boundary, and for an MoE model with ep > 1 an
  all-to-all dispatch and combine per MoE layer, 2 k S (ep - 1)/ep / B + (ep - 1) latency
  each (GShard, arXiv:2006.16668), not overlapped;
- the KV cache fits beside the weights: floor((g memory kv_memory - P v) / k) tokens;
- chunked prefill (`batching = chunked`, Sarathi-Serve, arXiv:2403.02310): a step carries
  b decode sequences holding X positions and a chunk of m prompt tokens at offset p of n
  prompts: FLOPs 2 M (b + n m) + 4 L d X + 2 L d n m (2 p + m + 1) (the chunk attends to
  the p positions before it and causally within itself), bytes the weights once, (b + n m)
  d v, X k read, n m k written and n p k of the chunk's earlier KV read. A decode step is
  this step with no chunk, a prefill with one chunk at offset 0, so the sums over a
  prompt's chunks give its unchunked FLOPs exactly and its bytes plus a weight read and
  the earlier KV per further chunk.

k is the model's KV bytes per token, 2 L g_kv d_h v (ctdsl.model.payload).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.language.serving import Batching
from ctdsl.model import payload as PL
from ctdsl.model.serving import Instance
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr


FLOP = DimExpr(sp.Integer(1), U.OPS)  # a count of operations, as a FLOP count


def field(ctx: Context, entity, kind: str, name: str) -> DimExpr:
    """A checked field of a serving entity, with its schema dimension."""
    return ctx.q(getattr(entity, name), S.KINDS[kind][name].dim)


@dataclass(frozen=True)
class InstanceForms:
    """What an instance's steps read: the model's sizes and the GPUs' rates, dimensioned."""

    name: str
    gpus: DimExpr  # tp x pp
    tp: DimExpr
    pp: DimExpr
    compute_rate: DimExpr  # g peak efficiency, FLOP/s
    memory_rate: DimExpr  # g mem_bw mem_efficiency, B/s
    overhead: DimExpr  # s per step
    streamed: DimExpr  # M v: weight bytes a step reads in full
    matmul_params: DimExpr  # M
    weight_bytes: DimExpr  # P v, resident
    row: DimExpr  # d v, one embedding row
    kv: DimExpr  # k, KV bytes per token
    layers: DimExpr
    width: DimExpr
    memory: DimExpr  # g memory kv_memory
    max_batch: DimExpr
    prefill_tokens: DimExpr
    link_bw: DimExpr | None  # the scale-up link's, when named
    link_latency: DimExpr | None
    energy_per_flop: DimExpr | None = None  # J/FLOP, the device's
    energy_per_byte: DimExpr | None = None  # J/B of memory traffic
    static_power: DimExpr | None = None  # W, all the instance's GPUs
    ep: DimExpr | None = None  # expert-parallel degree of an MoE model; None: dense
    routed: DimExpr | None = None  # experts a token is sent to, k
    moe_layers: DimExpr | None = None
    experts: DimExpr | None = None  # routed experts a layer, E
    expert_bytes: DimExpr | None = None  # all the routed experts' weights, bytes (in `streamed`)
    chunk: DimExpr | None = None  # prompt tokens a step carries (chunked batching); None: whole prompts

    def weights_read(self, tokens: DimExpr) -> DimExpr:
        """Weight bytes a step over `tokens` tokens reads: all of them for a dense model; for an MoE one the
        fixed part and the experts its tokens are expected to touch, E (1 - (1 - k/E)^tokens) of E a layer."""
        if self.experts is None:
            return self.streamed
        untouched = DimExpr(((1 - self.routed / self.experts).e) ** tokens.e, U.ONE)
        return self.streamed - self.expert_bytes * untouched

    @property
    def kv_capacity(self) -> DimExpr:
        """Tokens of KV cache that fit beside the weights."""
        return DimExpr(sp.floor(((self.memory - self.weight_bytes) / self.kv).e), U.ONE)

    def roofline(self, flops: DimExpr, nbytes: DimExpr) -> DimExpr:
        return D.emax(flops / self.compute_rate, nbytes / self.memory_rate)

    def comm(self, tokens: DimExpr) -> DimExpr:
        """The tp all-reduces and pp hops of a step over `tokens` tokens; zero without a scale-up link."""
        if self.link_bw is None:
            return D.zero(U.TIME)
        act = tokens * self.row  # the activations of the step, bytes
        tp_m1 = self.tp - 1
        ring = 2 * tp_m1 / self.tp * act / self.link_bw + 2 * tp_m1 * self.link_latency
        hops = (self.pp - 1) * (self.link_latency + act / self.link_bw)
        out = 2 * self.layers * ring + hops
        if self.ep is not None:  # dispatch and combine: each token to its k experts and back (GShard, arXiv:2006.16668)
            ep_m1 = self.ep - 1
            out = out + 2 * self.moe_layers * (self.routed * act * ep_m1 / self.ep / self.link_bw + ep_m1 * self.link_latency)
        return out

    def prefill_flops(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        return (2 * self.matmul_params * prompts * s + 2 * self.layers * self.width * prompts * s * (s + 1)) * FLOP

    def prefill_bytes(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        return self.weights_read(prompts * s) + prompts * s * (self.row + self.kv)

    def prefill(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        """One prefill step over `prompts` prompts of `s` tokens."""
        return self.roofline(self.prefill_flops(prompts, s), self.prefill_bytes(prompts, s)) + self.overhead + self.comm(prompts * s)

    def decode_flops(self, b: DimExpr, c: DimExpr) -> DimExpr:
        return (2 * self.matmul_params * b + 4 * self.layers * self.width * b * (c + 1)) * FLOP

    def decode_bytes(self, b: DimExpr, c: DimExpr) -> DimExpr:
        return self.weights_read(b) + b * self.row + b * (c + 1) * self.kv

    def decode(self, b: DimExpr, c: DimExpr) -> DimExpr:
        """One decode step of `b` sequences at context `c` each."""
        return self.roofline(self.decode_flops(b, c), self.decode_bytes(b, c)) + self.overhead + self.comm(b)

    def step_flops(self, b: DimExpr, x: DimExpr, prompts: DimExpr, m: DimExpr, p: DimExpr) -> DimExpr:
        """FLOPs of a step of b decode sequences holding x positions and a chunk of m tokens at offset p of `prompts` prompts."""
        tokens = b + prompts * m
        return (2 * self.matmul_params * tokens + 4 * self.layers * self.width * x + 2 * self.layers * self.width * prompts * m * (2 * p + m + 1)) * FLOP

    def step_bytes(self, b: DimExpr, x: DimExpr, prompts: DimExpr, m: DimExpr, p: DimExpr) -> DimExpr:
        """Bytes of that step: the weights once, a row per token, the decode's KV read, the chunk's written and its earlier KV read."""
        tokens = b + prompts * m
        return self.weights_read(tokens) + tokens * self.row + x * self.kv + prompts * (m + p) * self.kv

    def step(self, b: DimExpr, x: DimExpr, prompts: DimExpr, m: DimExpr, p: DimExpr) -> DimExpr:
        """One step of chunked batching: decode sequences and a prompt chunk together (Sarathi-Serve's hybrid batch)."""
        return self.roofline(self.step_flops(b, x, prompts, m, p), self.step_bytes(b, x, prompts, m, p)) + self.overhead + self.comm(b + prompts * m)

    def chunks(self, s: DimExpr) -> tuple[DimExpr, DimExpr, DimExpr]:
        """(n, m, p): a prompt of s tokens as n = ceil(s / chunk) equal chunks of m = s / n tokens, p = (n - 1) m / 2 the
        chunks' mean offset. FLOPs and bytes are linear in the offset, so n steps at the mean offset sum to the chunks'
        FLOPs and bytes exactly (the time too where every chunk is in one regime of the roofline)."""
        n = DimExpr(sp.ceiling((s / self.chunk).e), U.ONE)
        m = s / n
        return n, m, (n - 1) * m / 2

    def energy(self, flops: DimExpr, nbytes: DimExpr) -> DimExpr:
        """Dynamic energy of a step: its FLOPs and its memory bytes at the device's energies."""
        return flops * self.energy_per_flop + nbytes * self.energy_per_byte

    def decode_memory_parts(self, c: DimExpr) -> tuple[DimExpr, DimExpr]:
        """(t0, k1): a memory-bound decode step at context c is t0 + k1 b."""
        zero, one = DimExpr(sp.Integer(0), U.ONE), DimExpr(sp.Integer(1), U.ONE)
        t0 = self.streamed / self.memory_rate + self.overhead + self.comm(zero)  # an MoE model: every expert (an upper bound)
        k1 = (self.row + (c + 1) * self.kv) / self.memory_rate + (self.comm(one) - self.comm(zero))
        return t0, k1


def instance_forms(ctx: Context, inst: Instance) -> InstanceForms:
    spec = ctx.spec
    model, dev = spec.models[inst.model], spec.devices[inst.device]
    f = ctx.formulas
    g = lambda n: field(ctx, inst, "instance", n)  # noqa: E731
    tp, pp = g("tp"), g("pp")
    gpus = tp * pp
    params = DimExpr(ctx.sym(model.params), U.ONE)
    v = ctx.field(model, "bytes_per_value")
    width, vocab, layers = ctx.shape(model, "width"), ctx.shape(model, "vocab"), ctx.shape(model, "layers")
    active = DimExpr(ctx.sym(PL.active_params(model)), U.ONE) if PL.is_moe(model) else params
    matmul = active if model.tied else active - vocab * width  # what a token multiplies by
    streamed = params if model.tied else params - vocab * width  # what a step may read
    link = spec.links.get(inst.scaleup_link) if inst.scaleup_link else None
    return InstanceForms(
        name=inst.name,
        gpus=gpus,
        tp=tp,
        pp=pp,
        compute_rate=gpus * ctx.field(dev, "peak") * ctx.field(dev, "efficiency"),
        memory_rate=gpus * ctx.field(dev, "mem_bw") * g("mem_efficiency"),
        overhead=g("overhead"),
        streamed=streamed * v,
        matmul_params=matmul,
        weight_bytes=params * v,
        row=width * v,
        kv=PL.kv_bytes_per_token(model, f),
        layers=layers,
        width=width,
        memory=gpus * ctx.field(dev, "memory") * g("kv_memory"),
        max_batch=g("max_batch"),
        prefill_tokens=g("prefill_tokens"),
        link_bw=ctx.field(link, "bandwidth") if link is not None else None,
        link_latency=ctx.field(link, "latency") if link is not None else None,
        energy_per_flop=ctx.field(dev, "energy_per_flop"),
        energy_per_byte=ctx.field(dev, "energy_per_byte"),
        static_power=gpus * ctx.field(dev, "static_power"),
        chunk=g("chunk") if inst.batching is Batching.CHUNKED and inst.chunk is not None else None,
        **_experts(ctx, inst, model),
    )


def _experts(ctx: Context, inst: Instance, model) -> dict:
    """An MoE model's expert-parallel traffic terms; none for a dense one."""
    if not PL.is_moe(model):
        return {}
    f = ctx.formulas
    v = ctx.field(model, "bytes_per_value")
    return dict(
        ep=field(ctx, inst, "instance", "ep"),
        routed=ctx.shape(model, "experts_per_token"),
        moe_layers=PL.moe_layers(model, f),
        experts=ctx.shape(model, "experts"),
        expert_bytes=PL.moe_layers(model, f) * PL.expert_layer_params(model, f) * v,
    )


__all__ = ["FLOP", "InstanceForms", "field", "instance_forms"]
