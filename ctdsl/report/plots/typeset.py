"""LaTeX typeset by matplotlib's mathtext (no TeX needed): a check that it can, and a PNG of it.

Both are pure functions of their arguments (the style is fixed), and mathtext's
parser is slow (a tenth of a second for a short formula, and a PNG parses it three
times): each keeps its last answers, so a formula shown twice in a process (a
display name on every figure, the same break-even in a report and its HTML twin)
is typeset once.
"""

from __future__ import annotations

import io
from functools import lru_cache

from ctdsl.report.plots.canvas import mpl, new_figure
from ctdsl.report.plots.style import RC


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


@lru_cache(maxsize=64)
def math_png(latex: str, fontsize: float = 13, dpi: int = 170) -> bytes | None:
    """LaTeX rendered by matplotlib's mathtext, or None if mathtext cannot typeset it."""
    matplotlib = mpl()
    with matplotlib.rc_context({**RC, "mathtext.fontset": "dejavusans"}):
        fig = new_figure(0.01, 0.01)
        fig.text(0, 0, f"${latex}$", fontsize=fontsize)
        buf = io.BytesIO()
        try:  # drawing parses the formula once; a separate `typesets` check first would parse it twice
            fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", pad_inches=0.04, metadata={"Software": None}, transparent=False)
        except Exception:  # noqa: BLE001 - mathtext cannot typeset it, as `typesets` would have said
            return None
    return buf.getvalue()
