"""What a worker originates per sync: payload formulas (domain.md section 5).

These are checked expressions (plain Python), so that both the symbolic back end
and the linter (which must not import sympy) use the same formulas.

- dense:     v P
- quantise:  P q  (+ ceil(P / block) scale bytes when block scales are given)
- topk:      P f (v + i), i = the index width: given, or the bytes that address a
             position within a chunk, ceil(log2(chunk) / 8), or within the tensor
- demo:      ceil(P / chunk) k (v + i), i as for topk from the chunk size
- band:      P f v, no positions

and, for a model given by its shape, the KV cache per token, 2 L g (d/h) v.
"""

from __future__ import annotations

from ctdsl.language.enums import Payload
from ctdsl.model import expr as E
from ctdsl.model.entities import Model, Scheme

BYTE = E.num(1)  # one byte in base units


def dense_bytes(model: Model) -> E.Expr:
    return model.bytes_per_value * model.params


def index_bytes(scheme: Scheme, model: Model) -> E.Expr:
    """Bytes of one position: as given, or enough to address the chunk (or tensor)."""
    if scheme.index is not None:
        return scheme.index
    span = scheme.chunk if scheme.chunk is not None else model.params
    return E.ceil(E.log2(span) / E.num(8)) * BYTE


def payload_bytes(scheme: Scheme, model: Model) -> E.Expr:
    P, v = model.params, model.bytes_per_value
    kind = scheme.payload
    if kind is Payload.DENSE:
        return v * P
    if kind is Payload.QUANTISE:
        out = P * scheme.value_bytes
        if scheme.block is not None and scheme.scale is not None:
            out = out + E.ceil(P / scheme.block) * scheme.scale
        return out
    if kind is Payload.TOPK:
        return P * scheme.fraction * (v + index_bytes(scheme, model))
    if kind is Payload.DEMO:
        return E.ceil(P / scheme.chunk) * scheme.k * (v + index_bytes(scheme, model))
    if kind is Payload.BAND:
        return P * scheme.fraction * v
    raise ValueError(f"unknown payload {kind}")  # pragma: no cover


def kv_bytes_per_token(model: Model) -> E.Expr | None:
    """KV cache of one token, handed from prefill to decode: 2 L g (d/h) v (domain.md section 2)."""
    if not model.shape or len(model.shape) < 6:
        return None
    sh = model.shape
    return E.num(2) * sh["layers"] * sh["kv_heads"] * (sh["width"] / sh["heads"]) * model.bytes_per_value


def compute_flops(model: Model) -> E.Expr:
    """FLOPs of one training step on one worker: flops_per_token x tokens (6P by default)."""
    return model.flops_per_token * model.tokens


def transform_flops(scheme: Scheme, model: Model) -> E.Expr:
    """FLOPs of the scheme's transform over the dense buffer (cost per input byte)."""
    return scheme.cost * dense_bytes(model)
