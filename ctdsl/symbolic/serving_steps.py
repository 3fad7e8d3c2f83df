"""An inference instance's steps as rooflines, exact in the params (docs/serving.md).

The conventions are the sister simulator's (BrendanJamesLynskey/Disaggregated_Inference_Sim,
hardware.py and examples/results.md), so that its published step times reproduce:

- the weights a step reads are the ones in a matmul, M = P - V d (the layers and the LM
  head; the input embedding is a lookup), plus one embedding row (d v) per token; a tied
  model reads its one table as the head, M = P;
- a prefill of n prompts of s tokens: FLOPs 2 M n s (the LM head on every prompt token,
  as a plain forward pass computes it) plus causal attention, QK^T and AV at each
  position c = 1..s, 2 L d s (s + 1); bytes M v + n s d v + n s k (its KV written);
- a decode step of b sequences at context c each: FLOPs 2 M b + 4 L d b (c + 1) (each new
  token attends to its context and to itself); bytes M v + b d v + b (c + 1) k;
- time on the instance's g = tp x pp GPUs: max(FLOPs / (g peak efficiency),
  bytes / (g mem_bw mem_efficiency)) + the per-step overhead; plus, when the instance
  names a scale-up link, two ring all-reduces of the step's activations per layer
  (Megatron-LM, arXiv:1909.08053; 2 (tp - 1)/tp S / B + 2 (tp - 1) latency each, NCCL's
  ring) and one activation hop per pipeline boundary, not overlapped;
- the KV cache fits beside the weights: floor((g memory kv_memory - P v) / k) tokens.

k is the model's KV bytes per token, 2 L g_kv d_h v (ctdsl.model.payload).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.language import schema as S
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
        return 2 * self.layers * ring + hops

    def prefill_flops(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        return (2 * self.matmul_params * prompts * s + 2 * self.layers * self.width * prompts * s * (s + 1)) * FLOP

    def prefill_bytes(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        return self.streamed + prompts * s * (self.row + self.kv)

    def prefill(self, prompts: DimExpr, s: DimExpr) -> DimExpr:
        """One prefill step over `prompts` prompts of `s` tokens."""
        return self.roofline(self.prefill_flops(prompts, s), self.prefill_bytes(prompts, s)) + self.overhead + self.comm(prompts * s)

    def decode_flops(self, b: DimExpr, c: DimExpr) -> DimExpr:
        return (2 * self.matmul_params * b + 4 * self.layers * self.width * b * (c + 1)) * FLOP

    def decode_bytes(self, b: DimExpr, c: DimExpr) -> DimExpr:
        return self.streamed + b * self.row + b * (c + 1) * self.kv

    def decode(self, b: DimExpr, c: DimExpr) -> DimExpr:
        """One decode step of `b` sequences at context `c` each."""
        return self.roofline(self.decode_flops(b, c), self.decode_bytes(b, c)) + self.overhead + self.comm(b)

    def decode_memory_parts(self, c: DimExpr) -> tuple[DimExpr, DimExpr]:
        """(t0, k1): a memory-bound decode step at context c is t0 + k1 b."""
        t0 = self.streamed / self.memory_rate + self.overhead
        k1 = (self.row + (c + 1) * self.kv) / self.memory_rate
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
    matmul = params if model.tied else params - vocab * width
    link = spec.links.get(inst.scaleup_link) if inst.scaleup_link else None
    return InstanceForms(
        name=inst.name,
        gpus=gpus,
        tp=tp,
        pp=pp,
        compute_rate=gpus * ctx.field(dev, "peak") * ctx.field(dev, "efficiency"),
        memory_rate=gpus * ctx.field(dev, "mem_bw") * g("mem_efficiency"),
        overhead=g("overhead"),
        streamed=matmul * v,
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
    )


__all__ = ["FLOP", "InstanceForms", "field", "instance_forms"]
