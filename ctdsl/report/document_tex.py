"""The LaTeX writer of the document tree (`ctdsl.report.blocks`): the one writer of LaTeX for a paper,
used by `export latex` (`paper.py` builds the blocks) and by the notebook's MathJax writer
(`document_mathjax.py`), which writes the same equation rows without labels.

Spec text reaches LaTeX only here and through `encode.tex_text` (a name also through `tt`, which
lets a line break after each underscore); numbers and units through `paper_units`.
"""

from __future__ import annotations

import math

from ctdsl.report.blocks import EqRow, Equations, Grid, Name, Prose, Qty, TeX, Text
from ctdsl.report.encode import tex_text
from ctdsl.report.paper_units import num_tex, unit_tex


def tt(name: str) -> str:
    """A name in typewriter type that a line may break after each underscore."""
    return r"\texttt{" + tex_text(name).replace(r"\_", r"\_\allowbreak{}") + "}"


def run_tex(run) -> str:
    """A run of text in text mode: words escaped, a name in typewriter type, math between `$`."""
    if isinstance(run, str):
        return tex_text(run)
    if isinstance(run, Text):
        return tex_text(run.text)
    if isinstance(run, Name):
        return tt(run.text)
    if isinstance(run, TeX):
        return f"${run.tex}$"
    raise TypeError(run)  # pragma: no cover


def runs_tex(runs) -> str:
    return "".join(run_tex(r) for r in runs)


def prose_tex(p: Prose) -> str:
    """A paragraph: its head run in (`\\paragraph{head}`), then its runs."""
    head = rf"\paragraph{{{runs_tex(p.head)}}}" if p.head else ""
    return head + runs_tex(p.runs)


def row_tex(row: EqRow) -> str:
    return row.tex + " " + (rf"\label{{{row.label}}}" if row.label else r"\nonumber")


def equations_tex(eq: Equations) -> str:
    """An `align` display: a labelled row is numbered, the others continue it."""
    return "\\begin{align}\n" + " \\\\\n".join(row_tex(r) for r in eq.rows) + "\n\\end{align}"


def cell_tex(cell, units: str) -> str:
    """A table cell: text escaped, a name in typewriter type, a number through `paper_units`."""
    if isinstance(cell, Qty):
        v = cell.value
        return "--" if v is None or not math.isfinite(v) else f"${num_tex(v, units)}$"
    return run_tex(cell)


def grid_tex(g: Grid, units: str, columns: int = 1) -> str:
    """A table float with booktabs rules: its caption and label, its head, each column's unit under
    its head, its rows; `table*` when it is wide on a two-column page."""
    env = "table*" if g.wide and columns == 2 else "table"
    cols = g.cols or _cols(g)
    head = [" & ".join(runs_tex(h) if isinstance(h, tuple) else run_tex(h) for h in g.header) + r" \\"]
    if g.units:
        head.append(" & ".join(f"(${unit_tex(u, units)}$)" if u else "" for u in g.units) + r" \\")
    caption = rf"\caption{{{runs_tex(g.caption)}}}" + (rf"\label{{{g.label}}}" if g.label else "")
    return "\n".join(
        [
            rf"\begin{{{env}}}[tbp]",
            r"\centering\small\setlength{\tabcolsep}{4pt}",
            caption,
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            *head,
            r"\midrule",
            *[" & ".join(cell_tex(c, units) for c in row) + r" \\" for row in g.rows],
            r"\bottomrule",
            r"\end{tabular}",
            rf"\end{{{env}}}",
        ]
    )


def _cols(g: Grid) -> str:
    """Left-aligned text, right-aligned numbers; the last column wrapped where the table says so."""
    out = []
    for j in range(len(g.header)):
        numbers = any(isinstance(row[j], Qty) for row in g.rows)
        out.append("r" if numbers else "l")
    if g.wrap is not None:
        out[-1] = rf"p{{{g.wrap:g}\linewidth}}"
    return "".join(out)


__all__ = ["cell_tex", "equations_tex", "grid_tex", "prose_tex", "row_tex", "run_tex", "runs_tex", "tt"]
