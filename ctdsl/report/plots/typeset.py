"""Whether matplotlib's mathtext can typeset a param's display name (a figure's axis label).

A pure function of its argument, and mathtext's parser is slow (a tenth of a
second for a short formula): it keeps its last answers, so a display name on
every figure is parsed once. (The Markdown report's forms are GitHub `$$` math,
no longer pictures: `report.document_md`.)
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _parser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


@lru_cache(maxsize=256)
def typesets(latex: str) -> bool:
    """Whether mathtext can typeset `$latex$` (it covers a subset of LaTeX)."""
    try:
        _parser().parse(f"${latex}$")
    except Exception:  # noqa: BLE001 - any failure means: it cannot
        return False
    return True
