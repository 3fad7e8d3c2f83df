"""What a worker originates per sync: payload formulas (domain.md section 5).

These are checked expressions (plain Python), so that both the symbolic back end
and the linter (which must not import sympy) use the same formulas.

- dense:     v P
- quantise:  P q  (+ ceil(P / block) scale bytes when block scales are given)
- topk:      P f (v + i), i = the index width: given, or the bytes that address a
             position within a chunk, ceil(log2(chunk) / 8), or within the tensor
- demo:      ceil(P / chunk) k (v + i), i as for topk from the chunk size
- band:      P f v, no positions

and, for a model given by its shape (parallelism.md sections 1.1, 1.2 and 2.3;
d width, h heads, g KV heads, d_h head dim, m = 3 gated (SwiGLU) or 2 plain (GeLU)):

- attention per layer  A = 2 d (h d_h) + 2 d (g d_h), Q and O, K and V (or attn_params);
  d_h = d/h by default, when A = 2 d^2 + 2 d g (d/h)
- dense layer          A + m d f            (+ 2d with norms)
- MoE layer            A + E m d f_e + m d f_sh + d E (the router)   (+ 2d with norms)
- P      = L_dense (dense layer) + L_moe (MoE layer) (+ d, the final norm) + V d (x2 untied)
- P_act  = P - L_moe (E - k) m d f_e, the weights one token uses
- F_tok  = 6 P_act, or with the sequence length s the full form
           6 [L A + L_dense m d f + L_moe (m d f_e k + m d f_sh) + d V] + 6 c L s h d_h,
           c = 1 causal (half the s x s square), 2 the full square; these are FLOP
           counts, which the schema's flops_per_token gives its dimension (FLOP)

Dense, untied, without norms, P = L(2d^2 + 2dg d/h + 3df) + 2Vd (domain.md section 2), the
same expression as before MoE shapes existed; and the KV cache per token, 2 L g d_h v.
"""

from __future__ import annotations

from typing import Any, Protocol

from ctdsl.language.enums import Payload
from ctdsl.language.schema import MOE_FIELDS, SHAPE_FIELDS
from ctdsl.model import expr as E
from ctdsl.model.entities import Model, Scheme

BYTE = E.num(1)  # one byte in base units


class Algebra(Protocol):
    """What the formulas below need of the algebra they run in: `Exprs` (checked expressions),
    or the symbolic back end's dimensioned `FieldAlgebra`."""

    byte: Any

    def get(self, entity: Any, name: str) -> Any: ...

    def shape(self, model: Model, key: str) -> Any: ...

    def num(self, n: int) -> Any: ...

    def ceil(self, a: Any) -> Any: ...

    def log2(self, a: Any) -> Any: ...


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


def dense_bytes(model: Model, A: Algebra = Exprs):
    return A.get(model, "bytes_per_value") * A.get(model, "params")


def index_bytes(scheme: Scheme, model: Model, A: Algebra = Exprs):
    """Bytes of one position: as given, or enough to address the chunk (or tensor)."""
    if scheme.index is not None:
        return A.get(scheme, "index")
    span = A.get(scheme, "chunk") if scheme.chunk is not None else A.get(model, "params")
    return A.ceil(A.log2(span) / A.num(8)) * A.byte


def payload_bytes(scheme: Scheme, model: Model, A: Algebra = Exprs):
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


def kv_bytes_per_token(model: Model, A: Algebra = Exprs):
    """KV cache of one token, handed from prefill to decode: 2 L g d_h v (domain.md section 2)."""
    if not full_shape(model):
        return None
    sh = lambda key: A.shape(model, key)  # noqa: E731
    head = sh("head_dim") if has(model, "head_dim") else sh("width") / sh("heads")
    return A.num(2) * sh("layers") * sh("kv_heads") * head * A.get(model, "bytes_per_value")


# ---- parameters and FLOPs from the shape ----------------------------------------------


def has(model: Model, key: str) -> bool:
    return bool(model.shape) and key in model.shape


def full_shape(model: Model) -> bool:
    return bool(model.shape) and all(k in model.shape for k in SHAPE_FIELDS)


def is_moe(model: Model) -> bool:
    return full_shape(model) and all(k in model.shape for k in MOE_FIELDS)


def attention_params(model: Model, A: Algebra = Exprs):
    """Attention weights of one layer: 2 d (h d_h) + 2 d (g d_h), or attn_params as given."""
    sh = lambda key: A.shape(model, key)  # noqa: E731
    if has(model, "attn_params"):
        return sh("attn_params")
    d, h, g, two = sh("width"), sh("heads"), sh("kv_heads"), A.num(2)
    if has(model, "head_dim"):
        dh = sh("head_dim")
        return two * d * (h * dh) + two * d * (g * dh)
    return two * d * d + two * d * g * (d / h)


def _matrices(model: Model, A: Algebra):
    return A.num(3 if model.gated else 2)


def moe_layers(model: Model, A: Algebra = Exprs):
    """L_moe: the MoE layers (all of them unless moe_layers says), None for a dense model."""
    if not is_moe(model):
        return None
    return A.shape(model, "moe_layers") if has(model, "moe_layers") else A.shape(model, "layers")


def _dense_layers(model: Model, A: Algebra):
    """L_dense, None when there is none (an MoE model whose every layer is MoE)."""
    L = A.shape(model, "layers")
    if not is_moe(model):
        return L
    return L - A.shape(model, "moe_layers") if has(model, "moe_layers") else None


def _moe_mlp(model: Model, A: Algebra, experts: Any):
    """Routed and shared expert weights of one MoE layer with `experts` routed experts."""
    sh = lambda key: A.shape(model, key)  # noqa: E731
    m, d = _matrices(model, A), sh("width")
    out = experts * m * d * sh("expert_mlp")
    return out + m * d * sh("shared_mlp") if has(model, "shared_mlp") else out


def total_params(model: Model, A: Algebra = Exprs):
    """P from the shape (module docstring); None without the full shape."""
    if not full_shape(model):
        return None
    sh = lambda key: A.shape(model, key)  # noqa: E731
    d, V, two = sh("width"), sh("vocab"), A.num(2)
    attn = attention_params(model, A)
    norm = two * d if model.norms else None

    def layer(mlp):
        out = attn + mlp
        return out + norm if norm is not None else out

    dense_mlp = _matrices(model, A) * d * sh("mlp")
    body = None
    if is_moe(model):
        E_ = sh("experts")
        body = moe_layers(model, A) * layer(_moe_mlp(model, A, E_) + d * E_)
    dense = _dense_layers(model, A)
    if dense is not None:
        part = dense * layer(dense_mlp)
        body = part if body is None else part + body
    if model.norms:
        body = body + d
    return body + (V * d if model.tied else two * V * d)


def active_params(model: Model, A: Algebra = Exprs):
    """P_act = P - L_moe (E - k) m d f_e: the weights one token uses (P for a dense model)."""
    P = total_params(model, A)
    if P is None or not is_moe(model):
        return P
    sh = lambda key: A.shape(model, key)  # noqa: E731
    idle = sh("experts") - sh("experts_per_token")
    return P - moe_layers(model, A) * (idle * _matrices(model, A) * sh("width") * sh("expert_mlp"))


def attention_factor(model: Model) -> int:
    """c: 1 for a causal attention core (half the s x s square), 2 for the full square."""
    return 1 if model.causal else 2


def flops_per_token_full(model: Model, A: Algebra = Exprs):
    """Training FLOPs per token, parallelism.md section 2.3, with the sequence length s:
    6 [matmul weights a token touches, output layer included] + 6 c L s h d_h."""
    sh = lambda key: A.shape(model, key)  # noqa: E731
    L, d, m = sh("layers"), sh("width"), _matrices(model, A)
    bracket = L * attention_params(model, A) + d * sh("vocab")
    dense = _dense_layers(model, A)
    if dense is not None:
        bracket = bracket + dense * (m * d * sh("mlp"))
    if is_moe(model):
        bracket = bracket + moe_layers(model, A) * _moe_mlp(model, A, sh("experts_per_token"))
    width = sh("heads") * sh("head_dim") if has(model, "head_dim") else d  # h d_h
    six = A.num(6)
    return six * bracket + six * A.num(attention_factor(model)) * L * sh("seq") * width


def default_flops_per_token(model: Model, A: Algebra = Exprs):
    """The FLOPs per token when the spec gives none: the full form when the sequence
    length is given, else 6 P_act (6P for a dense model)."""
    if full_shape(model) and has(model, "seq"):
        return flops_per_token_full(model, A)
    if is_moe(model):
        return A.num(6) * active_params(model, A)
    return A.num(6) * A.get(model, "params")


def compute_flops(model: Model, A: Algebra = Exprs):
    """FLOPs of one training step on one worker: flops_per_token x tokens (6P by default)."""
    return A.get(model, "flops_per_token") * A.get(model, "tokens")


# ---- the parts a GPU's shard is cut from (ctdsl.symbolic.memory) --------------------


def embedding_params(model: Model, A: Algebra = Exprs):
    """One embedding table, V d."""
    return A.shape(model, "vocab") * A.shape(model, "width")


def expert_layer_params(model: Model, A: Algebra = Exprs):
    """The routed experts of one MoE layer, E m d f_e; None for a dense model."""
    if not is_moe(model):
        return None
    return A.shape(model, "experts") * _matrices(model, A) * A.shape(model, "width") * A.shape(model, "expert_mlp")


def layer_params(model: Model, A: Algebra = Exprs):
    """The dense weights of all the layers (and the final norm): P less the embedding
    tables and the routed experts, which pipeline stages and expert ranks place apart."""
    P = total_params(model, A)
    tables = A.num(1 if model.tied else 2) * embedding_params(model, A)
    out = P - tables
    if is_moe(model):
        out = out - moe_layers(model, A) * expert_layer_params(model, A)
    return out
