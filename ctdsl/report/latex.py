"""LaTeX of the symbolic results, in a form a reader can check by hand.

Each symbol is shown in its declared unit (b_WAN in GB/s, not B/s), each result
in a readable unit chosen from its value (GB, s, h), with numbers to four
significant figures. A step time is written as its components, one per line:

    T   = t_compute + (t_transform + t_phase1 + ...) / H
    t_1 = 3 (0.04 + 11.76 / b_WAN) s      (what each phase costs)

so that each line is a small formula. `--standalone` wraps it all in a document
with a table of the numbers at the defaults.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl import units as U
from ctdsl.report.encode import tex_display, tex_text
from ctdsl.report.step_form import part_of, step_pieces, step_terms

DIGITS = 4


def _esc(text: str) -> str:
    return tex_text(text)


def symbol_tex(info) -> str:
    """A param's name in math mode: its display name when that is safe LaTeX (CT310's rule), else escaped text."""
    return tex_display(info.param.display) if info.param.display else info.latex


def _qtex(text: str) -> str:
    """'37.29 s' -> '37.29\\,\\mathrm{s}' for math mode."""
    if " " not in text:
        return _esc(text)
    num, unit = text.rsplit(" ", 1)
    num = num.replace("e", r"\cdot 10^{") + "}" if "e" in num else num
    return f"{num}\\,\\mathrm{{{_esc(unit)}}}"


def _unit_tex(label: str) -> str:
    return r"\,\mathrm{" + label.replace("/", "/") + "}"


def readable(expr: sp.Expr, symbols, dim: U.Dim, at: float | None = None) -> tuple[sp.Expr, str]:
    """The expression with params in their declared units and the result in a readable unit."""
    sub = {}
    for info in symbols.info.values():
        scale = info.param.unit_scale
        if scale != 1:
            sub[info.symbol] = info.symbol * sp.Float(scale)
    e = expr.xreplace(sub) if sub else expr
    scale, label = U.best_unit([at] if at is not None else [], dim) if at is not None else (1.0, dim.symbol())
    e = _pull_minmax(e)
    e = _normal_fraction(e)
    e = sp.N(distribute(sp.Integer(1) / sp.Float(scale) if scale != 1 else sp.Integer(1), e), DIGITS)
    e = distribute(sp.Integer(1), e)
    whole = {f: sp.Integer(int(f)) for f in e.atoms(sp.Float) if float(f) == int(f) and abs(float(f)) < 1e6}
    return (e.xreplace(whole) if whole else e), label


def _coeff(e: sp.Expr) -> float:
    c, _ = e.as_coeff_Mul()
    return abs(float(c)) if c.is_Number and c != 0 else 1.0


def _pull_minmax(e: sp.Expr) -> sp.Expr:
    """max(1.4e10, 1e8 F) -> 1e8 max(140, F): numbers of one size inside max and min."""
    if not e.args:
        return e
    args = [_pull_minmax(a) for a in e.args]
    if isinstance(e, (sp.Max, sp.Min)):
        smallest = min(_coeff(a) for a in args)
        k = sp.Integer(10) ** int(math.floor(math.log10(smallest))) if smallest > 0 else sp.Integer(1)
        if k != 1:
            return k * e.func(*[sp.expand(a / k) for a in args])
        return e.func(*args)
    return e.func(*args)


def _normal_fraction(e: sp.Expr) -> sp.Expr:
    """n / d with d's constant term (or largest coefficient) scaled to 1 and positive."""
    num, den = sp.fraction(sp.together(e))
    if not den.free_symbols or den == 1:
        return e
    den = sp.expand(den)
    terms = den.as_ordered_terms()
    consts = [t for t in terms if not t.free_symbols]
    pivot = consts[0] if consts else max(terms, key=_coeff).as_coeff_Mul()[0]
    if pivot == 0:
        return e
    return sp.expand(num / pivot) / sp.expand(den / pivot)


def distribute(k: sp.Expr, e: sp.Expr) -> sp.Expr:
    """k * e with a positive constant k pushed into sums, max and min: 2 max(a, b) -> max(2a, 2b)."""
    if e.is_Add:
        return sp.Add(*[distribute(k, a) for a in e.args])
    if isinstance(e, (sp.Max, sp.Min)):
        return e.func(*[distribute(k, a) for a in e.args])
    if e.is_Mul:
        coeff, rest = e.as_coeff_Mul()
        if coeff.is_Number and coeff > 0:
            if isinstance(rest, (sp.Max, sp.Min)) or rest.is_Add:
                return distribute(k * coeff, rest)
            if rest.is_Mul:  # a fraction n / d: the constant goes into the numerator's sum
                factors = list(rest.args)
                for i, f in enumerate(factors):
                    if f.is_Add:
                        factors[i] = distribute(k * coeff, f)
                        return sp.Mul(*factors)
    return k * e


def tex(expr: sp.Expr, symbols) -> str:
    return sp.latex(expr, symbol_names={i.symbol: symbol_tex(i) for i in symbols.info.values()})


def _eq(lhs: str, expr: sp.Expr, symbols, dim: U.Dim, at: float | None) -> str:
    e, label = readable(expr, symbols, dim, at)
    unit = _unit_tex(label) if label and label != "1" else ""
    body = tex(e, symbols)
    if e.free_symbols:
        return f"{lhs} &= \\left({body}\\right){unit}"
    return f"{lhs} &= {body}{unit}"


def _units_note(symbols) -> str:
    parts = []
    for info in symbols.info.values():
        p = info.param
        if p.unit:
            parts.append(f"${symbol_tex(info)}$ in {_esc(p.unit)}")
        elif not p.dim.dimensionless:
            parts.append(f"${symbol_tex(info)}$ in {_esc(p.dim.symbol())}")
    return ("Symbols are in their declared units: " + ", ".join(parts) + ".") if parts else ""


def _qeq(lhs: str, q, symbols) -> str:
    """lhs = a result quantity: its exact form, in its own dimension, and its value."""
    return _eq(lhs, q.expr, symbols, q.dim, _shown(q.value))


def _shown(v: float) -> float:
    """The value that picks a display unit (1 where the value is not a finite number)."""
    return v if math.isfinite(v) else 1.0


def scheme_align(r, symbols) -> str:
    lines = [
        _qeq(r"c", r.payload, symbols),
        _qeq(r"B_{\mathrm{WAN}}", r.wan, symbols),
        _qeq(r"t_{\mathrm{compute}}", part_of(r, "compute"), symbols),
    ]
    terms = step_terms(r)
    for sym, key in terms.compute:
        if key != "compute":  # the inner step (the training step's timeline) or the stragglers' wait
            lines.append(_qeq(sym, part_of(r, key), symbols))
    if r.transform is not None:
        lines.append(_qeq(r"t_{\mathrm{transform}}", r.transform, symbols))
    for sym, ph, plain in terms.phases:
        every = ", every step" if ph.every_step else ""
        lines.append(_qeq(sym, ph.time, symbols) + f" && \\text{{{_esc(ph.name)}: {ph.steps} step{'s' * (ph.steps != 1)}{every}}}")
    for sym, term in terms.exposed:
        lines.append(_qeq(sym, term.value, symbols) + f" && \\text{{{_esc(term.label)}, per step}}")
    if r.overhead is not None:  # the scheme's fixed time per sync
        lines.append(_qeq(r"t_{\mathrm{overhead}}", r.overhead, symbols))
    lines.append(f"T &= {' '.join(step_pieces(terms, r.period, r.overlap))} = {_qtex(str(r.step_time))}")
    if r.time_to_target is not None:
        lines.append(f"T_{{\\mathrm{{target}}}} &= {r.steps:g}\\,T = {_qtex(str(r.time_to_target))}")
    for sym, q in ((r"C_{\mathrm{target}}", r.cost_to_target), (r"\mathrm{CO_2e}_{\mathrm{target}}", r.co2e_to_target)):
        if q is not None:  # a spec that prices something or gives carbon (docs/codesign.md)
            lines.append(f"{sym} &= {_qtex(str(q))}")
    return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"


def breakeven_align(b, symbols) -> str:
    if b.missing:
        return f"\\text{{{_esc(b.x)} vs {_esc(b.y)}: {_esc(b.missing)}}}"
    r = b.result
    info = symbols.info[b.over]
    if not r.roots:
        return f"\\text{{{_esc(b.x)} vs {_esc(b.y)} over ${symbol_tex(info)}$: never in range ({_esc(r.reason or '')})}}"
    lines = []
    for root in r.roots:
        if root.numeric:  # no exact form: the value, and say so
            lines.append(
                f"{symbol_tex(info)}^{{*}} &\\approx {_qtex(U.format_quantity(root.value, b.dim))}"
                f" && \\text{{numeric root; {_esc(root.below)} {b.better} below, {_esc(root.above)} above}}"
            )
            continue
        e, label = readable(root.expr, symbols, b.dim, root.value)
        unit = _unit_tex(label)
        lines.append(
            f"{symbol_tex(info)}^{{*}} &= {tex(e, symbols)}{unit} = {_qtex(U.format_quantity(root.value, b.dim))}"
            f" && \\text{{{_esc(root.below)} {b.better} below, {_esc(root.above)} above}}"
        )
    return "\\begin{align*}\n" + " \\\\\n".join(lines) + "\n\\end{align*}"


def scheme_latex(r) -> str:
    """For notebooks: the scheme's equations as one displayed block."""
    return "$$" + scheme_align(r, r.symbols).replace("align*", "aligned") + "$$"


def breakeven_latex(b) -> str:
    return "$$" + breakeven_align(b, b.symbols).replace("align*", "aligned") + "$$"


def numbers_table(sol) -> str:
    rows = []
    for r in sol.schemes.values():
        rows.append(
            " & ".join(
                [
                    f"\\texttt{{{_esc(r.name)}}}",
                    _esc(str(r.payload)),
                    _esc(str(r.wan)),
                    _esc(str(r.step_time)),
                    _esc(r.binding.label),
                    _esc(str(r.time_to_target) if r.time_to_target else "n/a"),
                    _esc(str(r.energy_to_target) if r.energy_to_target else "n/a"),
                ]
            )
            + r" \\"
        )
    return "\n".join(
        [
            r"\begin{tabular}{lllllll}",
            r"\toprule",
            r"scheme & payload & WAN bytes & step & binding & time to target & energy \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
        ]
    )


def solution_latex(sol, standalone: bool = False) -> str:
    symbols = sol.symbols
    parts = []
    note = _units_note(symbols)
    defaults = ", ".join(
        f"${symbol_tex(i)} = {_esc(U.format_quantity(i.param.default, i.param.dim))}$" for i in symbols.info.values()
    )
    if standalone:
        parts.append(f"\\section*{{{_esc(sol.spec.root)}}}")
    if note:
        parts.append(note + (f" Defaults: {defaults}." if defaults else ""))
    for r in sol.schemes.values():
        parts.append(f"\\subsection*{{{_esc(r.name)}: {_esc(r.label)}}}")
        parts.append(scheme_align(r, symbols))
    if sol.breakevens:
        parts.append("\\subsection*{Break-even}")
        for b in sol.breakevens:
            parts.append(f"\\paragraph{{{_esc(b.x)} vs {_esc(b.y)}}}")
            parts.append(breakeven_align(b, symbols))
    parts.append("\\subsection*{Numbers at the defaults}")
    parts.append(numbers_table(sol))
    body = "\n\n".join(parts) + "\n"
    if not standalone:
        return body
    return (
        "\\documentclass[10pt]{article}\n"
        "\\usepackage[margin=2cm,landscape]{geometry}\n"
        "\\usepackage{amsmath}\n"
        "\\usepackage{booktabs}\n"
        "\\allowdisplaybreaks\n"
        "\\begin{document}\n"
        "\\small\n" + body + "\\end{document}\n"
    )
