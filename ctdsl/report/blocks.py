"""The document model of every output: the blocks a document is made of, built once from the results
and written by one writer per format, as diagnostics are.

Blocks: paragraphs (`Para`, or `Prose` of typed runs), bullets, code, images, exact forms (`Math`,
`Equations`), tables (`Grid`), sections. The builders: `tables` and the other `*_tables` / `*_out`
modules (the tables of solve and the other commands), `document` (`ctdsl report`), `paper`
(`export latex` and the notebook's equations). The writers: `document_rich` (the terminal),
`document_md` (Markdown), `document_html` (HTML), `document_tex` (LaTeX) and `document_mathjax`
(a notebook's MathJax). A block says what it holds; each writer encodes it for its sink
(`ctdsl.report.encode`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Image:
    png: bytes
    alt: str
    width: int | None = None  # CSS pixels to show it at


@dataclass
class Math:
    latex: str
    # the same form as MathML, what the HTML shows (selectable, searchable text): made when the HTML asks for
    # it, since Markdown shows a picture instead (printing MathML of a long form takes a tenth of a second)
    make_mathml: Callable[[], str]

    @property
    def mathml(self) -> str:
        return self.make_mathml()


@dataclass
class Code:
    text: str
    lang: str = ""


@dataclass
class Para:
    text: str


@dataclass
class Bullets:
    items: list[str]




@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)
    level: int = 2


# ---- typed cells and runs of text ------------------------------------------------------------
# A table cell or a run of a paragraph says what it is, and each writer encodes it for its sink
# (ctdsl.report.encode): spec text is never written into a block already encoded.


@dataclass(frozen=True)
class Text:
    """Plain words (spec text or ctdsl's own): escaped by each writer."""

    text: str


@dataclass(frozen=True)
class Name:
    """A name from the spec (a scheme, a param): typewriter in LaTeX, escaped by each writer."""

    text: str


@dataclass(frozen=True)
class Qty:
    """A number with its unit: `value` in `unit` (the column's unit when the table gives one); None
    or a value that is not finite is shown as no value."""

    value: float | None
    unit: str = ""


@dataclass(frozen=True)
class TeX:
    """Math, as LaTeX made from the results (symbols through `paper_units.symbol_tex`, numbers and
    units through `paper_units`): never spec text that was not encoded."""

    tex: str


Run = Text | Name | TeX
Cell = str | Text | Name | Qty | TeX  # a str is Text (the solve tables' rows are strings)


@dataclass
class Prose:
    """A paragraph of runs, with an optional run-in head (LaTeX's \\paragraph)."""

    runs: tuple
    head: tuple = ()


@dataclass(frozen=True)
class EqRow:
    """One row of a display of equations: LaTeX with one `&` alignment point; numbered and labelled
    when it has a label, else a continuation (the LaTeX writer adds `\\nonumber`)."""

    tex: str
    label: str | None = None


@dataclass
class Equations:
    rows: list[EqRow]

    def aligned(self) -> str:
        """The rows as one `aligned` block, without labels: what a writer of math that has no
        numbered equations shows (MathJax, GitHub's math, an HTML page's LaTeX source)."""
        return "\\begin{aligned}\n" + " \\\\\n".join(r.tex for r in self.rows) + "\n\\end{aligned}"


@dataclass
class Grid:
    """A table: a title, a header, rows of cells (`Cell`: a str is Text), cells to emphasise, notes under it.

    The one table of every output: the solve tables and every other command's are Grids, which
    the terminal (`document_rich`), Markdown (`document_md`), HTML (`document_html`) and LaTeX
    (`document_tex`, `document_mathjax`) writers write.

    For a paper (the LaTeX writer) also: `units`, each column's unit (a Qty column's values are in
    it, shown under its head); a `caption` (runs) and a `label`; the last column wrapped to a share
    of the line (`wrap`); spanning both columns of a two-column page (`wide`); `cols`, LaTeX's
    column spec where the writer should not choose it from the cells. `align`: each column's
    alignment, where a writer of text should not left-align it (numbers in a column of their own)."""

    title: str | None
    header: list
    rows: list[list] = field(default_factory=list)
    marked: set = field(default_factory=set)  # (row, column) cells to emphasise
    notes: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    caption: tuple = ()
    label: str = ""
    wrap: float | None = None
    wide: bool = False
    cols: str | None = None
    align: list[str] = field(default_factory=list)  # a column's alignment, "left" or "right" (the terminal's and Markdown's)


def cell_text(c) -> str:
    """A cell as plain text, for the writers of text (Markdown, HTML), which encode it for their sink:
    words and names as they are, a number with its unit as the tables print it, math as its LaTeX."""
    if isinstance(c, str):
        return c
    if isinstance(c, (Text, Name)):
        return c.text
    if isinstance(c, Qty):
        if c.value is None or c.value != c.value or c.value in (float("inf"), float("-inf")):
            return "n/a"
        return f"{c.value:.4g}" + (f" {c.unit}" if c.unit and c.unit != "1" else "")
    if isinstance(c, TeX):
        return c.tex
    raise TypeError(c)  # pragma: no cover
