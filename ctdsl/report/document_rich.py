"""The terminal writer of the document model (`ctdsl.report.blocks`): blocks through rich, as
`ctdsl solve` and the other commands print them.

A table (`Grid`) is a rich table: its title bold on the left, its first column (the row's name,
a scheme) never broken, the others folded to the terminal's width; marked cells in bold yellow
(followed by `mark`, which shows them where there is no colour); its notes dimmed under it. A
paragraph of runs (`Prose`) is its head in bold, then its runs; a section its title in bold, then
its blocks; math its LaTeX source, indented; a figure what it shows, in words. Every text passes `encode.rich_text` (markup escaped, control characters shown).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctdsl.report.blocks import Bullets, Code, Equations, Grid, Image, Math, Para, Prose, Section, cell_text
from ctdsl.report.encode import rich_text

if TYPE_CHECKING:  # types only: rich is imported when a block is printed
    from rich.console import Console


def _runs(runs) -> str:
    return "".join(rich_text(cell_text(r)) for r in runs)


def print_grid(console: Console, t: Grid, mark: str = "") -> None:
    from rich.table import Table as RichTable

    esc = rich_text
    rt = RichTable(title=esc(t.title) if t.title else None, title_justify="left", title_style="bold", header_style="bold")
    for j, h in enumerate(t.header):  # the first column names the row (a scheme): never broken
        h = cell_text(h)
        justify = t.align[j] if j < len(t.align) and t.align[j] else "left"
        rt.add_column(esc(h), overflow="fold", no_wrap=j == 0, min_width=len(h) if j == 0 else None, justify=justify)
    for i, row in enumerate(t.rows):
        rt.add_row(*[f"[bold yellow]{esc(cell_text(c))}{mark}[/]" if (i, j) in t.marked else esc(cell_text(c)) for j, c in enumerate(row)])
    console.print(rt)
    for n in t.notes:
        console.print(f"  [dim]{esc(n)}[/dim]")


def print_block(console: Console, b: object, mark: str = "") -> None:
    if isinstance(b, Grid):
        print_grid(console, b, mark)
    elif isinstance(b, Prose):
        console.print((f"[bold]{_runs(b.head)}[/bold]" if b.head else "") + _runs(b.runs))
    elif isinstance(b, Para):
        console.print(rich_text(b.text))
    elif isinstance(b, Bullets):
        for item in b.items:
            console.print(f"- {rich_text(item)}")
    elif isinstance(b, Code):
        console.print(rich_text(b.text))
    elif isinstance(b, Math):  # a terminal shows the LaTeX source, indented
        console.print("  " + rich_text(b.latex))
    elif isinstance(b, Equations):
        for r in b.rows:
            console.print("  " + rich_text(r.tex.replace("&", "")))
    elif isinstance(b, Image):  # no picture on a terminal: what it shows
        console.print(rich_text(f"(figure: {b.alt})"))
    elif isinstance(b, Section):
        console.print(f"[bold]{rich_text(b.title)}[/bold]")
        for x in b.blocks:
            print_block(console, x, mark)
    else:
        raise TypeError(b)  # pragma: no cover


def print_blocks(console: Console, blocks: Sequence, mark: str = "") -> None:
    """Blocks one after the other, then an empty line."""
    for b in blocks:
        print_block(console, b, mark)
    console.print()


__all__ = ["print_block", "print_blocks", "print_grid"]
