"""CTL007: compressed payloads that send at least as much as the dense buffer."""

from __future__ import annotations

from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Severity
from ctdsl.language.tolerances import TIGHT, above, below
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import quantity, shown_label, times
from ctdsl.model.payload import dense_bytes, index_bytes, payload_bytes

# ---- CTL007 ---------------------------------------------------------------------------


@rule(
    "CTL007",
    "compression-inflates",
    Severity.WARNING,
    "A 'compression' that sends at least as many bytes as the dense buffer.",
    bad="""
    scheme topk { payload = topk; fraction = 1/2; index = 8 B; ... }   # 2 + 8 bytes for half the values
    """,
    good="""
    scheme topk { payload = topk; fraction = 1/16; chunk = 65536; ... }  # 2-byte positions
    """,
)
def compression_inflates(ctx: Context) -> Iterator[Hit]:
    """
    A compressed payload that is not smaller than the dense buffer (v bytes per
    value times P) costs its transform and saves nothing. Top-k sends each kept
    value with its position: keeping a fraction f at v bytes with i-byte positions
    sends f (v + i) bytes per parameter, more than v once f > v / (v + i); top-k at
    1/2 with 8-byte positions sends 5 bytes per BF16 parameter against 2. DeMo's
    k values per chunk inflate the same way, and quantising to as many bits as a
    value already has saves nothing. Payloads use the model layer's formulas
    (`ctdsl.model.payload`) at the params' defaults.
    """
    spec = ctx.spec
    for s in spec.schemes.values():
        if s.payload == "dense" or s.model not in spec.models:
            continue
        model = spec.models[s.model]
        try:
            sent, dense = ctx.value(payload_bytes(s, model)), ctx.value(dense_bytes(model))
        except (TypeError, AttributeError):  # an incomplete model: the checker has said so
            continue
        if sent is None or not dense or below(sent, dense, TIGHT):
            continue
        ratio = sent / dense
        notes: list[str] = []
        v = ctx.value(model.bytes_per_value)
        if s.payload in ("topk", "demo") and v:
            i = ctx.value(index_bytes(s, model))
            if i is not None and s.payload == "topk":
                f = ctx.value(s.fraction)
                notes.append(
                    f"top-k sends {f:.4g} x ({v:g} B value + {i:g} B position) = {f * (v + i):.4g} B per parameter; "
                    f"dense sends {v:g} B"
                )
                help_ = f"keep a fraction below {v / (v + i):.3g}, or send narrower positions (a 2 B index addresses a chunk of 65,536)"
            else:
                help_ = "keep fewer values per chunk (k), or send narrower positions (index)"
        elif s.payload == "quantise":
            help_ = "quantise to fewer bits than a value has (e.g. bits = 2 b for 8x)"
        else:
            help_ = "keep a smaller fraction"
        yield Hit(
            f"scheme '{s.name}' sends {quantity(sent, U.DATA)} per sync, {times(ratio)} the dense {quantity(dense, U.DATA)}: "
            f"its compression {'inflates' if above(ratio, 1.0, TIGHT) else 'saves nothing'}",
            ctx.at(s, "payload"),
            label=f"{times(ratio)} the dense payload",
            secondary=sum((shown_label(ctx, ctx.own_span(s, k), k) for k in ("fraction", "index", "k", "bits")), ()),
            notes=tuple(notes),
            help=help_,
        )
