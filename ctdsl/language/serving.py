"""The serving kinds of block: instance, pool, workload, handoff and slo (docs/serving.md).

They describe inference serving in the same hardware description as training: an
instance is a model on `tp x pp` devices of one kind; a pool is instances in a role
(prefill, decode or colocated); a workload is a stream of requests (an arrival process
with a rate, prompt and output lengths) entering a pool; a hand-off carries a request's
KV cache from a prefill pool to a decode pool over a link, whole or layer by layer, its
payload transformed as a sync payload is (FP8, FP4 with block scales, a band) on the
prefill GPUs or in a pluggable module that streams with the transfer; an slo gives the
latency targets goodput is measured against. `schema.KINDS` takes these tables, so the
checker, the field tables of docs/language.md and the language server read them as they
read every other kind.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction

from ctdsl import units as U


class Role(StrEnum):
    """What a pool's instances do with a request."""

    PREFILL = "prefill"  # the prompt, then the KV cache handed on
    DECODE = "decode"  # the output tokens, from a handed-on KV cache
    COLOCATED = "colocated"  # both, on the same instances


class Batching(StrEnum):
    """How an instance forms its batches."""

    CONTINUOUS = "continuous"  # requests join and leave the decode batch step by step (Orca, vLLM)
    CHUNKED = "chunked"  # prompts cut into chunks that ride on decode steps (Sarathi-Serve)


class Arrival(StrEnum):
    """The workload's arrival process."""

    POISSON = "poisson"  # exponential gaps: the closed forms' M/G/1 queues
    DETERMINISTIC = "deterministic"  # equal gaps: the waits of an M/G/1 queue are an upper bound


class HandoffMode(StrEnum):
    """How the KV cache is sent."""

    WHOLE = "whole"  # after the prefill, all at once
    LAYERWISE = "layerwise"  # layer by layer as the prefill produces it, overlapped with the prefill


class KvPayload(StrEnum):
    """What a hand-off sends: the KV cache as stored, or transformed as a sync payload."""

    PLAIN = "plain"  # as stored (bytes_per_value of the model)
    FP8 = "fp8"  # one byte a value
    FP4 = "fp4"  # E2M1, 4 bits a value, an 8-bit scale per 32 values (OCP MXFP4): 4.25 bits a value
    BAND = "band"  # a fraction of the values (the frequency band), at the stored width


ROLES = tuple(Role)
BATCHINGS = tuple(Batching)
ARRIVALS = tuple(Arrival)
HANDOFF_MODES = tuple(HandoffMode)
KV_PAYLOADS = tuple(KvPayload)

# bits a value of each transformed payload takes on the wire, block scales included
# (OCP Microscaling Formats (MX) v1.0 specification: MXFP4 is 32 E2M1 values and one E8M0 scale)
FP4_BITS = Fraction(4) + Fraction(8, 32)
FP8_BITS = Fraction(8)


def _table(fields) -> dict:
    return {f.name: f for f in fields}


def serving_kinds(F, Q: str) -> dict[str, dict]:
    """The serving kinds' field tables, built with the schema's field constructor `F`."""
    return {
        "instance": _table(
            [
                F("device", "ref", "the device each of its GPUs is", refs=("device",), required=True, example="accel"),
                F("model", "ref", "the model it serves", refs=("model",), required=True, example="llama70b"),
                F("tp", Q, "tensor-parallel degree: GPUs each layer is split over", dim=U.ONE, bound="count", default=Fraction(1), example="4"),
                F("pp", Q, "pipeline stages: the instance is tp x pp GPUs", dim=U.ONE, bound="count", default=Fraction(1), example="2"),
                F("ep", Q, "expert-parallel degree (an MoE model), inside the tp GPUs", dim=U.ONE, bound="count", default=Fraction(1), example="4"),
                F("scaleup_link", "ref", "the link the tp, pp and ep traffic crosses; without it that traffic is not charged", refs=("link",), example="nvlink4"),
                F("max_batch", Q, "most sequences in one decode step", dim=U.ONE, bound="count", default=Fraction(256), example="256"),
                F("prefill_tokens", Q, "most prompt tokens in one prefill step (whole prompts are batched up to it)", dim=U.ONE, bound="count", default=Fraction(8192), example="8192"),
                F("kv_memory", Q, "share of the GPUs' memory the engine may use for weights and KV cache", dim=U.ONE, bound="fraction", default=Fraction(9, 10), example="0.9"),
                F("mem_efficiency", Q, "achievable fraction of the memory bandwidth (MBU)", dim=U.ONE, bound="fraction", default=Fraction(1), example="0.8"),
                F("overhead", Q, "fixed time per step: scheduler and kernel launches", dim=U.TIME, bound="nonneg", default=Fraction(0), example="0.5 ms"),
                F("batching", "enum", "continuous (requests join and leave the decode batch each step) or chunked (chunked prefill, prompts ride on decode steps)", choices=BATCHINGS, default="continuous", example="chunked"),
                F("chunk", Q, "prompt tokens per chunk (chunked batching)", dim=U.ONE, bound="count", example="512"),
            ]
        ),
        "pool": _table(
            [
                F("role", "enum", "prefill, decode or colocated", choices=ROLES, required=True, example="prefill"),
                F("instance", "ref", "the instance its members are", refs=("instance",), example="p_node"),
                F("instances", Q, "instances in the pool", dim=U.ONE, bound="count", default=Fraction(1), example="2"),
            ]
        ),
        "workload": _table(
            [
                F("pool", "ref", "the pool its requests arrive at (a prefill or a colocated pool)", refs=("pool",), required=True, example="prefill"),
                F("arrival", "enum", "the arrival process: poisson or deterministic", choices=ARRIVALS, default="poisson", example="poisson"),
                F("rate", Q, "mean arrival rate (a param may set it)", dim=U.FREQUENCY, bound="positive", required=True, example="4 req/s"),
                F("prompt", Q, "mean prompt length", dim=U.ONE, bound="count", required=True, example="2048 tokens"),
                F("output", Q, "mean output length, the first token included", dim=U.ONE, bound="count", required=True, example="256 tokens"),
                F("prompt_cv", Q, "coefficient of variation of the prompt length", dim=U.ONE, bound="nonneg", default=Fraction(0), example="0.5"),
                F("output_cv", Q, "coefficient of variation of the output length", dim=U.ONE, bound="nonneg", default=Fraction(0), example="0.5"),
                F("slo", "ref", "the latency targets its goodput is measured against", refs=("slo",), example="interactive"),
            ]
        ),
        "handoff": _table(
            [
                F("from", "ref", "the prefill pool it leaves", refs=("pool",), required=True, example="prefill"),
                F("to", "ref", "the decode pool it reaches", refs=("pool",), required=True, example="decode"),
                F("link", "ref", "the link it crosses (or a route)", refs=("link",), example="ib_ndr"),
                F("route", "refs", "the links it crosses in turn, in place of link: latency once a link (the route's alone where a link is counted = route), bytes at the narrowest", refs=("link",), example="[eth100g, wan, eth100g]"),
                F("mode", "enum", "whole (after the prefill) or layerwise (each layer's KV as the prefill produces it)", choices=HANDOFF_MODES, default="whole", example="layerwise"),
                F("payload", "enum", "plain (as stored), fp8, fp4 (with block scales) or band (a fraction of the values)", choices=KV_PAYLOADS, default="plain", example="fp8"),
                F("fraction", Q, "fraction of the values a band keeps", dim=U.ONE, bound="fraction", example="1/4"),
                F("at", "ref", "where the payload is transformed: gpu (the prefill GPUs, before sending) or a pluggable (streaming with the transfer)", refs=("gpu", "pluggable"), default="gpu", example="qsfp"),
                F("cost", Q, "transform FLOPs per input byte", dim=U.OPS_PER_DATA, bound="nonneg", default=Fraction(1, 2), example="1 FLOP/B"),
                F("label", "string", "a display name", example='"FP8 in the module"'),
            ]
        ),
        "slo": _table(
            [
                F("ttft", Q, "time to first token, at the percentile", dim=U.TIME, bound="positive", example="1 s"),
                F("tpot", Q, "time per output token after the first", dim=U.TIME, bound="positive", example="25 ms"),
                F("e2e", Q, "end-to-end latency, at the percentile", dim=U.TIME, bound="positive", example="10 s"),
                F("percentile", Q, "the percentile the targets hold at, as a fraction", dim=U.ONE, bound="fraction", default=Fraction(99, 100), example="0.99"),
            ]
        ),
    }


SERVING_KINDS = ("instance", "pool", "workload", "handoff", "slo")

__all__ = [
    "ARRIVALS",
    "Arrival",
    "BATCHINGS",
    "Batching",
    "FP4_BITS",
    "FP8_BITS",
    "HANDOFF_MODES",
    "HandoffMode",
    "KV_PAYLOADS",
    "KvPayload",
    "ROLES",
    "Role",
    "SERVING_KINDS",
    "serving_kinds",
]
