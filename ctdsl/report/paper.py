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
from ctdsl.report.encode import tex_text
from ctdsl.report.latex import symbol_tex
from ctdsl.report.paper_forms import Form, Printer, lines, width
from ctdsl.report.paper_units import PLAIN, SIUNITX, num_tex, qty_tex, unit_tex
from ctdsl.report.step_form import part_of, step_pieces, step_terms
from ctdsl.report.target_latex import targets_tex
from ctdsl.results.quantity import Quantity
from ctdsl.results.solution import Solution
from ctdsl.version import __version__

# usable widths in em at 10 pt (1 em = 10 pt), less the equation number: an article's
# \textwidth is 345 pt; a two-column article's \columnwidth is 229.5 pt
WIDTH = {1: 27.0, 2: 16.0}
PACKAGES = {SIUNITX: ("amsmath", "booktabs", "siunitx"), PLAIN: ("amsmath", "booktabs")}


def tt(name: str) -> str:
    """A name in typewriter type that a line may break after each underscore."""
    return r"\texttt{" + tex_text(name).replace(r"\_", r"\_\allowbreak{}") + "}"


def label_key(text: str) -> str:
    """A name as a \\label part: letters, digits and hyphens only."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-") or "x"


class Paper:
    def __init__(self, sol, columns: int = 1, units: str = SIUNITX, prefix: str = "ctdsl"):
        if columns not in WIDTH:
            raise ValueError("columns is 1 or 2")
        if units not in PACKAGES:
            raise ValueError(f"units is {SIUNITX} or {PLAIN}")
        self.sol = sol
        self.columns = columns
        self.units = units
        self.prefix = label_key(prefix)
        self.symbols = sol.symbols
        x = next((p.name for p in sol.spec.params.values() if p.count and p.count > 1), None)
        self.x = x  # the swept param: forms are collected by it, and a max's regimes are over its range
        self.printer = Printer(sol.symbols, x)
        self.extra: tuple[str, ...] = ()

    # ---- one equation -----------------------------------------------------------

    def _label(self, *parts: str) -> str:
        return rf"\label{{eq:{self.prefix}:{':'.join(label_key(p) for p in parts)}}}"

    def equation(self, lhs: str, form: Form, label: str) -> str:
        """`lhs = terms` as align rows: the first numbered and labelled, the others continuing it."""
        if form.constant:
            return rf"{lhs} &= {qty_tex(form.value, form.unit, self.units)} {label}"
        if form.unit not in ("", "1"):
            lhs = rf"{lhs} / {unit_tex(form.unit, self.units)}"
        room = WIDTH[self.columns]
        rows = lines(form.terms, form.widths, room - width(lhs) - 1.5, room - 3.5)
        value = f" = {num_tex(form.value, self.units)}" if math.isfinite(form.value) else ""
        rows[-1] += value
        out = [rf"{lhs} &= {rows[0]} {label}"]
        out += [rf"&\quad {r} \nonumber" for r in rows[1:]]
        out += [row for rg in form.regimes for row in self._regime_rows(rg)]
        return " \\\\\n".join(out)

    def _regime_rows(self, rg) -> list[str]:
        """A max's regime split as unnumbered rows: `max(a, b) = {a for x < x0; b for x >= x0}`, packed to the column."""
        info = self.symbols.info[self.x]
        p, x = info.param, symbol_tex(info)
        unit = p.unit or ""
        q = lambda v: qty_tex(v, unit, self.units) if unit else num_tex(v, self.units)  # noqa: E731
        room = WIDTH[self.columns] - 3.5
        low, high = rg.args[rg.low], rg.args[1 - rg.low]
        if rg.cross is None:
            pieces = [rg.head, f"= {low}", rf"\text{{for }} {q(rg.lo)} \leq {x}", rf"\leq {q(rg.hi)}"]
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
        return [rf"&\quad {rows[0]} \nonumber"] + [rf"&\qquad {r} \nonumber" for r in rows[1:]]

    def quantity(self, lhs: str, q, *label: str) -> str:
        return self.equation(lhs, self.printer.form(q), self._label(*label))

    # ---- a scheme ---------------------------------------------------------------

    def scheme(self, r) -> str:
        key = r.name
        rows = [
            self.quantity("c", r.payload, key, "payload"),
            self.quantity(r"V_{\mathrm{WAN}}", r.wan, key, "wan"),
            self.quantity(r"t_{\mathrm{compute}}", part_of(r, "compute"), key, "compute"),
        ]
        terms = step_terms(r, overhead_first=True)
        for sym, part in terms.compute:
            if part != "compute":  # the inner step (the training step's timeline) or the stragglers' wait
                rows.append(self.quantity(sym, part_of(r, part), key, part))
        if r.transform is not None:
            rows.append(self.quantity(r"t_{\mathrm{transform}}", r.transform, key, "transform"))
        if r.overhead is not None:  # the scheme's fixed time per sync
            rows.append(self.quantity(r"t_{\mathrm{overhead}}", r.overhead, key, "overhead"))
        phases = []
        for i, (sym, ph, _plain) in enumerate(terms.phases, 1):
            rows.append(self.quantity(sym, ph.time, key, f"t{i}"))
            every = ", every step" if ph.every_step else ""
            phases.append(f"${sym}$ {tex_text(ph.name)} ({ph.steps} step{'s' * (ph.steps != 1)}{every})")
        for j, (sym, term) in enumerate(terms.exposed, 1):
            rows.append(self.quantity(sym, term.value, key, f"x{j}"))
            phases.append(f"${sym}$ {tex_text(term.label)}, per step")
        rows.append(self._step(r, terms))
        if r.time_to_target is not None:
            q = r.time_to_target
            scale, label = U.best_unit([q.value], q.dim)
            rhs = (rf"{r.steps:g}\,T", f"= {qty_tex(q.value / scale, label, self.units)}")
            rows.append(self._rows(r"T_{\mathrm{target}}", rhs, self._label(key, "target")))
        head = rf"\paragraph{{{tex_text(r.label)}}} ({tt(r.name)})"
        text = f"{head} The step's phases: " + "; ".join(phases) + "." if phases else head
        return text + "\n\\begin{align}\n" + " \\\\\n".join(rows) + "\n\\end{align}"

    def _step(self, r, terms) -> str:
        rhs = step_pieces(terms, r.period, r.overlap)
        if r.period == 1 and not r.overlap and len(rhs) == 2 and rhs[1] == "+ 0":
            rhs = rhs[:1]  # nothing synced: the step is the compute
        q = r.step_time
        scale, label = U.best_unit([q.value], q.dim)
        rhs.append(f"= {qty_tex(q.value / scale, label, self.units)}")
        return self._rows("T", tuple(rhs), self._label(r.name, "step"))

    def _rows(self, lhs: str, rhs: tuple[str, ...], label: str) -> str:
        """`lhs = rhs pieces` as align rows packed to the column's width."""
        room = WIDTH[self.columns]
        rows = lines(rhs, tuple(width(t) + 0.5 for t in rhs), room - width(lhs) - 1.5, room - 3.5)
        out = [rf"{lhs} &= {rows[0]} {label}"] + [rf"&\quad {x} \nonumber" for x in rows[1:]]
        return " \\\\\n".join(out)

    # ---- break-evens, numbers, the whole ---------------------------------------------

    def breakeven(self, b) -> str:
        head = rf"\paragraph{{Break-even}} Of {tt(b.x)} and {tt(b.y)}:"
        if b.missing:
            return f"{head} {tex_text(b.missing)}."
        r = b.result
        info = self.symbols.info[b.over]
        sym = symbol_tex(info)
        if not r.roots:
            return f"{head} never in the range of ${sym}$ ({tex_text(r.reason or '')})."
        rows, notes = [], []
        for i, root in enumerate(r.roots, 1):
            label = self._label("be", f"{b.x}-vs-{b.y}" + (f"-on-{b.on}" if b.on != "time" else ""), *(["root", str(i)] if len(r.roots) > 1 else []))
            star = rf"{sym}^{{*}}"
            if root.numeric:
                scale, unit = U.best_unit([root.value], b.dim)
                rows.append(rf"{star} &\approx {qty_tex(root.value / scale, unit, self.units)} {label}")
                notes.append(f"a numeric root: {tt(root.below)} is {b.better} below it, {tt(root.above)} above")
                continue
            rows.append(self.equation(star, self.printer.form(Quantity(root.expr, root.value, b.dim)), label))
            notes.append(f"{tt(root.below)} is {b.better} below it, {tt(root.above)} above")
        return f"{head} " + "; ".join(notes) + ".\n\\begin{align}\n" + " \\\\\n".join(rows) + "\n\\end{align}"

    def table(self) -> str:
        schemes = list(self.sol.schemes.values())
        cols = [
            ("$c$", U.DATA, lambda r: r.payload.value),
            (r"$V_{\mathrm{WAN}}$", U.DATA, lambda r: r.wan.value),
            ("$T$", U.TIME, lambda r: r.step_time.value),
            (r"$T_{\mathrm{target}}$", U.TIME, lambda r: r.time_to_target.value if r.time_to_target else None),
            (r"$E_{\mathrm{target}}$", U.ENERGY, lambda r: r.energy_to_target.value if r.energy_to_target else None),
        ]
        header, units, getters = ["scheme"], [""], []
        for title, dim, get in cols:
            values = [get(r) for r in schemes]
            scale, label = U.best_unit([v for v in values if v is not None and math.isfinite(v)], dim)
            header.append(title)
            units.append(f"({self._unit_text(label)})")
            getters.append((get, scale))
        header.append("binding")
        units.append("")
        rows = []
        for r in schemes:
            cells = [tt(r.name)]
            for get, scale in getters:
                v = get(r)
                cells.append("--" if v is None or not math.isfinite(v) else f"${num_tex(v / scale, self.units)}$")
            cells.append(tex_text(r.binding.label))
            rows.append(" & ".join(cells) + r" \\")
        env = "table*" if self.columns == 2 else "table"
        spec = "l" + "r" * len(cols) + r"p{0.26\linewidth}"
        return "\n".join(
            [
                rf"\begin{{{env}}}[tbp]",
                r"\centering\small\setlength{\tabcolsep}{4pt}",
                rf"\caption{{Each scheme at the params' defaults: payload $c$, bytes on the WAN $V_{{\mathrm{{WAN}}}}$, step time $T$, time and energy to the target; binding: the step's largest component.}}\label{{tab:{self.prefix}:numbers}}",
                rf"\begin{{tabular}}{{{spec}}}",
                r"\toprule",
                " & ".join(header) + r" \\",
                " & ".join(units) + r" \\",
                r"\midrule",
                *rows,
                r"\bottomrule",
                r"\end{tabular}",
                rf"\end{{{env}}}",
            ]
        )

    def _unit_text(self, label: str) -> str:
        return f"${unit_tex(label, self.units)}$"

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
        note = self.symbols_note()
        if note:
            parts.append(note)
        # a scheme's derivation may run longer than a column: its rows may break across columns and
        # pages (amsmath's \allowdisplaybreaks, kept to the derivations by a group)
        parts.append("\\begingroup\\allowdisplaybreaks")
        parts += [self.scheme(r) for r in self.sol.schemes.values()]
        parts += [self.breakeven(b) for b in self.sol.breakevens]
        parts.append("\\endgroup")
        parts.append(self.table())
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
