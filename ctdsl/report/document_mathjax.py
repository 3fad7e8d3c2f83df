"""The MathJax writer of the document tree (`ctdsl.report.blocks`): what a notebook's
`_repr_latex_` (Jupyter's text/latex) shows.

MathJax typesets math and nothing else (no sectioning, no tabular, no preamble, no siunitx), so
each block is a `$$...$$` display: a section's title in bold, a paragraph's head in bold and its runs as `\\text` with math
between them, equations as `aligned` (the rows `document_tex` numbers and labels, without labels),
a table as an `array` with each column's unit under its head. Spec text goes through
`encode.mathjax_text` (plain runs in `\\text`, every other character a math command); the
equations' `\\text` (tex_text's escapes) through `encode.tex_text_to_mathjax`.
"""

from __future__ import annotations

import math

from ctdsl.report.blocks import Equations, Grid, Name, Prose, Qty, Section, TeX, Text
from ctdsl.report.encode import mathjax_text, tex_text, tex_text_to_mathjax
from ctdsl.report.paper_units import number


def run_mathjax(run, command: str = "text") -> str:
    if isinstance(run, str):
        return mathjax_text(run, command)
    if isinstance(run, (Text, Name)):
        return mathjax_text(run.text, command)
    if isinstance(run, TeX):
        return run.tex
    raise TypeError(run)  # pragma: no cover


def runs_mathjax(runs, command: str = "text") -> str:
    return "".join(run_mathjax(r, command) for r in runs)


def qty_mathjax(value: float | None, unit: str) -> str:
    """A number with its unit upright after a thin space, as siunitx sets it: `12.5\\,\\mathrm{GB/s}`."""
    if value is None or not math.isfinite(value):
        return mathjax_text("n/a")
    text = number(value)
    if "e" in text:
        m, e = text.split("e")
        text = rf"{m} \cdot 10^{{{e}}}"
    return text + (r"\,\mathrm{" + tex_text(unit).replace(r"\_", "_") + "}" if unit and unit != "1" else "")


def prose_mathjax(p: Prose) -> str:
    """A paragraph: its head as one bold display, its runs as another."""
    out = []
    if p.head:
        out.append("$$" + runs_mathjax(p.head, "textbf") + "$$")
    out.append("$$" + runs_mathjax(p.runs) + "$$")
    return "\n\n".join(out)


def equations_mathjax(eq: Equations) -> str:
    return "$$" + tex_text_to_mathjax(eq.aligned()) + "$$"


def grid_mathjax(g: Grid) -> str:
    """A table as an array: names and words as text, numbers with their column's unit under its head."""
    head = [" & ".join(runs_mathjax(h) if isinstance(h, tuple) else run_mathjax(h) for h in g.header) + r" \\"]
    if g.units:
        head.append(" & ".join(r"\mathrm{" + tex_text(u).replace(r"\_", "_") + "}" if u else "" for u in g.units) + r" \\")
    head[-1] += r" \hline"
    rows = []
    for row in g.rows:
        cells = [qty_mathjax(c.value, "" if g.units else c.unit) if isinstance(c, Qty) else run_mathjax(c) for c in row]
        rows.append(" & ".join(cells) + r" \\")
    return "$$\\begin{array}{" + "l" * len(g.header) + "}" + "\n".join(head + rows) + "\n\\end{array}$$"


def to_mathjax(blocks) -> str:
    out = []
    for b in blocks:
        if isinstance(b, Prose):
            out.append(prose_mathjax(b))
        elif isinstance(b, Equations):
            out.append(equations_mathjax(b))
        elif isinstance(b, Grid):
            out.append(grid_mathjax(b))
        elif isinstance(b, Section):  # its title as a bold display, then its blocks
            out.append("$$" + mathjax_text(b.title, "textbf") + "$$")
            out.append(to_mathjax(b.blocks))
        else:
            raise TypeError(b)  # pragma: no cover
    return "\n\n".join(out)


__all__ = ["equations_mathjax", "grid_mathjax", "prose_mathjax", "qty_mathjax", "to_mathjax"]
