"""matplotlib set up for files that are the same bytes each run: a figure on the Agg canvas, saved without metadata.

Determinism: the Agg renderer, DejaVu Sans (bundled with matplotlib), a fixed
`svg.hashsalt`, and no dates, software names or versions in the files'
metadata. matplotlib is imported here, inside the functions, so that commands
that draw nothing never load it.
"""

from __future__ import annotations

import io

from ctdsl.files import atomic_open
from ctdsl.report.plots.style import RC


def mpl():
    """matplotlib, with the Agg backend selected."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    return matplotlib


def new_figure(width: float, height: float):
    """A figure of that size in inches, on its own Agg canvas (no pyplot, no global state)."""
    mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def save(fig, path: str, fmt: str | None = None) -> None:
    """Write a figure as PNG, SVG or PDF with no date, software or version in it."""
    matplotlib = mpl()
    fmt = fmt or path.rsplit(".", 1)[-1].lower()
    if fmt == "png":
        meta = {"Software": None}
    elif fmt == "svg":
        meta = {"Date": None, "Creator": None, "Format": None, "Type": None}
    elif fmt == "pdf":
        meta = {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None}
    else:
        raise ValueError(f"cannot write a figure as {fmt!r}")
    with matplotlib.rc_context(RC), atomic_open(path, "wb") as fh:  # whole or not at all
        fig.savefig(fh, format=fmt, metadata=meta, dpi=150 if fmt == "png" else 72)


# zlib level of the PNGs embedded in documents: level 3 compresses the figures as small as 6 (within a
# tenth, smaller for the sweep figure) in half to two thirds of the time (Pillow's default is 6)
PNG_LEVEL = 3


def png_bytes(fig, dpi: int = 150) -> bytes:
    """A figure as PNG bytes, without metadata that would change between runs."""
    matplotlib = mpl()
    buf = io.BytesIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None}, pil_kwargs={"compress_level": PNG_LEVEL})
    return buf.getvalue()
