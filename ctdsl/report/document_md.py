"""The Markdown writer of the document model (`ctdsl.report.blocks`): a report (`to_markdown`), the
solve tables (`tables_md`) and any blocks (`blocks_md`). Images as data URIs, each exact form or
display of equations as a `$$` block, which GitHub renders as math (its source, for any other
viewer); every text from a spec escaped.

Spec text never forms math: `encode.md_text` writes `$` as an entity. The LaTeX inside a `$$` block
is made from the results (symbols through `paper_units.symbol_tex`: a display name only where it is
safe LaTeX, CT310's rule), so nothing in it can close the block: it holds no `$`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ctdsl.version import __version__
from ctdsl.report.blocks import Bullets, Code, Equations, Grid, Image, Math, Name, Para, Prose, Section, TeX, Text, cell_text
from ctdsl.report.document_html import data_uri
from ctdsl.report.encode import md_cell, md_fence, md_item, md_text, tex_text_to_mathjax

_DOLLAR = re.compile(r"(?<!\\)\$")


def _md_cell(c) -> str:
    """A table cell: its text (`blocks.cell_text`) with Markdown's escapes; math as GitHub's inline math."""
    if isinstance(c, TeX):
        return "$" + _DOLLAR.sub(r"\\$", c.tex).replace("|", r"\vert ") + "$"
    return md_cell(cell_text(c))


def _md_run(run, first: bool) -> str:
    """A run of a paragraph: words and names escaped (the first also kept from opening a block), math inline."""
    if isinstance(run, TeX):
        return _md_cell(run)
    text = run.text if isinstance(run, (Text, Name)) else run
    return md_text(text) if first else md_cell(text)


def _md_prose(p: Prose) -> str:
    head = "**" + "".join(_md_run(r, False) for r in p.head) + "**" if p.head else ""
    runs = "".join(_md_run(r, i == 0 and not head) for i, r in enumerate(p.runs))
    return head + runs


def _md_block(b) -> str:
    if isinstance(b, Para):
        return md_text(b.text)
    if isinstance(b, Prose):
        return _md_prose(b)
    if isinstance(b, Equations):  # one display of aligned rows, without the LaTeX writer's labels
        return "$$\n" + _DOLLAR.sub(r"\\$", tex_text_to_mathjax(b.aligned())) + "\n$$"
    if isinstance(b, Bullets):
        return "\n".join(f"- {md_item(i)}" for i in b.items)
    if isinstance(b, Code):
        return md_fence(b.text, b.lang)
    if isinstance(b, Image):
        return f"![{md_text(b.alt)}]({data_uri(b.png)})"
    if isinstance(b, Math):  # GitHub's math: a display block on lines of its own
        return "$$\n" + _DOLLAR.sub(r"\\$", b.latex) + "\n$$"  # a `$` escaped: nothing closes the block
    if isinstance(b, Grid):
        return grid_md(b)
    if isinstance(b, Section):
        return _md_section(b)
    raise TypeError(b)  # pragma: no cover


def grid_md(b: Grid) -> str:
    """A table: its title in bold above it (when it has one), a marked cell in bold, each note in italics under it."""
    lines = [f"**{md_text(b.title)}**", ""] if b.title else []
    lines.append("| " + " | ".join(_md_cell(h) for h in b.header) + " |")
    lines.append("|" + "|".join("---:" if j < len(b.align) and b.align[j] == "right" else "---" for j in range(len(b.header))) + "|")
    for i, row in enumerate(b.rows):
        cells = [f"**{_md_cell(c)}**" if (i, j) in b.marked and c else _md_cell(c) for j, c in enumerate(row)]
        lines.append("| " + " | ".join(cells) + " |")
    for n in b.notes:
        lines += ["", f"_{md_text(n)}_"]
    return "\n".join(lines)


def _md_section(s: Section) -> str:
    return "#" * s.level + " " + md_text(s.title) + "\n\n" + "\n\n".join(_md_block(b) for b in s.blocks)


def headed(t: Grid, level: int = 2) -> Section:
    """A table under a heading of its title, as a page of tables gives it (`ctdsl solve --format markdown`)."""
    return Section(t.title or "", [replace(t, title=None)], level)


def blocks_md(blocks: Sequence) -> str:
    """Blocks one after the other, each a paragraph of its own; the text ends with a newline."""
    return "\n\n".join(_md_block(b) for b in blocks) + "\n"


def tables_md(tables: Sequence[Grid], level: int = 2) -> str:
    """Tables each under a heading of its title (`headed`)."""
    return blocks_md([headed(t, level) for t in tables])


def to_markdown(title: str, sections: list[Section]) -> str:
    body = "\n\n".join(_md_section(s) for s in sections)
    return (
        f"# {md_text(title)}\n\n{body}\n\n---\n\n"
        f"_Made by ctdsl {__version__}: ctdsl report. Images are embedded as data URIs; equations are LaTeX in $$ blocks, which GitHub renders as math._\n"
    )
