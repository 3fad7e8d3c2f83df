"""Colours for the page's series (schemes, step components): distinct for any number of them.

The first ten are Tableau's ten (matplotlib's default cycle), which readers
know; each further colour is the one of a fixed grid of sRGB colours that lies
farthest, in CIELAB (CIE76 distance), from every colour already taken, among
those light enough to read on white and dark enough to see. So no two series
share a colour however many there are, and the first colours keep their
distance as more are added. Deterministic: the same count gives the same list.
"""

from __future__ import annotations

from functools import lru_cache

BASE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22")
_LEVELS = 16  # the grid of candidates: this many levels per sRGB channel
_L_RANGE = (30.0, 78.0)  # CIELAB lightness of a candidate: visible on white, not near black


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def lab(hex_colour: str) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour `#rrggbb`."""
    r, g, b = (_linear(int(hex_colour[k : k + 2], 16) / 255) for k in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    fx, fy, fz = f(x), f(y), f(z)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def _d2(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 + (a[2] - b[2]) ** 2


@lru_cache(maxsize=1)
def _candidates() -> tuple[tuple[str, tuple[float, float, float]], ...]:
    step = 255 / (_LEVELS - 1)
    out = []
    for i in range(_LEVELS):
        for j in range(_LEVELS):
            for k in range(_LEVELS):
                c = "#%02x%02x%02x" % (round(i * step), round(j * step), round(k * step))
                L = lab(c)
                if _L_RANGE[0] <= L[0] <= _L_RANGE[1]:
                    out.append((c, L))
    return tuple(out)


def palette(n: int) -> list[str]:
    """`n` colours, `#rrggbb`: Tableau's ten, then each the farthest from those taken."""
    out = list(BASE[:n])
    if n <= len(BASE):
        return out
    cands = _candidates()
    taken = [lab(c) for c in out]  # once, not once a candidate (30 000 calls of lab on the flagship's page)
    near = [min(_d2(L, M) for M in taken) for _, L in cands]  # each candidate's distance to the nearest taken
    while len(out) < n:
        k = max(range(len(cands)), key=near.__getitem__)
        c, L = cands[k]
        out.append(c)
        near = [min(d, _d2(L, M)) for d, (_, M) in zip(near, cands)]
    return out


__all__ = ["BASE", "lab", "palette"]
