"""A model's shape: what must fit together before its parameters are counted.

The builder (`build.py`) reads the fields; this module reports a shape whose
parts do not fit (CT308: a width that heads do not divide, more experts per
token than experts, more MoE layers than layers) or that is half an MoE model
(CT105: experts without experts_per_token or expert_mlp), and builds the model
entity, with P and the FLOPs per token from the formulas of
`ctdsl.model.payload`, the same ones the back end runs in dimensioned sympy.
"""

from __future__ import annotations

import math

from dataclasses import replace

from ctdsl.check.names import MergedBlock
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.language import schema as S
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.model import payload as PL

# shape fields that need the full shape, like kv_tokens: (field, why)
_NEEDS_SHAPE = {
    "kv_tokens": "the KV cache per token is 2 L g (d/h) v bytes: give the shape instead of params",
    "seq": "the attention core's FLOPs are 6 c L s h d_h per token: give the shape instead of params",
}


def shape_fields(b: MergedBlock, get) -> dict[str, E.Expr]:
    """The shape fields the block writes (or inherits), checked (kv_tokens apart)."""
    return {k: get(k) for k in S.SHAPE_FIELDS + S.SHAPE_OPTIONS if k in b.fields}


def complete(shape: dict[str, E.Expr]) -> bool:
    return all(shape.get(k) is not None for k in S.SHAPE_FIELDS)


def check_shape(sink: DiagnosticSink, b: MergedBlock, shape: dict[str, E.Expr], env: dict[str, float]) -> None:
    """Report what does not fit in a full shape (evaluated at the params' defaults)."""
    _check_heads(sink, b, shape, env)
    _check_moe(sink, b, shape, env)


_value = E.value_or_none


def _check_heads(sink, b: MergedBlock, shape, env) -> None:
    dv, hv, gv = (_value(shape[k], env) for k in ("width", "heads", "kv_heads"))
    if None in (dv, hv, gv) or not all(math.isfinite(v) and v > 0 for v in (dv, hv, gv)):
        return  # a count of zero or less is CT301 at its field
    if "head_dim" not in shape and dv % hv:
        sink.error(
            "CT308",
            f"model '{b.name}': width {dv:g} is not a multiple of heads {hv:g}",
            b.fields["heads"].value.span,
            help="the head dimension d/h is a whole number (or give head_dim)",
        )
    elif gv > hv or hv % gv:
        sink.error(
            "CT308",
            f"model '{b.name}': heads {hv:g} is not a multiple of kv_heads {gv:g}",
            b.fields["kv_heads"].value.span,
            help="each key/value head serves a whole number of query heads",
        )


def _check_moe(sink, b: MergedBlock, shape, env) -> None:
    given = [k for k in S.MOE_FIELDS + ("shared_mlp", "moe_layers") if k in shape]
    if not given:
        return
    missing = [k for k in S.MOE_FIELDS if k not in shape]
    if missing:
        sink.error(
            "CT105",
            f"model '{b.name}' gives {given[0]} but no {' or '.join(missing)}: an MoE model needs experts, experts_per_token and expert_mlp",
            b.fields[given[0]].span,
            help="; ".join(f"{k} = {S.KINDS['model'][k].example}" for k in missing),
        )
        return
    pairs = [("experts_per_token", "experts", "a token uses at most every expert"), ("moe_layers", "layers", "the MoE layers are some of the layers")]
    for small, big, why in pairs:
        if small not in shape:
            continue
        sv, bv = _value(shape[small], env), _value(shape[big], env)
        if sv is not None and bv is not None and 0 < bv < sv:  # bv <= 0 is reported by its bound
            sink.error(
                "CT308",
                f"model '{b.name}': {small} {sv:g} is more than {big} {bv:g}",
                b.fields[small].value.span,
                secondary=(Label(b.fields[big].value.span, f"{big} given here"),),
                help=why,
            )


def needs_shape(sink, b: MergedBlock, shape: dict[str, E.Expr]) -> None:
    """kv_tokens and seq need the full shape (CT105)."""
    if complete(shape):
        return
    for key, why in _NEEDS_SHAPE.items():
        if key in b.fields:
            sink.error(
                "CT105",
                f"model '{b.name}': {key} needs the full shape (layers, width, heads, kv_heads, mlp, vocab)",
                b.fields[key].span,
                help=why,
            )


def switches(get) -> dict[str, bool]:
    """tied, norms, gated, causal: as written, or their defaults."""
    out = {}
    for k in S.SHAPE_SWITCHES:
        v = get(k)
        out[k] = bool(S.KINDS["model"][k].default if v is None else v)
    return out


def counted(model: M.Model, params: E.Expr | None, flops: E.Expr | None) -> M.Model:
    """The model with P counted from its full shape (unless given) and the default FLOPs per token."""
    whole = model.shape is not None and complete(dict(model.shape)) and all(v is not None for v in model.shape.values())
    if params is None and whole:
        params = PL.total_params(model)
    model = replace(model, params=params)
    if flops is None and params is not None:
        flops = PL.default_flops_per_token(model)
    return replace(model, flops_per_token=flops)
