"""A report document as Markdown: images as data URIs, each exact form typeset as a picture by
mathtext (within the typesetting bounds below) with its LaTeX source; every text from a spec escaped."""

from __future__ import annotations

from ctdsl.version import __version__
from ctdsl.report.blocks import Bullets, Code, Grid, Image, Math, Para, Section
from ctdsl.report.document_html import data_uri
from ctdsl.report.encode import md_cell, md_fence, md_item, md_text
from ctdsl.report.plots import math_png

MAX_TYPESET_CHARS = 600  # characters of one form's LaTeX typeset as a picture (wider is not legible at a page's width)
MAX_TYPESET_TOTAL = 3_000  # characters of LaTeX one Markdown report typesets in all (mathtext: 0.3 ms or so each)


def _md_cell(c: str) -> str:
    return md_cell(c)


def _typeset_plan(sections: list[Section]) -> dict[int, str]:
    """Which forms Markdown shows as source only, and why: id of the Math block -> the reason.

    Typesetting costs a third of a millisecond or so per character of LaTeX
    (mathtext's parser: half a second for a break-even of 1,624 characters that
    examples/18_uncertainty.ct had, a picture 6,400 px wide), and a picture of a long
    form is wider than a page can show legibly: a form over MAX_TYPESET_CHARS is
    not typeset, and no form is once the report has typeset MAX_TYPESET_TOTAL
    characters. Both bound what a spec can make the report do, whatever its
    number of break-evens.
    """
    plan, total = {}, 0
    for b in _blocks(sections):
        if not isinstance(b, Math):
            continue
        n = len(b.latex)
        if n > MAX_TYPESET_CHARS:
            plan[id(b)] = f"{n:,} characters of LaTeX, too wide to typeset legibly (over {MAX_TYPESET_CHARS:,})"
        elif total + n > MAX_TYPESET_TOTAL:
            plan[id(b)] = f"the report has typeset the {MAX_TYPESET_TOTAL:,} characters of forms it typesets at most"
        else:
            total += n
    return plan


def _blocks(items):
    """Every block, sections opened, in document order."""
    for b in items:
        if isinstance(b, Section):
            yield from _blocks(b.blocks)
        else:
            yield b


def _md_block(b, plan: dict[int, str]) -> str:
    if isinstance(b, Para):
        return md_text(b.text)
    if isinstance(b, Bullets):
        return "\n".join(f"- {md_item(i)}" for i in b.items)
    if isinstance(b, Code):
        return md_fence(b.text, b.lang)
    if isinstance(b, Image):
        return f"![{md_text(b.alt)}]({data_uri(b.png)})"
    if isinstance(b, Math):  # Markdown cannot carry MathML: the form typeset as a picture, then its source
        why = plan.get(id(b))
        png = math_png(b.latex) if why is None else None
        if png is not None:
            out = f"![the exact form, typeset]({data_uri(png)})\n\n"
        else:
            out = f"({why or 'matplotlib cannot typeset this form'}; its LaTeX source:)\n\n"
        return out + md_fence(b.latex, "latex")
    if isinstance(b, Grid):
        lines = [f"**{md_text(b.title)}**", ""] if b.title else []
        lines.append("| " + " | ".join(_md_cell(h) for h in b.header) + " |")
        lines.append("|" + "|".join("---" for _ in b.header) + "|")
        for i, row in enumerate(b.rows):
            cells = [f"**{_md_cell(c)}**" if (i, j) in b.marked and c else _md_cell(c) for j, c in enumerate(row)]
            lines.append("| " + " | ".join(cells) + " |")
        for n in b.notes:
            lines += ["", f"_{md_text(n)}_"]
        return "\n".join(lines)
    if isinstance(b, Section):
        return _md_section(b, plan)
    raise TypeError(b)  # pragma: no cover


def _md_section(s: Section, plan: dict[int, str]) -> str:
    return "#" * s.level + " " + md_text(s.title) + "\n\n" + "\n\n".join(_md_block(b, plan) for b in s.blocks)


def to_markdown(title: str, sections: list[Section]) -> str:
    plan = _typeset_plan(sections)
    body = "\n\n".join(_md_section(s, plan) for s in sections)
    return (
        f"# {md_text(title)}\n\n{body}\n\n---\n\n"
        f"_Made by ctdsl {__version__}: ctdsl report. Images are embedded as data URIs; equations rendered by matplotlib mathtext, LaTeX source under each._\n"
    )
