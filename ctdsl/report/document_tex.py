"""The LaTeX writer of the document tree (`ctdsl.report.blocks`): the one writer of LaTeX for a paper,
used by `export latex` (`paper.py` builds the blocks) and by the notebook's MathJax writer
(`document_mathjax.py`), which writes the same equation rows without labels. It writes every kind
of block (`block_tex`, `blocks_tex`): a paper's paragraphs, equations and tables, and any section
a builder adds (headings, bullets, code, a display of math; a figure as a comment naming it, since
a fragment has no file to include).

Spec text reaches LaTeX only here and through `encode.tex_text` (a name also through `tt`, which
lets a line break after each underscore); numbers and units through `paper_units`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ctdsl.diagnostics.terminal import command_safe
from ctdsl.report.blocks import Bullets, Code, EqRow, Equations, Grid, Image, Math, Name, Para, Prose, Qty, Section, TeX, Text
from ctdsl.report.encode import tex_text
from ctdsl.report.paper_units import SIUNITX, num_tex, number, unit_tex


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


def cell_tex(cell, units: str, s_column: bool = False) -> str:
    """A table cell: text escaped, a name in typewriter type, a number through `paper_units` (in an
    S column, the bare number siunitx aligns on its decimal point; anything else there braced)."""
    if isinstance(cell, Qty):
        v = cell.value
        if v is None or not math.isfinite(v):
            return "{--}" if s_column else "--"
        return number(v) if s_column else f"${num_tex(v, units)}$"
    return "{" + run_tex(cell) + "}" if s_column else run_tex(cell)


def grid_tex(g: Grid, units: str, columns: int = 1) -> str:
    """A table float with booktabs rules: its caption (its title where it has no caption) and label,
    its head, each column's unit under its head, its rows (a marked cell in bold), its notes under
    it; `table*` when it is wide on a two-column page."""
    env = "table*" if g.wide and columns == 2 else "table"
    spec = _cols(g, units)
    cols = g.cols or "".join(spec)
    s_cols = [c.startswith("S") for c in spec]
    head = [" & ".join(_braced(run_tex(h), s) for h, s in zip(g.header, s_cols)) + r" \\"]
    if g.units:
        head.append(" & ".join(_braced(f"(${unit_tex(u, units)}$)", s) if u and u != "1" else "" for u, s in zip(g.units, s_cols)) + r" \\")
    caption = rf"\caption{{{runs_tex(g.caption or ((Text(g.title),) if g.title else ()))}}}" + (rf"\label{{{g.label}}}" if g.label else "")
    rows = [
        " & ".join(_bold(cell_tex(c, units, sc), sc) if (i, j) in g.marked else cell_tex(c, units, sc) for j, (c, sc) in enumerate(zip(row, s_cols))) + r" \\"
        for i, row in enumerate(g.rows)
    ]
    return "\n".join(
        [
            rf"\begin{{{env}}}[tbp]",
            r"\centering\small\setlength{\tabcolsep}{4pt}",
            caption,
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            *head,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            *(rf"\par\smallskip{{\footnotesize {tex_text(n)}}}" for n in g.notes),
            rf"\end{{{env}}}",
        ]
    )


_SECTION = {1: "section", 2: "section", 3: "subsection", 4: "subsubsection"}


def block_tex(b: object, units: str = SIUNITX, columns: int = 1) -> str:
    """Any block: a section as an unnumbered heading (`\\section*` for a level-2 section, one
    deeper per level) and its blocks; a paragraph; bullets as `itemize`; code as typewriter lines;
    a display of math; a figure, which a LaTeX fragment has no file for, as a comment naming it."""
    if isinstance(b, Prose):
        return prose_tex(b)
    if isinstance(b, Equations):
        return equations_tex(b)
    if isinstance(b, Grid):
        return grid_tex(b, units, columns)
    if isinstance(b, Para):
        return tex_text(b.text)
    if isinstance(b, Section):
        head = rf"\{_SECTION.get(b.level, 'paragraph')}*{{{tex_text(b.title)}}}"
        return "\n\n".join([head, *(block_tex(x, units, columns) for x in b.blocks)])
    if isinstance(b, Bullets):
        return "\\begin{itemize}\n" + "\n".join(rf"\item {tex_text(i)}" for i in b.items) + "\n\\end{itemize}"
    if isinstance(b, Code):
        return "\\begin{flushleft}\\ttfamily\n" + "\\\\\n".join(tex_text(line) or "~" for line in b.text.split("\n")) + "\n\\end{flushleft}"
    if isinstance(b, Math):
        return rf"\[ {b.latex} \]"
    if isinstance(b, Image):
        return "% a figure, not in a LaTeX fragment: " + command_safe("".join(c if c.isprintable() else "?" for c in b.alt))
    raise TypeError(b)  # pragma: no cover


def blocks_tex(blocks: Sequence, units: str = SIUNITX, columns: int = 1) -> str:
    """Blocks one after the other, an empty line between them, but a display of equations continues
    the paragraph before it (no empty line: no new paragraph after the display)."""
    out = []
    for b in blocks:
        if out:
            out.append("\n" if isinstance(b, (Equations, Math)) else "\n\n")
        out.append(block_tex(b, units, columns))
    return "".join(out)


def _bold(tex: str, s_column: bool) -> str:
    return "{\\bfseries " + tex + "}" if s_column else r"\textbf{" + tex + "}"


def _braced(tex: str, s_column: bool) -> str:
    return "{" + tex + "}" if s_column and tex else tex


def _cols(g: Grid, units: str) -> list[str]:
    """Left-aligned text; numbers aligned on the decimal point (siunitx's S column, its format from
    the numbers: digits before and after the point, an exponent), right-aligned with plain units;
    the last column wrapped where the table says so."""
    out = []
    for j in range(len(g.header)):
        values = [row[j].value for row in g.rows if isinstance(row[j], Qty)]
        numbers = [number(v) for v in values if v is not None and math.isfinite(v)]
        if not values:
            out.append("l")
        elif units == SIUNITX and numbers:
            out.append(f"S[table-format={table_format(numbers)}]")
        else:
            out.append("r")
    if g.wrap is not None:
        out[-1] = rf"p{{{g.wrap:g}\linewidth}}"
    return out


def table_format(numbers: list[str]) -> str:
    """siunitx's table-format for numbers as `paper_units.number` writes them: `-3.2e-1` is a sign, 3
    digits before the point, 2 after, an exponent of 1 digit with its sign."""
    sign = any(n.startswith("-") for n in numbers)
    whole = frac = exp = 0
    exp_sign = False
    for n in numbers:
        m, _, e = n.lstrip("-").partition("e")
        i, _, f = m.partition(".")
        whole, frac = max(whole, len(i)), max(frac, len(f))
        if e:
            exp_sign = exp_sign or e.startswith("-")
            exp = max(exp, len(e.lstrip("-")))
    out = ("-" if sign else "") + str(whole) + (f".{frac}" if frac else "")
    return out + (f"e{'-' if exp_sign else ''}{exp}" if exp else "")


__all__ = ["block_tex", "blocks_tex", "table_format", "cell_tex", "equations_tex", "grid_tex", "prose_tex", "row_tex", "run_tex", "runs_tex", "tt"]
