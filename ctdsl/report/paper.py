"""`ctdsl export latex`: the symbolic results as LaTeX that goes straight into a paper.

- Each quantity is one numbered equation with a `\\label` made from the scheme's
  and the quantity's names (`eq:ctdsl:band-module:t2`, `eq:ctdsl:band-module:step`;
  break-evens `eq:ctdsl:be:band-switch-vs-adamw`; the table `tab:ctdsl:numbers`),
  `--label-prefix` replacing `ctdsl`.
- Forms are kept as the sums of costs they are (`ctdsl.report.paper_forms`), with
  params in their declared units and each result in a readable unit, written on
  the left (`t_{2} / \\unit{\\second} = ...`), and broken over lines so that
  nothing is wider than a column: `--columns 2` for a two-column article.
- A max / min of two arguments that cross inside the swept param's range is
  followed by a row with its regimes (`ctdsl.report.paper_cases`): which
  argument it is below and above the crossing, in the param's declared unit.
- Units with siunitx (`\\qty`, `\\unit`) by default, plain `\\mathrm` with
  `--units plain`; numbers to four significant figures throughout.
- The numbers at the defaults are a `table` float (`table*` in two columns) with
  a caption, a label, booktabs rules and units in the header.
- The fragment's header comment lists the packages it needs; `--standalone`
  wraps it in an article that compiles as it is.

The payload's bytes on the WAN are `V_{\\mathrm{WAN}}` (a volume), so that they
do not differ from the bandwidth `b_{\\mathrm{WAN}}` only by case.
"""

from __future__ import annotations

import math
import re

from ctdsl import units as U
from ctdsl.diagnostics.terminal import command_safe
from ctdsl.report.blocks import EqRow, Equations, Grid, Name, Prose, Qty, TeX, Text
from ctdsl.report.document_tex import blocks_tex, grid_tex
from ctdsl.report.paper_forms import Form, Printer, lines, width
from ctdsl.report.paper_units import PLAIN, SIUNITX, num_tex, qty_tex, symbol_tex, unit_tex
from ctdsl.report.serving_paper import tex as serving_tex
from ctdsl.report.step_form import part_of, step_pieces, step_terms
from ctdsl.report.target_latex import targets_tex
from ctdsl.results.quantity import Quantity
from ctdsl.results.solution import Solution
from ctdsl.version import __version__

# usable widths in em at 10 pt (1 em = 10 pt), less the equation number: an article's
# \textwidth is 345 pt; a two-column article's \columnwidth is 229.5 pt
WIDTH = {1: 27.0, 2: 16.0}
PACKAGES = {SIUNITX: ("amsmath", "booktabs", "siunitx"), PLAIN: ("amsmath", "booktabs")}


def label_key(text: str) -> str:
    """A name as a \\label part: letters, digits and hyphens only."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "x"


class Paper:
    """The blocks of a paper's results (`ctdsl.report.blocks`): a paragraph and a display of
    equations per scheme and per break-even, the numbers table; the LaTeX writer
    (`document_tex`) writes them for `export latex`, the MathJax writer (`document_mathjax`) for
    a notebook. `symbols` and `x` (the swept param) are the solution's; `sol` is needed for the
    whole document only."""

    def __init__(self, sol, columns: int = 1, units: str = SIUNITX, prefix: str = "ctdsl", symbols=None):
        if columns not in WIDTH:
            raise ValueError("columns is 1 or 2")
        if units not in PACKAGES:
            raise ValueError(f"units is {SIUNITX} or {PLAIN}")
        self.sol = sol
        self.columns = columns
        self.units = units
        self.prefix = label_key(prefix)
        self.symbols = symbols if symbols is not None else sol.symbols
        x = next((n for n, i in self.symbols.info.items() if i.param.count and i.param.count > 1), None)
        self.x = x  # the swept param: forms are collected by it, and a max's regimes are over its range
        self.printer = Printer(self.symbols, x, room=WIDTH[columns] - 5.5)  # a piece fits beside a left side of 4.5 em
        self.extra: tuple[str, ...] = ()

    # ---- one equation -----------------------------------------------------------

    def _label(self, *parts: str) -> str:
        return f"eq:{self.prefix}:{':'.join(label_key(p) for p in parts)}"

    def equation(self, lhs: str, form: Form, label: str | None) -> list[EqRow]:
        """`lhs = terms` as align rows: the first numbered and labelled, the others continuing it."""
        if form.constant:
            return [EqRow(rf"{lhs} &= {qty_tex(form.value, form.unit, self.units)}", label)]
        if form.unit not in ("", "1"):
            lhs = rf"{lhs} / {unit_tex(form.unit, self.units)}"
        room = WIDTH[self.columns]
        # every row of an align is right of the left side's column: a long left side narrows them all
        rows = lines(form.terms, form.widths, room - width(lhs) - 1.5, room - max(3.5, width(lhs) + 1.0))
        if math.isfinite(form.value):  # the value `= 221.4` ends the last row, or is a row of its own when the
            value = f"= {num_tex(form.value, self.units)}"  # row with it would be wider than the whole column
            last = rows[-1] + " " + value  # (examples/17_cost_carbon.ct's break-even fraction: 23.6 pt over in article)
            rows[-1:] = [last] if width(last) <= room else [rows[-1], value]
        out = [EqRow(rf"{lhs} &= {rows[0]}", label)]
        out += [EqRow(rf"&\quad {r}") for r in rows[1:]]
        out += [row for rg in form.regimes for row in self._regime_rows(rg)]
        return out

    def _regime_rows(self, rg) -> list[EqRow]:
        """A max's regime split as unnumbered rows: `max(a, b) = {a for x < x0; b for x >= x0}`, packed to the column."""
        info = self.symbols.info[self.x]
        p, x = info.param, symbol_tex(info)
        unit = p.unit or ""
        q = lambda v: qty_tex(v, unit, self.units) if unit else num_tex(v, self.units)  # noqa: E731
        room = WIDTH[self.columns] - 3.5
        low, high = rg.args[rg.low], rg.args[1 - rg.low]
        if rg.cross is None:  # the form prints `low` alone: say why
            pieces = [rf"\text{{with }} {rg.head}", f"= {low}", rf"\text{{ for }} {q(rg.lo)} \leq {x}", rf"\leq {q(rg.hi)}"]
        else:
            below, above = rf"{low} & {x} < {q(rg.cross)}", rf"{high} & {x} \geq {q(rg.cross)}"
            wide = max(width(below), width(above)) + 1.0  # a row's two columns (the & counted as their gap) and the brace
            if wide <= room:
                pieces = [rg.head, rf"= \begin{{cases}} {below} \\ {above} \end{{cases}}"]
            else:  # too wide for a cases block: the two regimes one after the other
                at = q(rg.cross)
                pieces = [rg.head, f"= {low}", rf"\text{{for }} {x} < {at},", high, rf"\text{{for }} {x} \geq {at}"]
        widths = tuple(width(t) + 0.5 if "cases" not in t else wide for t in pieces)
        rows = lines(tuple(pieces), widths, room, room)
        return [EqRow(rf"&\quad {rows[0]}")] + [EqRow(rf"&\qquad {r}") for r in rows[1:]]

    def quantity(self, lhs: str, q, *label: str) -> list[EqRow]:
        return self.equation(lhs, self.printer.form(q), self._label(*label))

    # ---- a scheme ---------------------------------------------------------------

    def scheme(self, r) -> list:
        """A scheme's paragraph (its label, name and phases) and its equations."""
        key = r.name
        rows = [
            *self.quantity("c", r.payload, key, "payload"),
            *self.quantity(r"V_{\mathrm{WAN}}", r.wan, key, "wan"),
            *self.quantity(r"t_{\mathrm{compute}}", part_of(r, "compute"), key, "compute"),
        ]
        terms = step_terms(r, overhead_first=True)
        for sym, part in terms.compute:
            if part != "compute":  # the inner step (the training step's timeline) or the stragglers' wait
                rows += self.quantity(sym, part_of(r, part), key, part)
        if r.transform is not None:
            rows += self.quantity(r"t_{\mathrm{transform}}", r.transform, key, "transform")
        if r.overhead is not None:  # the scheme's fixed time per sync
            rows += self.quantity(r"t_{\mathrm{overhead}}", r.overhead, key, "overhead")
        phases: list[list] = []
        for i, (sym, ph, _plain) in enumerate(terms.phases, 1):
            rows += self.quantity(sym, ph.time, key, f"t{i}")
            every = ", every step" if ph.every_step else ""
            phases.append([TeX(sym), Text(f" {ph.name} ({ph.steps} step{'s' * (ph.steps != 1)}{every})")])
        for j, (sym, term) in enumerate(terms.exposed, 1):
            rows += self.quantity(sym, term.value, key, f"x{j}")
            phases.append([TeX(sym), Text(f" {term.label}, per step")])
        rows += self._step(r, terms)
        if r.time_to_target is not None:
            q = r.time_to_target
            scale, label = U.best_unit([q.value], q.dim)
            rhs = (rf"{r.steps:g}\,T", f"= {qty_tex(q.value / scale, label, self.units)}")
            rows += self._rows(r"T_{\mathrm{target}}", rhs, self._label(key, "target"))
        runs: list = [Text(" ("), Name(r.name), Text(")")]
        if phases:
            runs.append(Text(" The step's phases: "))
            for k, ph in enumerate(phases):
                runs += ([Text("; ")] if k else []) + ph
            runs.append(Text("."))
        return [Prose(tuple(runs), (Text(r.label),)), Equations(rows)]

    def _step(self, r, terms) -> list[EqRow]:
        rhs = step_pieces(terms, r.period, r.overlap)
        if r.period == 1 and not r.overlap and len(rhs) == 2 and rhs[1] == "+ 0":
            rhs = rhs[:1]  # nothing synced: the step is the compute
        q = r.step_time
        scale, label = U.best_unit([q.value], q.dim)
        rhs.append(f"= {qty_tex(q.value / scale, label, self.units)}")
        return self._rows("T", tuple(rhs), self._label(r.name, "step"))

    def _rows(self, lhs: str, rhs: tuple[str, ...], label: str | None) -> list[EqRow]:
        """`lhs = rhs pieces` as align rows packed to the column's width."""
        room = WIDTH[self.columns]
        rows = lines(rhs, tuple(width(t) + 0.5 for t in rhs), room - width(lhs) - 1.5, room - 3.5)
        return [EqRow(rf"{lhs} &= {rows[0]}", label)] + [EqRow(rf"&\quad {x}") for x in rows[1:]]

    # ---- break-evens, numbers, the whole ---------------------------------------------

    def breakeven(self, b) -> list:
        """A break-even's paragraph (what is better where) and its roots' equations."""
        head = (Text("Break-even"),)
        runs: list = [Text(" Of "), Name(b.x), Text(" and "), Name(b.y), Text(":")]
        if b.missing:
            return [Prose(tuple(runs + [Text(f" {b.missing}.")]), head)]
        r = b.result
        info = self.symbols.info[b.over]
        sym = symbol_tex(info)
        if not r.roots:
            return [Prose(tuple(runs + [Text(" never in the range of "), TeX(sym), Text(f" ({r.reason or ''}).")]), head)]
        rows: list[EqRow] = []
        for i, root in enumerate(r.roots, 1):
            label = self._label("be", f"{b.x}-vs-{b.y}" + (f"-on-{b.on}" if b.on != "time" else ""), *(["root", str(i)] if len(r.roots) > 1 else []))
            star = rf"{sym}^{{*}}"
            runs.append(Text("; " if i > 1 else " "))
            if root.numeric:
                scale, unit = U.best_unit([root.value], b.dim)
                rows.append(EqRow(rf"{star} &\approx {qty_tex(root.value / scale, unit, self.units)}", label))
                runs += [Text("a numeric root: "), Name(root.below), Text(f" is {b.better} below it, "), Name(root.above), Text(" above")]
                continue
            rows += self.equation(star, self.printer.form(Quantity(root.expr, root.value, b.dim)), label)
            runs += [Name(root.below), Text(f" is {b.better} below it, "), Name(root.above), Text(" above")]
        runs.append(Text("."))
        return [Prose(tuple(runs), head), Equations(rows)]

    def table(self) -> Grid:
        """The numbers at the defaults: a row per scheme, each column in one readable unit."""
        schemes = list(self.sol.schemes.values())
        cols = [
            ("c", U.DATA, lambda r: r.payload.value),
            (r"V_{\mathrm{WAN}}", U.DATA, lambda r: r.wan.value),
            ("T", U.TIME, lambda r: r.step_time.value),
            (r"T_{\mathrm{target}}", U.TIME, lambda r: r.time_to_target.value if r.time_to_target else None),
            (r"E_{\mathrm{target}}", U.ENERGY, lambda r: r.energy_to_target.value if r.energy_to_target else None),
            (r"V_{\mathrm{target}}", U.DATA, lambda r: r.bytes_to_target.value if r.bytes_to_target else None),
        ]
        header: list = [Text("scheme")]
        units, getters = [""], []
        for title, dim, get in cols:
            values = [get(r) for r in schemes]
            scale, label = U.best_unit([v for v in values if v is not None and math.isfinite(v)], dim)
            header.append(TeX(title))
            units.append(label)
            getters.append((get, scale, label))
        header.append(Text("binding"))
        units.append("")
        rows = []
        for r in schemes:
            cells: list = [Name(r.name)]
            for get, scale, label in getters:
                v = get(r)
                cells.append(Qty(None if v is None or not math.isfinite(v) else v / scale, label))
            cells.append(Text(r.binding.label))
            rows.append(cells)
        caption = (
            Text("Each scheme at the params' defaults: payload "), TeX("c"), Text(", bytes on the WAN "), TeX(r"V_{\mathrm{WAN}}"),
            Text(", step time "), TeX("T"), Text(", time, energy and bytes a worker sends to the target; binding: the step's largest component."),
        )  # fmt: skip
        # the binding column wrapped to 0.18 of the line: with six number columns a 0.26 share put the
        # flagship's table 18.5 pt past a one-column article (tests/test_paper_latex.py compiles it)
        return Grid(None, header, rows, units=units, caption=caption, label=f"tab:{self.prefix}:numbers", wrap=0.18, wide=True)

    def symbols_note(self) -> str:
        parts = []
        for info in self.symbols.info.values():
            p = info.param
            label = p.unit or ("" if p.dim.dimensionless else p.dim.symbol())
            value = p.default / (p.unit_scale if p.unit else 1.0)
            parts.append(f"${symbol_tex(info)} = {qty_tex(value, label, self.units)}$")
        return ("Params at their defaults, each in its declared unit: " + ", ".join(parts) + ".") if parts else ""

    def fragment(self) -> str:
        needs = ", ".join(rf"\usepackage{{{p}}}" for p in PACKAGES[self.units])
        head = [
            f"% ctdsl {__version__} export latex of {_comment(self.sol.spec.root)}",
            f"% needs {needs}" + (r" and \DeclareSIUnit\flop{FLOP} in the preamble" if self.units == SIUNITX else ""),
            f"% set for {'a two-column' if self.columns == 2 else 'a one-column'} page; labels eq:{self.prefix}:SCHEME:QUANTITY, tab:{self.prefix}:numbers",
        ]
        parts = ["\n".join(head)]
        # a scheme's derivation may run longer than a column: its rows may break across columns and
        # pages (amsmath's \allowdisplaybreaks); its paragraphs hold unbreakable names and quantities,
        # which a narrow column (acmart's) sets with more space between words rather than past the
        # margin (\sloppy); both kept to the derivations by a group
        parts.append("\\begingroup\\allowdisplaybreaks\\sloppy")
        note = self.symbols_note()
        if note:
            parts.append(note)
        parts += [blocks_tex(self.scheme(r), self.units, self.columns) for r in self.sol.schemes.values()]
        parts += [blocks_tex(self.breakeven(b), self.units, self.columns) for b in self.sol.breakevens]
        parts.append("\\endgroup")
        if self.sol.schemes or not getattr(self.sol, "serving", ()):  # a spec that only serves has no scheme to tabulate
            parts.append(grid_tex(self.table(), self.units, self.columns))
        parts += [t for t in [serving_tex(self.sol, self.units, self.columns, self.prefix)] if t]
        parts += [t for t in [targets_tex(self.sol, self.units, self.prefix)] if t]
        parts += self.extra  # more tables the caller asked for (export latex --sensitivity)
        return "\n\n".join(parts) + "\n"

    def standalone(self) -> str:
        packages = "".join(rf"\usepackage{{{p}}}" + "\n" for p in PACKAGES[self.units])
        flop = "\\DeclareSIUnit\\flop{FLOP}\n" if self.units == SIUNITX else ""
        cls = "[10pt,twocolumn]{article}" if self.columns == 2 else "[10pt]{article}"
        return (
            f"\\documentclass{cls}\n{packages}{flop}\\allowdisplaybreaks\n\\begin{{document}}\n"
            + self.fragment()
            + "\\end{document}\n"
        )


def _comment(text: str) -> str:
    """Text for a TeX comment line: one line, printable, and no CI runner's command when the LaTeX is printed
    to a CI log (a file named `##vso[...].ct`: `command_safe` puts a zero-width joiner between the `#`s)."""
    return command_safe("".join(c if c.isprintable() else "?" for c in text))


def paper_latex(sol: Solution, standalone: bool = False, columns: int = 1, units: str = SIUNITX, prefix: str = "ctdsl", extra: tuple[str, ...] = ()) -> str:
    """`extra`: LaTeX blocks put after the numbers table (the sensitivity table)."""
    p = Paper(sol, columns, units, prefix)
    p.extra = tuple(extra)
    return p.standalone() if standalone else p.fragment()
