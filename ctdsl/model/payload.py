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


class Exprs:
    """The algebra the formulas below are written in, here over checked expressions:
    a field as the entity holds it. The symbolic back end runs the same formulas in
    its dimensioned algebra (`ctdsl.symbolic.dimensioned.FieldAlgebra`), where each
    field carries its schema's dimension, so a dimensionally wrong formula fails there."""

    byte = BYTE

    @staticmethod
    def get(entity, name: str) -> E.Expr:
        return getattr(entity, name)

    @staticmethod
    def shape(model: Model, key: str) -> E.Expr:
        return model.shape[key]

    @staticmethod
    def num(n: int) -> E.Expr:
        return E.num(n)

    ceil = staticmethod(E.ceil)
    log2 = staticmethod(E.log2)


def dense_bytes(model: Model, A=Exprs):
    return A.get(model, "bytes_per_value") * A.get(model, "params")


def index_bytes(scheme: Scheme, model: Model, A=Exprs):
    """Bytes of one position: as given, or enough to address the chunk (or tensor)."""
    if scheme.index is not None:
        return A.get(scheme, "index")
    span = A.get(scheme, "chunk") if scheme.chunk is not None else A.get(model, "params")
    return A.ceil(A.log2(span) / A.num(8)) * A.byte


def payload_bytes(scheme: Scheme, model: Model, A=Exprs):
    P, v = A.get(model, "params"), A.get(model, "bytes_per_value")
    kind = scheme.payload
    if kind is Payload.DENSE:
        return v * P
    if kind is Payload.QUANTISE:
        out = P * A.get(scheme, "value_bytes")
        if scheme.block is not None and scheme.scale is not None:
            out = out + A.ceil(P / A.get(scheme, "block")) * A.get(scheme, "scale")
        return out
    if kind is Payload.TOPK:
        return P * A.get(scheme, "fraction") * (v + index_bytes(scheme, model, A))
    if kind is Payload.DEMO:
        return A.ceil(P / A.get(scheme, "chunk")) * A.get(scheme, "k") * (v + index_bytes(scheme, model, A))
    if kind is Payload.BAND:
        return P * A.get(scheme, "fraction") * v
    raise ValueError(f"unknown payload {kind}")  # pragma: no cover


def kv_bytes_per_token(model: Model, A=Exprs):
    """KV cache of one token, handed from prefill to decode: 2 L g (d/h) v (domain.md section 2)."""
    if not model.shape or len(model.shape) < 6:
        return None
    sh = lambda key: A.shape(model, key)  # noqa: E731
    return A.num(2) * sh("layers") * sh("kv_heads") * (sh("width") / sh("heads")) * A.get(model, "bytes_per_value")


def compute_flops(model: Model, A=Exprs):
    """FLOPs of one training step on one worker: flops_per_token x tokens (6P by default)."""
    return A.get(model, "flops_per_token") * A.get(model, "tokens")


def transform_flops(scheme: Scheme, model: Model, A=Exprs):
    """FLOPs of the scheme's transform over the dense buffer (cost per input byte)."""
    return A.get(scheme, "cost") * dense_bytes(model, A)
