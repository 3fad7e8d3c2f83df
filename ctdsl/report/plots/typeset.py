"""LaTeX typeset by matplotlib's mathtext (no TeX needed): a check that it can, and a PNG of it.

Both are pure functions of their arguments (the style is fixed), and mathtext's
parser is slow (a tenth of a second for a short formula, half a second for a
long break-even): each keeps its last answers, so a formula shown twice in a
process (a display name on every figure, the same break-even in a report and its
HTML twin) is typeset once, and a PNG parses its formula once.
"""

from __future__ import annotations

import io
from functools import lru_cache

from ctdsl.report.plots.canvas import PNG_LEVEL, mpl
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


PAD = 0.04  # inches of white around a typeset form


@lru_cache(maxsize=1)
def _rasteriser():
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("agg")


@lru_cache(maxsize=64)
def math_png(latex: str, fontsize: float = 13, dpi: int = 170) -> bytes | None:
    """LaTeX rendered by matplotlib's mathtext, black on white, or None if mathtext cannot typeset it.

    The form is parsed once, straight to a raster of its ink (drawing it as a
    figure's text, with a tight bounding box, parsed it two or three times), and
    the raster, padded by PAD, is written as a PNG without metadata.
    """
    matplotlib = mpl()
    import numpy as np
    from matplotlib.font_manager import FontProperties
    from matplotlib.image import imsave

    with matplotlib.rc_context({**RC, "mathtext.fontset": "dejavusans"}):
        try:
            raster = _rasteriser().parse(f"${latex}$", dpi, FontProperties(size=fontsize))
        except Exception:  # noqa: BLE001 - mathtext cannot typeset it, as `typesets` would have said
            return None
    ink = np.asarray(raster.image, np.uint8)  # an array (matplotlib 3.11), or an FT2Image that reads as one (3.8-3.10)
    pad = round(PAD * dpi)
    grey = np.full((ink.shape[0] + 2 * pad, ink.shape[1] + 2 * pad), 255, np.uint8)
    grey[pad : pad + ink.shape[0], pad : pad + ink.shape[1]] -= ink
    buf = io.BytesIO()
    imsave(buf, np.repeat(grey[:, :, None], 3, axis=2), format="png", metadata={"Software": None},
           pil_kwargs={"compress_level": PNG_LEVEL})
    return buf.getvalue()
