"""What each payload's transform needs of whatever runs it, and when the optics
does the work for free."""

from __future__ import annotations

from ctdsl.language.enums import Operation as Op
from ctdsl.language.enums import Payload

PAYLOAD_NEEDS: dict[Payload, tuple[Op, ...]] = {
    Payload.DENSE: (),
    Payload.QUANTISE: (Op.MAC, Op.COMPARE),
    Payload.TOPK: (Op.COMPARE,),
    Payload.DEMO: (Op.DCT, Op.COMPARE),
    Payload.BAND: (Op.DCT,),
}
PAYLOAD_WORDS: dict[Payload, str] = {
    Payload.DENSE: "a dense payload",
    Payload.QUANTISE: "quantisation",
    Payload.TOPK: "top-k",
    Payload.DEMO: "DeMo's per-chunk top-k",
    Payload.BAND: "a fixed frequency band",
}
# transforms an optics stage can perform
OPTICAL: tuple[Op, ...] = (Op.FFT, Op.DCT, Op.NTT)
# transform cost, FLOP per input byte, when a scheme does not say
DEFAULT_COST: dict[Payload, int] = {
    Payload.DENSE: 0,
    Payload.QUANTISE: 0,
    Payload.TOPK: 0,
    Payload.DEMO: 10,
    Payload.BAND: 10,
}


def optical_needs(payload: str) -> tuple[Op, ...]:
    return tuple(op for op in PAYLOAD_NEEDS.get(payload, ()) if op in OPTICAL)


def optics_performs_transform(payload: str, performs: tuple[str, ...]) -> bool:
    """The optics performs the payload's transform, so it costs the compute budget
    nothing: the payload needs optical transforms and the optics performs all of them."""
    ops = optical_needs(payload)
    return bool(ops) and all(op in performs for op in ops)
