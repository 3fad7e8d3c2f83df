"""Units and numbers in LaTeX for a paper: siunitx by default, plain `\\mathrm` on request.

`unit_tex("GB/s")` is `\\giga\\byte\\per\\second` for siunitx (whose `\\qty` and
`\\unit` typeset it upright with the right spacing) or `\\mathrm{GB/s}` in plain
mode. A unit that is not made of known prefixes and units (one a spec declared
freely) is written as escaped upright text in either mode, so nothing from a
spec reaches TeX as a command. FLOP is not an SI unit: the fragment declares
`\\flop` for siunitx (`\\DeclareSIUnit\\flop{FLOP}`, listed in its header).
"""

from __future__ import annotations

import math

from ctdsl.report.encode import tex_text

SIUNITX, PLAIN = "siunitx", "plain"

_BASES = {
    "B": r"\byte",
    "b": r"\bit",
    "bit": r"\bit",
    "s": r"\second",
    "h": r"\hour",
    "J": r"\joule",
    "W": r"\watt",
    "m": r"\metre",
    "Hz": r"\hertz",
    "FLOP": r"\flop",
}
_PREFIXES = {
    "E": r"\exa",
    "P": r"\peta",
    "T": r"\tera",
    "G": r"\giga",
    "M": r"\mega",
    "k": r"\kilo",
    "m": r"\milli",
    "u": r"\micro",
    "\u00b5": r"\micro",
    "n": r"\nano",
    "p": r"\pico",
}
DIGITS = 4


def _si_part(part: str) -> str | None:
    if part in _BASES:
        return _BASES[part]
    if len(part) > 1 and part[0] in _PREFIXES and part[1:] in _BASES:
        return _PREFIXES[part[0]] + _BASES[part[1:]]
    return None


def si_unit(label: str) -> str | None:
    """`GB/s` -> `\\giga\\byte\\per\\second`; None when it is not made of known parts."""
    parts = label.split("/")
    if not all(parts):
        return None
    out = []
    for i, part in enumerate(parts):
        tex = _si_part(part)
        if tex is None:
            return None
        out.append((r"\per" if i else "") + tex)
    return "".join(out)


def unit_tex(label: str, mode: str) -> str:
    """A unit for `\\unit{...}` (siunitx) or for math mode (plain)."""
    si = si_unit(label) if mode == SIUNITX else None
    if si is not None:
        return rf"\unit{{{si}}}"
    return rf"\mathrm{{{tex_text(label)}}}"


def number(v: float) -> str:
    """A number to four significant figures, as text siunitx's \\num reads (`1.411e5`)."""
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else ("\\infty" if v > 0 else "-\\infty") if math.isinf(v) else "\\mathrm{NaN}"
    mag = abs(v)
    if mag >= 1e5 or mag < 1e-3:
        m, e = f"{v:.{DIGITS - 1}e}".split("e")
        m = m.rstrip("0").rstrip(".")
        return f"{m}e{int(e)}"
    decimals = max(0, DIGITS - 1 - int(math.floor(math.log10(mag))))
    text = f"{v:.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def num_tex(v: float, mode: str) -> str:
    """A number in math mode."""
    text = number(v)
    if "\\" in text:
        return text
    if mode == SIUNITX:
        return rf"\num{{{text}}}"
    if "e" in text:
        m, e = text.split("e")
        return rf"{m} \cdot 10^{{{e}}}"
    return text


def qty_tex(v: float, label: str, mode: str) -> str:
    """A value with its unit, in math mode: `\\qty{37.29}{\\second}` or `37.29\\,\\mathrm{s}`."""
    if label in ("", "1"):
        return num_tex(v, mode)
    si = si_unit(label) if mode == SIUNITX else None
    text = number(v)
    if si is not None and "\\" not in text:
        return rf"\qty{{{text}}}{{{si}}}"
    return num_tex(v, mode) + r"\," + rf"\mathrm{{{tex_text(label)}}}"
