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
URIs. Equations: each break-even's exact form is MathML in HTML (with its LaTeX
source under it) and a `$$` display block in Markdown, which GitHub renders as
math (`document_md`).

The same spec gives the same bytes: no dates, no absolute paths (the spec is
named as it was given), images rendered deterministically.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ctdsl import limits
from ctdsl import units as U
from ctdsl.diagnostics.lines import split_lines
from ctdsl.model.graph import replicas_text
from ctdsl.report.blocks import Bullets, Grid, Image, Math, Para, Section
from ctdsl.report.document_html import to_html
from ctdsl.report.document_md import to_markdown
from ctdsl.report.explore.mathml import mathml_equation
from ctdsl.report.paper_forms import Printer
from ctdsl.report.encode import tex_text
from ctdsl.report.paper_units import symbol_tex, text_qty_tex
from ctdsl.report.serving_paper import section as serving_section
from ctdsl.report.words import count_of
from ctdsl.model.topology import Topology
from ctdsl.results.quantity import Quantity
from ctdsl.results.solution import Solution

if TYPE_CHECKING:  # types only: no import at run time (the report reads what the CLI hands it)
    from ctdsl.numeric.crossings import Curves
from ctdsl.report.plots import png_bytes, sweep_figure, sweep_notes, topology_figure
from ctdsl.report.tables import all_tables, params_line


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
    for line in split_lines(text):  # the parser's lines: a comment ends where its line does
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
    return title, [_summary(sol), *serving_section(sol), _topology(sol.spec, graph), _solve_tables(sol), _plots(sol, curves), _break_evens(sol), *extra]


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
    tb.blocks.extend(all_tables(sol))  # the blocks ctdsl solve prints
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
                latex = f"{symbol_tex(info)}^{{*}} \\approx {text_qty_tex(shown)}"
                ml = partial(mathml_equation, b.over, None, shown, "", approx=True)
                how = ". A numeric root (bracketed by a sign change and refined by Brent's method): sympy gives no exact form."
            else:
                f = printer.form(Quantity(root.expr, root.value, b.dim))  # as export latex writes it
                latex = f"{symbol_tex(info)}^{{*}} = {' '.join(f.terms)}\\,\\mathrm{{{tex_text(f.unit)}}}"
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


def render_document(sol: Solution, graph: Topology, curves: Curves | None, fmt: str, extra: Sequence[Section] = ()) -> str:
    """The report as text: fmt is 'html' or 'md'; `extra` sections go last."""
    title, sections = build(sol, graph, curves, extra)
    if fmt == "html":
        return to_html(title, sections)
    if fmt == "md":
        return to_markdown(title, sections)
    raise ValueError(f"unknown report format {fmt!r}")
