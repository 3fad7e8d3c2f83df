"""CTL006: a rate or a per-bit figure that looks like a bit/byte confusion."""

from __future__ import annotations

import re
from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Severity, Span
from ctdsl.language.tolerances import close
from ctdsl.lint.context import Context, iter_fields
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, quantity, shown_label
from ctdsl.model import entities as M
from ctdsl.syntax import ast

# Two rates "match" within this relative tolerance (bit/byte slips are exact 8x).
MATCH = 0.02

PICO = 1e-12  # joules in a picojoule, to print energies per bit and per byte


# ---- CTL006 ---------------------------------------------------------------------------

# rates written in names, one '_'-separated part at a time: eth100g, 100gbe, wan_400g,
# gbe25, eth1p6t (lower case; 'gb' alone is ambiguous and is not read)
_NAME_RATE = re.compile(r"[a-z]*?(\d+(?:p\d+)?)(g|t)(?:be|bps|bit|ige|e)?")
_NAME_RATE_AFTER = re.compile(r"(?:gbe|gige|gbit)(\d+(?:p\d+)?)")
# rates written in comments: 100 GbE, 400G, 100 Gb/s, 1.6T, 12.5 GB/s
_COMMENT_RATE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(GbE|GBASE|GigE|Gbps|Gbit/s|Gb/s|Gbit|G|Tb/s|Tbps|T|GB/s|GBps|TB/s)(?![A-Za-z0-9/])"
)


def _name_rates(name: str) -> list[tuple[float, str]]:
    """Nominal rates (bits/s) a definition's name states, with how it was written."""
    low = name.lower()
    out = []
    for part in re.split(r"_+", low):
        m = _NAME_RATE.fullmatch(part)
        if m is None:
            m2 = _NAME_RATE_AFTER.fullmatch(part)
            if m2 is None:
                continue
            num, prefix = m2.group(1), "g"
        else:
            num, prefix = m.group(1), m.group(2)
        value = float(num.replace("p", "."))
        out.append((value * (1e12 if prefix == "t" else 1e9), part))
    return out


def _comment_rates(text: str) -> list[tuple[float, bool, str]]:
    """(rate in B/s if read as written, written in bits?, the text) for each rate in a comment."""
    out = []
    for m in _COMMENT_RATE.finditer(text):
        value, unit = float(m.group(1)), m.group(2)
        scale = 1e12 if unit.startswith("T") else 1e9
        bits = unit not in ("GB/s", "GBps", "TB/s")
        out.append((value * scale / (8 if bits else 1), bits, m.group(0)))
    return out


def _per_unit_slip(key: str, node: ast.Value | None) -> str | None:
    """'per byte' or 'per bit' when a *_per_bit / *_per_byte field is written in the other."""
    if not isinstance(node, ast.Number) or not node.unit or "/" not in node.unit:
        return None
    atom = node.unit.rsplit("/", 1)[1]
    unit = U.UNITS.get(atom)
    if unit is None or unit.dim != U.DATA:
        return None
    in_bits = atom in ("b", "bit", "bits") or atom.endswith("b")
    if key.endswith("_per_bit") and not in_bits:
        return "per byte"
    if key.endswith("_per_byte") and in_bits:
        return "per bit"
    return None


@rule(
    "CTL006",
    "bit-byte-slip",
    Severity.WARNING,
    "A value that looks like a bit/byte confusion, e.g. a link called 100 GbE with a bandwidth of 100 GB/s.",
    bad="""
    link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }   # 100 GbE
    link ib { bandwidth = 50 GB/s; latency = 10 us; energy_per_bit = 15 pJ/B }
    """,
    good="""
    link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }  # 100 GbE = 100 Gb/s
    link ib { bandwidth = 50 GB/s; latency = 10 us; energy_per_bit = 15 pJ/bit }
    """,
    fix="unsafe",
    fix_why=(
        "A rate 8x off its stated rate is rewritten to the stated rate (`bandwidth = 100 GB/s` to "
        "`bandwidth = 12.5 GB/s`). The fix changes what the spec means, and the stated rate may be "
        "the wrong one (a name or a comment left over from an earlier link): it is applied only with "
        "`--unsafe-fixes`, after a look at the datasheet."
    ),
)
def bit_byte_slip(ctx: Context) -> Iterator[Hit]:
    """
    Network rates are quoted in bits (100 GbE carries 100 Gb/s = 12.5 GB/s), ctdsl
    works in bytes, and a factor of 8 is easy to lose. A link (or a pluggable) is
    flagged when its name, the name of a block it extends, or a comment on its
    lines (or on the comment lines just above it) states a rate, and its bandwidth
    (a pluggable's line rate) is that rate read in the other unit: exactly 8x too
    high (100 GbE with 100 GB/s) or 8x too low (a comment of 400 GB/s with 50 GB/s).
    A bandwidth that matches some stated
    rate is never flagged, nor is one that differs by another factor (two links
    bonded, a share of a link): those are not unit slips.

    Names are read as an Ethernet-style rate in bits: `eth100g`, `100gbe`,
    `wan_400g`, `gbe25` (the standard library's `eth100g` is 12.5 GB/s, correct).
    Comments are read with their units: `100 GbE`, `400G`, `100 Gb/s`, `1.6T` are
    bits; `12.5 GB/s` is bytes.

    Also flagged: a field named per bit written per byte, or the reverse
    (`energy_per_bit = 15 pJ/B` is 1.875 pJ/bit, 8x off if the datasheet said
    15 pJ/bit). Values are taken at the params' defaults.
    """
    yield from _rate_slips(ctx)
    yield from _per_unit_slips(ctx)


# (B/s if read as written, written in bits?, the text, the comment's span or None for a name)
Stated = tuple[float, bool, str, Span | None]


def _stated_rates(ctx: Context, d: M.Definition, block: ast.Block) -> list[Stated]:
    """The rates a definition's name, its bases' names and its comments state."""
    stated: list[Stated] = []
    for name in [d.name] + ctx.bases(d.name):
        for rate, _part in _name_rates(name):
            stated.append((rate / 8, True, f"'{name}'", None))
    for span, text in ctx.comments_of(block):
        for rate, bits, shown in _comment_rates(text):
            stated.append((rate, bits, shown, span))
    return stated


def _rate_slips(ctx: Context) -> Iterator[Hit]:
    """Links and pluggables whose rate is a stated rate read in the other unit."""
    spec = ctx.spec
    rated: list[tuple[M.Definition, str, str]] = [(link, "bandwidth", "bandwidth") for link in spec.links.values()]
    rated += [(plug, "port.rate", "line rate") for plug in spec.pluggables.values()]
    for d, key, what in rated:
        if not is_user(ctx, d):
            continue
        expr = d.bandwidth if isinstance(d, M.Link) else (d.stages["port"].rate if "port" in d.stages else None)
        bw = ctx.value(expr)
        block = ctx.blocks.get(d.name)
        if bw is None or block is None:
            continue
        stated = _stated_rates(ctx, d, block)
        if any(close(bw, r, MATCH) for r, _, _, _ in stated):
            continue  # some stated rate matches: whatever else is said, not a unit slip
        slipped = next((s for s in stated if close(bw, s[0] * 8 if s[1] else s[0] / 8, MATCH)), None)
        if slipped is not None:
            yield _rate_hit(ctx, d, key, what, bw, slipped)


def _rate_hit(ctx: Context, d: M.Definition, key: str, what: str, bw: float, stated: Stated) -> Hit:
    rate, bits, shown, where = stated
    kind = "link" if isinstance(d, M.Link) else "pluggable"
    said = f"the name {shown}" if where is None else f"the comment '{shown}'"
    if bits:
        message = (
            f"{kind} '{d.name}': {said} means {quantity(rate, U.RATE)}, but its {what} is "
            f"{quantity(bw, U.RATE)}, 8x more: bits read as bytes?"
        )
    else:
        message = (
            f"{kind} '{d.name}': {said} says {quantity(rate, U.RATE)}, but its {what} is "
            f"{quantity(bw, U.RATE)}, 8x less: bytes read as bits?"
        )
    written = "rate" if key == "port.rate" else key
    return Hit(
        message,
        ctx.at(d, key, key.split(".")[0]),
        label=f"8x {'above' if bits else 'below'} the stated rate",
        secondary=shown_label(ctx, where, "rate stated here") if where is not None else (),
        notes=("1 B = 8 b: 100 GbE carries 100 Gb/s = 12.5 GB/s",),
        help=f"write {written} = {quantity(rate, U.RATE)}"
        + (f" (or {quantity(rate * 8, U.RATE).replace('B/s', 'b/s')})" if bits else ""),
    )


def _per_unit_slips(ctx: Context) -> Iterator[Hit]:
    """Fields named per bit written per byte, or the reverse."""
    for name, block in ctx.blocks.items():
        d = ctx.spec.definition(name)
        if d is None or not is_user(ctx, d):
            continue
        for _stage, f in iter_fields(block.items):
            key = f.key.text
            num = f.value
            other = _per_unit_slip(key, num)
            if other is None or not isinstance(num, ast.Number) or not ctx.shown(f.span):
                continue
            base = float(num.value * U.parse_unit(num.unit).scale)  # J/B
            shown_as = f"{base / 8 / PICO:.4g} pJ/bit" if other == "per byte" else f"{base / PICO:.4g} pJ/B"
            yield Hit(
                f"{block.kind} '{name}': {key} is written {other} ({num.text} {num.unit} = {shown_as})",
                num.unit_span if ctx.shown(num.unit_span) else f.span,
                label=f"a unit {other}",
                notes=("1 B = 8 b: a value per byte is 8x the same value per bit",),
                help=f"if the figure is {'per bit' if other == 'per byte' else 'per byte'}, write it so: "
                f"{num.text} {num.unit.rsplit('/', 1)[0]}/{'bit' if other == 'per byte' else 'B'}",
            )
