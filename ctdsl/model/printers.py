"""Printers of checked expressions: infix text and LaTeX, as visitor tables.

A printer folds a node's children into `(text, precedence)` pairs, and the
parent decides whether a child needs parentheses: a child is wrapped when its
precedence is below what its place asks for (`wrap`). Precedences, lowest
first: sums 1, products 2, unary minus 3, powers 4, atoms (numbers, names,
calls) `ATOM`. The left operand of `-` and `/` asks for the operator's own
precedence, the right one for one more, so `a - (b - c)` keeps its parentheses
and `a - b - c` gets none; a power's base asks for more than a power.

The text is a rope while it is built: a string, or a tuple of ropes to be read
in order, so that a parent holds its children's text without copying it, and
`join` makes one string at the end. Concatenating strings instead would copy
a deep chain's text once per level, and the memo would keep every copy.

Another printer (JavaScript for the explorer, say) is another table built the
same way: `TEXT.replace(Pow=..., min=call("Math.min("), ...)`, with `infix`,
`call` and `wrap` for the entries it changes. The context handed to every
handler is the function that names a param.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Union

from ctdsl.language.texname import atom, safe_display
from ctdsl.model.nodes import Expr
from ctdsl.model.visit import Visitor

ATOM = 9
Rope = Union[str, tuple]  # a string, or a tuple of ropes read in order
Printed = tuple[Rope, float]  # text and precedence


def join(rope: Rope) -> str:
    """The string a rope holds (without recursion: ropes are as deep as expressions)."""
    out: list[str] = []
    stack = [rope]
    while stack:
        r = stack.pop()
        if type(r) is str:
            out.append(r)
        else:
            stack.extend(reversed(r))
    return "".join(out)


def wrap(kid: Printed, prec: float, left: str = "(", right: str = ")") -> Rope:
    """A child's text, parenthesised if it binds less tightly than `prec` asks."""
    text, p = kid
    return (left, text, right) if p < prec else text


def infix(op: str, prec: int, tight_right: bool = False, left: str = "(", right: str = ")"):
    """A binary operator's handler: `a op b`, the right side one tighter if `tight_right`."""
    rprec = prec + 1 if tight_right else prec

    def handler(_ctx, _e, a: Printed, b: Printed) -> Printed:
        (ta, pa), (tb, pb) = a, b  # wrap(), written out: every sum and product comes here
        if pa < prec:
            ta = (left, ta, right)
        if pb < rprec:
            tb = (left, tb, right)
        return (ta, op, tb), prec

    return handler


def call(head: str, sep: str = ", ", tail: str = ")"):
    """A function call's handler: `head` args `tail`, e.g. `max(` ... `)`."""

    def handler(_ctx, _e, *args: Printed) -> Printed:
        parts: list[Rope] = [head]
        for i, (t, _) in enumerate(args):
            if i:
                parts.append(sep)
            parts.append(t)
        parts.append(tail)
        return tuple(parts), ATOM

    return handler


# ---- text ---------------------------------------------------------------------------------


def number_text(v: Fraction) -> str:
    """An exact number as short text: `12`, `0.25`, `1.2e-09`, or `1/3` when no float is exact."""
    if v.denominator == 1:
        return str(v.numerator)
    text = repr(float(v))
    if Fraction(text) == v:
        return text
    return f"{v.numerator}/{v.denominator}"


def _text_num(_name_of, e) -> Printed:
    text = number_text(e.value)
    # a negative number or a fraction reads as a sum would inside a product or power
    return text, 1 if (e.value < 0 or "/" in text) else ATOM


def _text_pow(_name_of, e, base: Printed) -> Printed:
    exp = number_text(e.exp)
    return (wrap(base, 5), "^" + (exp if e.exp >= 0 else "(" + exp + ")")), 4


TEXT = Visitor(
    {
        "Num": _text_num,
        "Sym": lambda name_of, e: (name_of(e.name), ATOM),
        "Add": infix(" + ", 1),
        "Sub": infix(" - ", 1, tight_right=True),
        "Mul": infix(" * ", 2),
        "Div": infix(" / ", 2, tight_right=True),
        "Neg": lambda _name_of, e, a: (("-", wrap(a, 3)), 3),
        "Pow": _text_pow,
        "min": call("min("),
        "max": call("max("),
        "ceil": call("ceil("),
        "log2": call("log2("),
    }
)


def _same(name: str) -> str:
    return name


def render(expr: Expr, name_of: Callable[[str], str] = _same) -> str:
    """Infix text in base units, e.g. `max(1.2e10, wan_bw)`; for JSON and graphs."""
    return join(TEXT(expr, name_of)[0])


# ---- LaTeX ----------------------------------------------------------------------------------
#
# Precedences as in text, with two changes: a fraction (\frac, and a number
# written as m \times 10^{k} or 10^{k}) needs parentheses only as the base of
# a power, and a unary minus binds like a sum term, so it is parenthesised
# inside products and powers (`a \cdot \left(-b\right)`) but not in sums.

_L, _R = r"\left(", r"\right)"
_LNEG = 1.5  # a leading minus, and a negative number
_LFRAC = 4  # \frac{a}{b}, m \times 10^{k}
_LPOW = 5  # x^{k}, 10^{k}
_LBASE = 6  # what a power's base asks for: atoms only


def latex_name(name: str, display: str | None = None) -> str:
    """A param's LaTeX: its display text if it has one (as an atom a power may follow,
    `texname.atom`), else `b_{\\mathrm{wan}}` from `b_wan`."""
    if display:
        return atom(display) if safe_display(display) else display
    head, *rest = name.split("_")
    text = head if len(head) == 1 else r"\mathrm{" + head + "}"
    if rest:
        text += r"_{\mathrm{" + r"\_".join(rest) + "}}"
    return text


def _scientific(mantissa: str, exponent: int) -> Printed:
    if mantissa == "1":
        return f"10^{{{exponent}}}", _LPOW
    return rf"{mantissa} \times 10^{{{exponent}}}", _LFRAC


def number_latex(v: Fraction) -> Printed:
    """An exact number in LaTeX, with its precedence.

    Integers below 10^6 in digits, larger ones with at most four significant
    digits as `m \\times 10^{k}`; other numbers as their decimal when a float
    gives it exactly (`0.25`, `1.25 \\times 10^{-9}`), else as `\\frac{p}{q}`.
    """
    if v < 0:
        text, _ = number_latex(-v)
        return "-" + text, _LNEG
    if v.denominator == 1:
        n = v.numerator
        digits = str(n).rstrip("0")
        if n >= 10**6 and len(digits) <= 4:
            mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
            return _scientific(mantissa, len(str(n)) - 1)
        return str(n), ATOM
    text = repr(float(v))
    if Fraction(text) == v:
        if "e" in text:
            mantissa, exponent = text.split("e")
            return _scientific(mantissa, int(exponent))
        return text, ATOM
    return rf"\frac{{{v.numerator}}}{{{v.denominator}}}", _LFRAC


def _latex_neg(_name_of, e, a: Printed) -> Printed:
    return ("-", wrap(a, 2, _L, _R)), _LNEG


def _latex_pow(_name_of, e, base: Printed) -> Printed:
    return (wrap(base, _LBASE, _L, _R), "^{" + number_latex(e.exp)[0] + "}"), _LPOW


LATEX = Visitor(
    {
        "Num": lambda _name_of, e: number_latex(e.value),
        "Sym": lambda name_of, e: (name_of(e.name), ATOM),
        "Add": infix(" + ", 1, left=_L, right=_R),
        "Sub": infix(" - ", 1, tight_right=True, left=_L, right=_R),
        "Mul": infix(r" \cdot ", 2, left=_L, right=_R),
        "Div": lambda _name_of, e, a, b: ((r"\frac{", a[0], "}{", b[0], "}"), _LFRAC),
        "Neg": _latex_neg,
        "Pow": _latex_pow,
        "min": call(r"\min" + _L, tail=_R),
        "max": call(r"\max" + _L, tail=_R),
        "ceil": call(r"\left\lceil ", tail=r" \right\rceil"),
        "log2": call(r"\log_2" + _L, tail=_R),
    }
)


def latex(expr: Expr, name_of: Callable[[str], str] = latex_name) -> str:
    """LaTeX of a checked expression in base units; `name_of` gives a param's LaTeX."""
    return join(LATEX(expr, name_of)[0])
