"""Exact forms made readable for a paper, and broken over lines to fit a column.

A result's exact form is a sum of the costs it is made of (a latency, bytes over
a bandwidth, a queueing wait rho / (1 - rho) ...). It is kept as that sum: each
term's common factors cancelled on its own (`8e9 rho / (b (2 - 2 rho))` becomes
`4e9 rho / (b (1 - rho))`), the terms collected by the swept param, params in
their declared units, the result in a readable unit, numbers to four
significant figures. Nothing is put over a common denominator (that is what made
the old export three times wider than the form it came from).

`max` and `min` are set aside while the rest is rearranged (each stands for one
symbol, its arguments treated the same way on their own), which is also what
keeps this fast: sympy re-derives the order of `max` arguments whenever one is
built. A form is a list of terms, each printed once, with an estimate of its
printed width; `lines()` packs the terms into lines of a given width.

Long: one concept, a form made readable and broken to fit a line, whose steps (tidying, the
max set aside and dropped where it never binds, the ratio, breaking at operators, the width
estimate) each use the others' state for one quantity; split, they would pass it back and forth.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import sympy as sp
from sympy.printing.latex import LatexPrinter

from ctdsl import units as U
from ctdsl.report.paper_units import number, symbol_tex
from ctdsl.report.paper_cases import Regime, regime

DIGITS = 4
MAX_OPS = 2_000  # a form larger than this is printed as it comes, unrearranged (a hostile spec)
WIDE_MAX = 20  # em: a max or min wider than this is broken between its arguments' terms
NESTED_MAX = 8  # em: and a max inside one of those arguments, wider than this
NESTED_DROPS = 4  # levels of max inside max whose unbinding arguments are dropped
ROOM = 23.5  # em: the widest line a form may print (a one-column page; `paper.WIDTH` less the equation number)


class _Tex(LatexPrinter):
    """sympy's LaTeX with each float to four significant figures as `paper_units.number` writes it:
    `1999` where sympy writes a rounded 1998.97 as `1999.0`, `8 \\cdot 10^{8}` for `8.0 \\cdot 10^{8}`."""

    def _print_Float(self, expr):
        text = number(float(expr))
        if "e" not in text:
            return text
        m, e = text.split("e")
        if m in ("1", "-1"):
            return ("-" if m == "-1" else "") + f"10^{{{e}}}"
        return rf"{m} \cdot 10^{{{e}}}"


def tex_of(e: sp.Expr, names: dict) -> str:
    """An expression in LaTeX: symbols by `names`, numbers to four significant figures."""
    return _Tex({"symbol_names": names}).doprint(e)


@dataclass(frozen=True)
class Form:
    terms: tuple[str, ...]  # LaTeX of each term, the first without a sign, the others starting "+ " or "- "
    widths: tuple[float, ...]  # printed width of each, in em
    unit: str  # the unit of the value the terms give (`s`, `GB`, `1`)
    constant: bool  # no param in it: the terms are one number
    value: float  # at the defaults, in `unit`
    expr: sp.Expr | None = None  # what the terms print, in `unit` with params in their declared units (for checks)
    regimes: tuple[Regime, ...] = ()  # where each max / min in it changes hands over the swept param's range


class Printer:
    """Forms of one solution's quantities; `x` is the param they are collected by (the swept one)."""

    def __init__(self, symbols, x: str | None, one_line: bool = False, room: float = ROOM):
        self.symbols = symbols
        self.one_line = one_line  # a fraction stays one fraction however wide (a page that scrolls, mathtext)
        self.room = room  # em: a term wider than this is broken at its operators (the line's width)
        self.names = {i.symbol: symbol_tex(i) for i in symbols.info.values()}
        self.x = symbols.info[x].symbol if x in symbols.info else None
        self.xparam = symbols.info[x].param if x in symbols.info else None
        self.units = {i.symbol: i.symbol * _exact(i.param.unit_scale) for i in symbols.info.values() if i.param.unit_scale != 1}
        self._forms: dict = {}  # each quantity's form, made once (a break-even stated many times is one form)
        self._tidied: dict = {}  # each expression's tidy form (`_tidy`)

    def form(self, q, unit: tuple[float, str] | None = None) -> Form:
        """A result quantity (expr in base units, value, dim) as terms in a readable unit."""
        key = (q.expr, q.value, q.dim, unit)
        if key not in self._forms:
            self._forms[key] = self._form(q, unit)
        return self._forms[key]

    def _form(self, q, unit: tuple[float, str] | None) -> Form:
        scale, label = unit or U.best_unit([q.value] if math.isfinite(q.value) else [], q.dim)
        value = q.value / scale if math.isfinite(q.value) else q.value
        e = q.expr.xreplace(self.units) if self.units else q.expr
        if not e.free_symbols:
            return Form((), (), label, True, value)
        names = dict(self.names)
        self.hidden: dict = {}
        self.shown: dict = {}  # each hidden max: its LaTeX and its arguments' LaTeX as printed
        self.args: dict = {}  # each hidden max's symbol: its word and its tidied arguments
        e, dropped = self._drop_unbinding(e, names)
        e = self._hide(e, names)
        regimes = dropped + self._regimes()
        if scale != 1:
            e = sp.Add(*[t / _exact(scale) for t in sp.Add.make_args(e)])
        ratio = self._ratio(e, names)
        if ratio is not None:
            return Form(ratio[0], ratio[1], label, False, value, _unhide(ratio[2], self.hidden), regimes)
        e = self._tidy(e)
        terms, widths = [], []
        for i, t in enumerate(self._spread(e.as_ordered_terms() if e.is_Add else [e], names)):
            neg = t.could_extract_minus_sign()
            body = tex_of(-t if neg else t, names)
            sign = ("- " if neg else "+ ") if i else ("-" if neg else "")
            pieces = self._split(-t if neg else t, names) if width(body) > WIDE_MAX else None
            if pieces is None and width(body) > self.room and not self.one_line:
                pieces = self._break(-t if neg else t, names)  # wider than a line: broken at its operators
            if pieces is not None:  # a wide max or min: its arguments' terms are pieces a line may break between
                pieces[0] = sign + pieces[0]
                terms.extend(pieces)
                widths.extend(width(x) + 0.3 for x in pieces)
                continue
            terms.append(sign + body)
            widths.append(width(body) + (1.5 if i else 0))
        return Form(tuple(terms), tuple(widths), label, False, value, _unhide(e, self.hidden), regimes)

    def _spread(self, ts: list, names: dict) -> list:
        """Terms wider than a line that are a sum over a factor (a burst's waits over b: queueing.py)
        spread into that sum's terms, each over the factor, which lines may break between."""
        out = []
        for t in ts:
            if _over_one(t) and width(tex_of(t, names)) > self.room:
                parts = sp.Add.make_args(sp.expand_mul(t, deep=False))
                if len(parts) > 1:
                    out.extend(parts)
                    continue
            out.append(t)
        return out

    def _split(self, t: sp.Expr, names: dict) -> list[str] | None:
        """A term that is a number times one hidden max / min, as pieces a line may break between:
        `c \\max\\bigl(` (a line may end with it), each term of the first argument, `,\\ ` and the
        next argument's terms, ..., `\\bigr)`; a max inside an argument wider than a few em is
        broken the same way, and any other term of an argument wider than a line at its operators
        (`_break`: a burst's wait over b in a max, tests/data/tpxpp_step.ct)."""
        c, rest = t.as_coeff_Mul()
        if rest not in self.args:
            return None
        word, args = self.args[rest]
        pieces = [(tex_of(c, {}) + r"\," if c != 1 else "") + rf"{word}\bigl("]
        for j, a in enumerate(args):
            ts = self._spread(a.as_ordered_terms() if a.is_Add else [a], names)
            for i, x in enumerate(ts):
                neg = x.could_extract_minus_sign()
                body = tex_of(-x if neg else x, names)
                if j and i == 0:  # the comma ends a line, never starts one
                    pieces[-1] += r",\ "
                lead = ""
                sign = ("- " if neg else "+ ") if i else ("-" if neg else "")
                inner = self._split(-x if neg else x, names) if width(body) > NESTED_MAX else None
                if inner is None and width(body) > self.room and not self.one_line:
                    inner = self._break(-x if neg else x, names)  # wider than a line: broken at its operators
                if inner is not None:
                    inner[0] = lead + sign + inner[0]
                    pieces.extend(inner)
                    continue
                pieces.append(lead + sign + body)
        pieces[-1] += r"\bigr)"
        return pieces

    def _ratio(self, e: sp.Expr, names: dict) -> tuple[tuple[str, ...], tuple[float, ...], sp.Expr] | None:
        """One fraction of sums (a break-even's root): numerator and denominator factored, as terms.

        Printed `\\frac{N}{D}` when it is narrow; else as `(N) / (D)` with the
        factors of each as the pieces that lines may break between.
        """
        if e.is_Add or sp.count_ops(e) > MAX_OPS // 10 or _high_power(e):  # factoring is the costly step: small forms only
            return None
        n, d = sp.fraction(sp.together(e))
        if not d.free_symbols or not (n.is_Add or d.is_Add or any(f.is_Add for f in sp.Mul.make_args(d))):
            return None
        n, d = sp.factor(n), sp.factor(d)
        k = sp.Integer(1)
        normal = []
        for f in sp.Mul.make_args(d):  # each sum in the denominator scaled to a constant term of 1
            c = _leading(f) if f.is_Add else f if f.is_Number else sp.Integer(1)
            k *= c
            normal.append(f / c)
        top = []
        for f in sp.Mul.make_args(n / k):  # and in the numerator, the number in front
            c = _leading(f) if f.is_Add else sp.Integer(1)
            top.append(c)
            top.append(f / c)
        n, d = _whole(sp.N(sp.Mul(*top), DIGITS)), _whole(sp.N(sp.Mul(*normal), DIGITS))
        top = [_factor_tex(f, names) for f in _factors(n)]
        bottom = [_factor_tex(f, names) for f in _factors(d)]
        whole = rf"\frac{{{' '.join(top)}}}{{{' '.join(bottom)}}}"
        if width(whole) <= 16 or self.one_line:
            return (whole,), (width(whole),), n / d
        pieces = [r"\bigl("] + self._pieces(n, names) + [r"\bigr) \big/ \bigl("] + self._pieces(d, names) + [r"\bigr)"]
        merged = [pieces[0] + pieces[1]] + pieces[2:]  # no line starts with an opening bracket alone
        return tuple(merged), tuple(width(p) + 0.3 for p in merged), n / d

    def _pieces(self, e: sp.Expr, names: dict) -> list[str]:
        """A product as pieces a line may break between: its factors, and the terms of a wide sum in it
        (each term broken again at its operators where it is wider than a line)."""
        out: list[str] = []
        for f in _factors(e):
            tex = _factor_tex(f, names)
            if not f.is_Add or width(tex) <= 10:
                out.append(tex)
                continue
            for i, t in enumerate(f.as_ordered_terms()):
                neg = t.could_extract_minus_sign()
                ps = self._break(-t if neg else t, names)
                ps[0] = (r"\bigl(" if i == 0 else "") + ("- " if neg else "+ " if i else "") + ps[0]
                out += ps
            out[-1] += r"\bigr)"
        return out

    def _regimes(self) -> tuple[Regime, ...]:
        """The regime split of each max / min over the swept param's declared range, where one is found."""
        if self.x is None or self.one_line:
            return ()
        p = self.xparam
        lo, hi = (None, None) if p.lo is None or p.hi is None else (p.lo / p.unit_scale, p.hi / p.unit_scale)
        out = [regime(e, head, args, self.x, lo, hi) for e, (head, args) in self.shown.items()]
        return tuple(r for r in out if r is not None)

    def _drop_unbinding(self, e: sp.Expr, names: dict) -> tuple[sp.Expr, tuple[Regime, ...]]:
        """Each max / min of the swept param alone one argument of which holds over the param's whole
        range is that argument (innermost first): the form prints it alone, and its regime, returned,
        says why (`paper.Paper` writes it under the form)."""
        if self.x is None or self.one_line or self.xparam.lo is None or self.xparam.hi is None:
            return e, ()
        p = self.xparam
        lo, hi = p.lo / p.unit_scale, p.hi / p.unit_scale
        dropped: list[Regime] = []
        for _ in range(NESTED_DROPS):
            found = {}
            for m in sorted(e.atoms(sp.Max, sp.Min), key=sp.default_sort_key):  # a set: in a fixed order
                if any(a.has(sp.Max, sp.Min) for a in m.args):
                    continue  # the innermost first
                args = tuple(tex_of(self._tidy(a), names) for a in m.args)
                word = r"\max" if isinstance(m, sp.Max) else r"\min"
                rg = regime(m, rf"{word}\left({', '.join(args)}\right)", args, self.x, lo, hi)
                if rg is not None and rg.cross is None:
                    found[m] = m.args[rg.low]
                    dropped.append(rg)
            if not found:
                break
            e = e.xreplace(found)
        return e, tuple(dropped)

    def _break(self, e: sp.Expr, names: dict) -> list[str]:
        """A term wider than a line as pieces a line may break between, at its operators: a sum at its
        signs, a quotient as `(N) / (D)` with `\\bigl( \\bigr)` (which may stand on different lines), a
        product at its factors, a max at its arguments; each piece broken again while it is wider."""
        body = tex_of(e, names)
        if width(body) <= self.room:
            return [body]
        if e.is_Add:
            out: list[str] = []
            for i, t in enumerate(e.as_ordered_terms()):
                neg = t.could_extract_minus_sign()
                ps = self._break(-t if neg else t, names)
                ps[0] = (("- " if neg else "+ ") if i else ("-" if neg else "")) + ps[0]
                out += ps
            return out
        c, rest = e.as_coeff_Mul()
        if rest in self.args:
            return self._split(e, names) or [body]
        n, d = sp.fraction(e)
        if d != 1:
            top, bottom = self._factor_pieces(n, names), self._factor_pieces(d, names)
            out = [r"\bigl(" + top[0]] + top[1:]
            out[-1] += r"\bigr) \big/ \bigl("
            out += bottom
            out[-1] += r"\bigr)"
            return out
        if e.is_Mul or e.is_Pow:
            return self._factor_pieces(e, names)
        return [body]

    def _factor_pieces(self, e: sp.Expr, names: dict) -> list[str]:
        """A product at its factors, a sum in it bracketed and broken at its signs where it is wide."""
        out: list[str] = []
        for f in _factors(e):
            if f.is_Add:
                ps = self._break(f, names)
                if len(ps) == 1:
                    out.append(rf"\left({ps[0]}\right)")
                    continue
                ps[0] = r"\bigl(" + ps[0]
                ps[-1] += r"\bigr)"
                out += ps
            elif f.is_Pow and f.base.is_Add and width(tex_of(f, names)) > self.room:  # (a + b)^k: the sum broken
                ps = self._break(f.base, names)
                ps[0] = r"\bigl(" + ps[0]
                ps[-1] += rf"\bigr)^{{{tex_of(f.exp, names)}}}"
                out += ps
            elif f in self.args and width(tex_of(f, names)) > self.room:
                out += self._split(f, names) or [tex_of(f, names)]
            else:
                out.append(tex_of(f, names))
        return out

    def _tidy(self, e: sp.Expr) -> sp.Expr:
        """e in a readable form, made once per expression: the same max's arguments recur in
        every quantity of a scheme (110 calls, 68 distinct expressions on the flagship's paper)."""
        if e not in self._tidied:
            self._tidied[e] = self._tidy_once(e)
        return self._tidied[e]

    def _tidy_once(self, e: sp.Expr) -> sp.Expr:
        if sp.count_ops(e) > MAX_OPS:
            return sp.N(e, DIGITS)
        e = sp.Add(*[sp.factor_terms(t) for t in sp.Add.make_args(e)])
        e = sp.N(e, DIGITS)
        if self.x is not None and self.x in e.free_symbols:
            e = sp.collect(e, self.x)
        return _whole(e)

    def _hide(self, e: sp.Expr, names: dict) -> sp.Expr:
        """Each max / min replaced by a symbol whose LaTeX is the max of its tidied arguments."""
        if isinstance(e, (sp.Max, sp.Min)):
            if e not in self.hidden:  # one symbol for every place the same max appears
                self.hidden[e] = self._hide_one(e, names)
            return self.hidden[e]
        if not e.args or not any(a.has(sp.Max, sp.Min) for a in e.args):
            return e
        return e.func(*[self._hide(a, names) for a in e.args])

    def _hide_one(self, e: sp.Expr, names: dict) -> sp.Expr:
        args = [self._tidy(self._hide(a, names)) for a in e.args]
        k = _power_of_ten(args)
        if k != 1:
            args = [self._tidy(a / k) for a in args]
        word = r"\max" if isinstance(e, sp.Max) else r"\min"
        d = sp.Dummy("m")
        inner = ", ".join(tex_of(a, names) for a in args)
        names[d] = rf"{word}\left({inner}\right)"
        self.shown[e] = (names[d], tuple(tex_of(a, names) for a in args))
        self.args[d] = (word, args)
        return k * d if k != 1 else d


def _unhide(e: sp.Expr, hidden: dict) -> sp.Expr:
    """The form with each max / min put back (in the same units), for checking it against the exact form."""
    out = e
    for orig, h in reversed(list(hidden.items())):
        c, d = h.as_coeff_Mul()
        out = out.xreplace({d: orig / c})
    return out


def _exact(x: float) -> sp.Rational:
    """A float scale as the exact decimal it was written as (1e-06 -> 1/1000000), so that factoring stays exact."""
    return sp.Rational(repr(float(x)))


def _leading(f: sp.Expr) -> sp.Expr:
    """The number that scales a sum to a constant term of 1 (or, with none, a largest coefficient of 1)."""
    consts = [t for t in f.args if not t.free_symbols]
    c = consts[0] if consts else max((t.as_coeff_Mul()[0] for t in f.args), key=lambda v: abs(float(v)))
    return c if c != 0 else sp.Integer(1)


def _whole(e: sp.Expr) -> sp.Expr:
    """Floats that are whole numbers written as integers (1.0 -> 1)."""
    whole = {f: sp.Integer(int(f)) for f in e.atoms(sp.Float) if float(f) == int(f) and abs(float(f)) < 1e6}
    return e.xreplace(whole) if whole else e




def _factor_tex(f: sp.Expr, names: dict) -> str:
    body = tex_of(f, names)
    return rf"\left({body}\right)" if f.is_Add else body


def _factors(e: sp.Expr) -> list[sp.Expr]:
    """A product's factors, its number first; a lone number is one factor."""
    c, rest = e.as_coeff_Mul()
    facs = [f for f in sp.Mul.make_args(rest) if f != 1]
    return ([c] if c != 1 or not facs else []) + facs


def _power_of_ten(args) -> sp.Expr:
    """10^n with n the decade of the smallest coefficient: numbers of one size inside a max."""
    coeffs = []
    for a in args:
        c, _ = a.as_coeff_Mul()
        if c.is_Number and c != 0:
            coeffs.append(abs(float(c)))
    if not coeffs or min(coeffs) <= 0:
        return sp.Integer(1)
    n = int(math.floor(math.log10(min(coeffs))))
    return sp.Integer(10) ** n if abs(n) >= 3 else sp.Integer(1)


_COMMAND = re.compile(r"\\([A-Za-z]+)")
_WIDE = {"max": 2.2, "min": 2.0, "cdot": 0.8, "quad": 1.0, "mathrm": 0.0, "left": 0.0, "right": 0.0, "text": 0.0}


def width(tex: str) -> float:
    """The printed width of math-mode LaTeX, roughly, in em (a character about half an em)."""
    return _width(tex, 0)[0]


def _width(s: str, i: int, scale: float = 1.0) -> tuple[float, int]:
    w = 0.0
    while i < len(s):
        c = s[i]
        if c == "}":
            return w, i + 1
        if c == "{":
            inner, i = _width(s, i + 1, scale)
            w += inner
            continue
        if c in "_^":
            i += 1
            if i < len(s) and s[i] == "{":
                inner, i = _width(s, i + 1, scale * 0.7)
                w += inner
            else:
                w += 0.5 * scale * 0.7
                i += 1
            continue
        if c == "\\":
            m = _COMMAND.match(s, i)
            if m is None:
                i += 2
                w += 0.2 * scale
                continue
            name = m.group(1)
            i = m.end()
            if name == "frac":
                top, i = _width(s, i + 1, scale)
                bottom, i = _width(s, i + 1, scale)
                w += max(top, bottom) + 0.3 * scale
                continue
            w += _WIDE.get(name, 0.6) * scale
            continue
        w += (0.2 if c == " " else 0.8 if c in "+-=" else 0.5) * scale
        i += 1
    return w, i


def lines(terms: tuple[str, ...], widths: tuple[float, ...], first: float, rest: float) -> list[str]:
    """The terms packed into lines: the first at most `first` em wide, the others `rest`."""
    out: list[list[str]] = [[]]
    room = first
    used = 0.0
    for t, w in zip(terms, widths):
        if out[-1] and used + w > room:
            out.append([])
            room, used = rest, 0.0
        out[-1].append(t)
        used += w
    return [" ".join(line) for line in out]


def _over_one(t: sp.Expr) -> bool:
    """A sum over a param (a number times a sum times b^-k), no max or min in it."""
    if not t.is_Mul or t.has(sp.Max, sp.Min):
        return False
    sums = [f for f in t.args if f.is_Add]
    rest = [f for f in t.args if not f.is_Add]
    over = [f for f in rest if f.is_Pow and f.base.is_Symbol and f.exp.is_negative]
    return len(sums) == 1 and len(over) >= 1 and all(f.is_Number or f in over for f in rest)


def _high_power(e: sp.Expr) -> bool:
    """A power above 8 (a burst's rho^n, queueing.py: 707 on the flagship): factoring its fraction
    takes minutes, so the root is printed as it is."""
    return any(p.exp.is_Integer and abs(int(p.exp)) > 8 for p in e.atoms(sp.Pow))
