"""`ctdsl report`: one self-contained document, HTML or Markdown.

Sections, in order:

1. the spec's summary: its opening comment, what it declares (params, data
   centres, schemes), and the first scheme to the target at the defaults;
2. the topology, drawn from the graph (`plots.topology_figure`);
3. the solve tables (`tables.all_tables`, as `ctdsl solve` prints them);
4. the sweep figure (`plots.sweep_figure`, as `ctdsl sweep --plot` draws it),
   its notes (which scheme leads where, the break-evens and the regime changes
   in words) given as text under it rather than drawn;
5. each break-even: what it says, and its exact form in LaTeX.

The document only reads what it is given: the solution, the topology graph and
the sweep figure's curves, computed by the caller
(`ctdsl.numeric.crossings.sweep_curves`).

Everything is inside the one file: images are PNG, embedded as base64 data
URIs. Equations: MathJax cannot be embedded offline here, so each break-even's
LaTeX is rendered to an image by matplotlib's mathtext (a subset of LaTeX that
covers these forms) and its source is given underneath in a code block, so it
can be copied. Where mathtext cannot typeset a form, only the source is shown,
and so it is for a form over MAX_TYPESET_CHARS characters of LaTeX, or past
MAX_TYPESET_TOTAL characters typeset in one report (`_typeset_plan`).

The same spec gives the same bytes: no dates, no absolute paths (the spec is
named as it was given), images rendered deterministically.
"""

from __future__ import annotations

import base64
import os
import stat
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ctdsl import __version__, limits
from ctdsl import units as U
from ctdsl.model.graph import replicas_text
from ctdsl.report.encode import html_text as escape
from ctdsl.report.encode import md_cell, md_item, md_text
from ctdsl.report.explore.mathml import mathml_equation
from ctdsl.report.html import table_html
from ctdsl.report.paper_forms import Printer
from ctdsl.report.latex import _qtex, _unit_tex, symbol_tex
from ctdsl.report.words import count_of
from ctdsl.results.quantity import Quantity
from ctdsl.report.plots import math_png, png_bytes, sweep_figure, sweep_notes, topology_figure
from ctdsl.report.tables import all_tables, params_line

MAX_TYPESET_CHARS = 600  # characters of one form's LaTeX typeset as a picture (wider is not legible at a page's width)
MAX_TYPESET_TOTAL = 3_000  # characters of LaTeX one Markdown report typesets in all (mathtext: 0.3 ms or so each)


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
class Grid:
    """A table: header, rows of strings, cells to emphasise, notes under it."""

    title: str | None
    header: list[str]
    rows: list[list[str]]
    marked: set = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


@dataclass
class Section:
    title: str
    blocks: list = field(default_factory=list)
    level: int = 2


def _opening_comment(path: str) -> list[str]:
    """The spec's opening comment, as paragraphs (text only; nothing in it is run)."""
    try:  # the spec was read and checked already; read it again only if it is still a small regular file
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limits.MAX_FILE_BYTES:
            return []
        with open(path, "rb") as fh:
            text = fh.read(limits.MAX_FILE_BYTES + 1).decode("utf-8")
    except (OSError, ValueError):
        return []
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            lines.append(s[1:].strip())
        elif s == "" and not lines:
            continue
        else:
            break
    paras, cur = [], []
    for l in lines:
        if l:
            cur.append(l)
        elif cur:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return paras


def _q(value, dim) -> str:
    return U.format_quantity(value, dim)


def build(sol, graph, curves, extra=()) -> tuple[str, list[Section]]:
    """The title and sections of the report: `graph` is the topology, `curves` the sweep figure's data (or None);
    `extra`: more sections at the end (`ctdsl report --sensitivity`)."""
    title = f"{Path(sol.spec.root).name}: sync schemes across slow links"
    return title, [_summary(sol), _topology(sol.spec, graph), _solve_tables(sol), _plots(sol, curves), _break_evens(sol), *extra]


def _workers(spec, dc) -> str:
    """A dc's workers, or its replicas: `256 x tp8pp4`, `4 sites x 256 x tp8pp4` (a count as written where a param sets it)."""
    return replicas_text(dc) if dc.replica else str(dc.workers)


def _summary(sol) -> Section:
    """The spec's own words, what it declares, and the first scheme to the target."""
    spec = sol.spec
    s = Section("Summary")
    for p in _opening_comment(spec.root):
        s.blocks.append(Para(p))
    workers = sum(dc.workers * dc.n_sites for dc in spec.dcs.values())
    sites = sum(dc.n_sites for dc in spec.dcs.values())
    centres = count_of(len(spec.dcs), "data centre") + (f" ({sites:,} sites)" if sites != len(spec.dcs) else "")
    s.blocks.append(
        Para(
            f"Spec {spec.root}: {centres}, {count_of(workers, 'worker')}, {count_of(len(spec.schemes), 'scheme')}"
            + (f", baseline {sol.baseline}" if sol.baseline else "")
            + f". Params at the values used: {params_line(sol)}."
        )
    )
    timed = [r for r in sol.schemes.values() if r.time_to_target is not None]
    if timed:
        best = min(timed, key=lambda r: r.time_to_target.value)
        line = f"At these values, {best.name} ({best.label}) reaches the target first, in {best.time_to_target}"
        base = sol.schemes.get(sol.baseline) if sol.baseline else None
        if base is not None and base.time_to_target is not None and base is not best:
            line += f", against {base.time_to_target} for the baseline {base.name}"
        s.blocks.append(Para(line + "."))
    priced = [r for r in timed if r.cost_to_target is not None]
    if priced:  # a spec that prices something (docs/codesign.md)
        cheap = min(priced, key=lambda r: r.cost_to_target.value)
        s.blocks.append(Para(f"The cheapest to the target is {cheap.name} ({cheap.label}), at {cheap.cost_to_target}."))
    rows = []
    for p in spec.params.values():
        rng = f"{_q(p.lo, p.dim)} .. {_q(p.hi, p.dim)}" if p.lo is not None else "-"
        sweep = f"{p.spacing} {p.count}" if p.spacing and p.count else "-"
        rows.append([p.name, _q(p.default, p.dim), rng, sweep])
    if rows:
        s.blocks.append(Grid("Params", ["param", "value", "range", "sweep"], rows))
    rows = []
    for dc in spec.dcs.values():
        rows.append([dc.name, _workers(spec, dc), dc.device, dc.link, dc.switch or "-", dc.pluggable or "-"])
    s.blocks.append(Grid("Data centres", ["dc", "workers", "device", "intra link", "switch", "pluggable"], rows))
    if spec.variants:  # each variant's dcs, and the schemes that run on it
        rows = []
        for name, v in spec.variants.items():
            on = ", ".join(r.name for r in sol.schemes.values() if r.sites == name) or "-"
            for dc in v.dcs.values():
                rows.append([name, dc.name, _workers(spec, dc), dc.device, dc.link, dc.switch or "-", dc.pluggable or "-", on])
        s.blocks.append(Grid("Variants of the sites", ["variant", "dc", "workers", "device", "intra link", "switch", "pluggable", "schemes"], rows))
    rows = []
    for r in sol.schemes.values():
        rows.append([r.name, r.label, r.payload_kind, r.collective, r.at, f"{r.period:g}", f"{r.steps:g}" if r.steps is not None else "n/a"])
    s.blocks.append(Grid("Schemes", ["scheme", "label", "payload", "collective", "transform at", "H", "steps to target"], rows))
    return s


def _topology(spec, graph) -> Section:
    t = Section("Topology")
    t.blocks.append(Para("Drawn from the graph ctdsl builds (ctdsl graph FILE): a node per worker, per module in a worker's port and per switch; WAN links between switches."))
    t.blocks.append(Image(png_bytes(topology_figure(spec, graph), dpi=130), "the topology: data centres, workers, modules, switches and WAN links"))
    return t


def _solve_tables(sol) -> Section:
    tb = Section("Solve tables")
    tb.blocks.append(Para("The tables of ctdsl solve, at the params' values above."))
    for table in all_tables(sol):
        tb.blocks.append(Grid(table.title, table.header, table.rows, set(table.marked), list(table.notes)))
    return tb


def _plots(sol, curves) -> Section:
    pl = Section("Plots")
    pl.blocks.append(
        Para(
            "Time to target against the first ranged data-rate param, one curve per scheme, with the break-evens and the points where "
            "what binds a step changes; the step time at the values above, by component; the pluggable module's stages."
        )
    )
    if not sol.schemes:
        pl.blocks.append(Para("No schemes to plot: the spec declares no scheme."))
    pl.blocks.append(Image(png_bytes(sweep_figure(sol, curves, notes=False), dpi=110), "time to target against bandwidth; step components; module stages"))
    # the figure's notes as text: selectable, read where data: images are not (GitHub's viewer), and a third
    # less to draw (the flagship's figure has 2,200 characters of text, half of them in its notes)
    for head, lines in sweep_notes(sol, curves):
        pl.blocks.append(Section(head, [Bullets(lines)], level=3) if head else Bullets(lines))
    return pl


def _break_evens(sol) -> Section:
    """Each break-even in words, and each of its roots typeset, with the LaTeX source under it.

    A break-even stated more than once is given once, with how many times it is
    stated (the tables list every statement)."""
    be = Section("Break-even")
    if not sol.breakevens:
        be.blocks.append(Para("The spec asks for no break-even and has no baseline to compare with."))
    printer = Printer(sol.symbols, None, one_line=True)
    stated = Counter((b.x, b.y, b.over, b.on) for b in sol.breakevens)
    shown_once: set = set()
    for b in sol.breakevens:
        key = (b.x, b.y, b.over, b.on)
        if key in shown_once:
            continue
        shown_once.add(key)
        times = f" (stated {stated[key]} times)" if stated[key] > 1 else ""
        sub = Section(f"{b.x} vs {b.y} over {b.over}" + (f" on {b.on}" if b.on != "time" else "") + times, level=3)
        if not b.roots:
            sub.blocks.append(Para(b.describe() + "."))
        for root in b.roots:
            info = sol.symbols.info[b.over]
            words = "; ".join(root.regime)
            shown = U.format_quantity(root.value, b.dim)
            if root.numeric:  # no exact form: the value, found by a scan and Brent's method
                latex = f"{symbol_tex(info)}^{{*}} \\approx {_qtex(shown)}"
                ml = partial(mathml_equation, b.over, None, shown, "", approx=True)
                how = ". A numeric root (bracketed by a sign change and refined by Brent's method): sympy gives no exact form."
            else:
                f = printer.form(Quantity(root.expr, root.value, b.dim))  # as export latex writes it
                latex = f"{symbol_tex(info)}^{{*}} = {' '.join(f.terms)}{_unit_tex(f.unit)}"
                ml = partial(mathml_equation, b.over, f.expr, shown, f.unit)
                how = ". The form is exact in the other params; numbers are rounded to four figures and symbols are in their declared units."
            sub.blocks.append(Math(latex, ml))
            sub.blocks.append(
                Para(
                    f"{b.over}* = {U.format_quantity(root.value, b.dim)}: {root.below} is {b.better} below, {root.above} above"
                    + (f" ({words})" if words else "")
                    + how
                )
            )
        be.blocks.append(sub)
    return be


# ---- HTML ------------------------------------------------------------------------------

CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; max-width: 1060px; margin: 2em auto; padding: 0 1em; color: #111; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .6em 0 .3em; font-size: .88em; }
th, td { border: 1px solid #bbb; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #eee; } td.mark { font-weight: bold; background: #fff4d6; }
caption { text-align: left; font-weight: bold; padding: .3em 0; }
p.note { font-size: .85em; color: #444; margin: .1em 0 .9em; }
img { max-width: 100%; height: auto; display: block; margin: .6em 0; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: .6em; overflow-x: auto; font-size: .85em; white-space: pre-wrap; word-break: break-all; }
footer { margin-top: 3em; font-size: .8em; color: #666; }
@media print { body { max-width: none; } h2 { page-break-after: avoid; } img { page-break-inside: avoid; } }
"""


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _html_block(b) -> str:
    if isinstance(b, Para):
        return f"<p>{escape(b.text)}</p>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Code):
        return f"<pre><code>{escape(b.text)}</code></pre>"
    if isinstance(b, Image):
        w = f' width="{b.width}"' if b.width else ""
        return f'<img src="{_data_uri(b.png)}" alt="{escape(b.alt)}"{w}>'
    if isinstance(b, Math):  # MathML: text a reader can select and search, no picture
        return b.mathml + f'<pre><code class="language-latex">{escape(b.latex)}</code></pre>'
    if isinstance(b, Grid):
        return table_html(b.header, b.rows, b.marked, b.notes, caption=b.title or None)
    if isinstance(b, Section):
        return _html_section(b)
    raise TypeError(b)  # pragma: no cover


def _html_section(s: Section) -> str:
    return f"<section><h{s.level}>{escape(s.title)}</h{s.level}>\n" + "\n".join(_html_block(b) for b in s.blocks) + "\n</section>"


def to_html(title: str, sections: list[Section]) -> str:
    body = "\n".join(_html_section(s) for s in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n{body}\n"
        f"<footer>Made by ctdsl {escape(__version__)}: ctdsl report. Equations rendered by matplotlib mathtext; LaTeX source under each.</footer>\n"
        "</body>\n</html>\n"
    )


# ---- Markdown -------------------------------------------------------------------------

def _md_cell(c: str) -> str:
    return md_cell(c)


def _typeset_plan(sections: list[Section]) -> dict[int, str]:
    """Which forms Markdown shows as source only, and why: id of the Math block -> the reason.

    Typesetting costs a third of a millisecond or so per character of LaTeX
    (mathtext's parser: half a second for the 1,624 characters of a break-even of
    examples/18_uncertainty.ct, a picture 6,400 px wide), and a picture of a long
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
        return f"```{b.lang}\n{b.text}\n```"
    if isinstance(b, Image):
        return f"![{md_text(b.alt)}]({_data_uri(b.png)})"
    if isinstance(b, Math):  # Markdown cannot carry MathML: the form typeset as a picture, then its source
        why = plan.get(id(b))
        png = math_png(b.latex) if why is None else None
        if png is not None:
            out = f"![the exact form, typeset]({_data_uri(png)})\n\n"
        else:
            out = f"({why or 'matplotlib cannot typeset this form'}; its LaTeX source:)\n\n"
        return out + f"```latex\n{b.latex}\n```"
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


def render_document(sol, graph, curves, fmt: str, extra=()) -> str:
    """The report as text: fmt is 'html' or 'md'; `extra` sections go last."""
    title, sections = build(sol, graph, curves, extra)
    if fmt == "html":
        return to_html(title, sections)
    if fmt == "md":
        return to_markdown(title, sections)
    raise ValueError(f"unknown report format {fmt!r}")
