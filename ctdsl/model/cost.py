"""What an expression costs to fold exactly and to multiply out, found by logarithms before the work.

Three sizes of an expression grow much faster than its text, and each is bounded
here, once, for every path that evaluates a spec's expressions:

- **bits**: the size of the exact numbers that folding its constants makes (a
  numerator's and a denominator's bits, `num + den`). `2 ^ ((10^64)^64)` is 42
  bytes of spec, and its exponent alone is a number of 4,096 digits; one more
  `^64` and the power has a billion digits. Python's Fraction and sympy's
  Rational compute it if asked, for minutes. A power's size is its base's times
  the exponent (log |x^n| = n log |x|), so it is known before it is computed.
- **degree**: the degree in the params. sympy folds `(x^64)^64` into `x^4096`
  and `x * x` into `x^2`; a break-even's polynomial in the param is then of
  that degree, and sympy's Poly holds every coefficient (x^16777216: 7 GB).
- **terms**: the terms once multiplied out. `(a + b + c + d + e)^64` is 814,385
  monomials when a break-even expands it (minutes, a gigabyte); a power of a sum
  of T terms to the n is C(T + n - 1, n) of them, a product's are the product.

`Cost` holds the three for one expression, as logarithms (base 2), and for a
constant its exact value. The rules below combine them node by node, as upper
bounds on what sympy or Fraction would build, with one approximation: a sum's
denominators are taken to share their factors (as units and decimals do), so a
sum of fractions over distinct primes is counted short. A sum only adds sizes,
never multiplies them, and the file's node bound (`MAX_EXPR_NODES`) caps what
sums can do; the multiplying operations are counted in full.

Who uses it:

- the checker (`ctdsl.check.exprs`) measures every node it builds (`measure`,
  with a memo shared over a spec) and reports the first over a limit at that
  node's place: CT610 bits, CT611 degree, CT612 terms. Every expression that
  reaches a back end has passed it.
- exact evaluation (`ctdsl.model.expr.exact`) folds through `exact_add`,
  `exact_mul`, `exact_div` and `exact_pow`, which raise `TooCostly` before a
  number over the bound is built.
- the sympy conversion (`ctdsl.symbolic.convert`) asks `pow_bits` before sympy
  folds a number's power, and a break-even's exact roots
  (`ctdsl.symbolic.regimes.exact_roots`) ask `of_sympy` how many terms a
  difference of two times multiplies out into before expanding it (each field
  is within the bound, but the difference multiplies fields together): the
  same rules, read off sympy's tree (by its `is_Add`, `is_Mul`, `is_Pow` and
  `is_Rational`, so this module imports no sympy).

The float evaluators need no bound: a float power overflows to an error or to
inf at once (`ctdsl.model.expr.evaluate`, `ctdsl.symbolic.convert.value`, the
numpy of sweeps and samples, the explorer's JavaScript).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ctdsl import limits
from ctdsl.model.nodes import Expr
from ctdsl.model.visit import Memo, Visitor

MAX_BITS = limits.MAX_EXACT_BITS
MAX_DEGREE = limits.MAX_DEGREE
_LOG_TERMS = math.log2(limits.MAX_EXPANDED_TERMS)


class TooCostly(ArithmeticError):
    """An exact operation whose result would be over the bound: it is not computed."""

    def __init__(self, what: str, bits: float):
        super().__init__(f"{what} of about {digits(bits):,} digits ({bits:,.0f} bits): the bound is {MAX_BITS:,} bits")
        self.bits = bits


def digits(bits: float) -> int:
    """Decimal digits of a number of `bits` bits."""
    return max(1, math.ceil(bits * math.log10(2)))


def _lg(n: int) -> float:
    """log2 |n|, 0 for 0 (math.log2 takes integers of any size)."""
    return math.log2(abs(n)) if n else 0.0


def size(q: Fraction) -> float:
    """The bits of an exact number: log2 of its numerator's magnitude plus its denominator's."""
    return _lg(q.numerator) + _lg(q.denominator)


def _lse(x: float, y: float) -> float:
    """log2(2^x + 2^y), without leaving the float range."""
    hi, lo = (x, y) if x >= y else (y, x)
    return hi + math.log2(1.0 + 2.0 ** (lo - hi))


def _log_choose(n: float, k: int) -> float:
    """log2 of C(n + k - 1, k): the monomials of degree k in n terms (n may be a bound, not whole)."""
    if k <= 0 or n <= 1:
        return 0.0
    if n > 2.0**60:  # far over any bound: a lower bound of the logarithm is enough
        return k * math.log2(n) - math.lgamma(k + 1) / math.log(2)
    return (math.lgamma(n + k) - math.lgamma(k + 1) - math.lgamma(n)) / math.log(2)


# ---- guarded exact arithmetic -------------------------------------------------------------------
#
# Each takes operands within the bound (so that computing from them is cheap:
# at most twice the bound's bits, or the bound times an exponent the checker
# bounds), and refuses a result over it. A power is refused by its predicted
# size before it is computed.


def _within(q: Fraction, what: str) -> Fraction:
    if size(q) > MAX_BITS:
        raise TooCostly(what, size(q))
    return q


def exact_add(a: Fraction, b: Fraction) -> Fraction:
    return _within(a + b, "a sum")


def exact_sub(a: Fraction, b: Fraction) -> Fraction:
    return _within(a - b, "a difference")


def exact_mul(a: Fraction, b: Fraction) -> Fraction:
    if size(a) + size(b) > 2 * MAX_BITS:  # never met with operands within the bound
        raise TooCostly("a product", size(a) + size(b))
    return _within(a * b, "a product")


def exact_div(a: Fraction, b: Fraction) -> Fraction:
    if size(a) + size(b) > 2 * MAX_BITS:
        raise TooCostly("a quotient", size(a) + size(b))
    return _within(a / b, "a quotient")


def pow_bits(base_bits: float, exp: Fraction | int) -> float:
    """The bits of base ^ exp from the base's bits: |exp| times as many (sympy and Fraction
    compute base ^ p before any root of a fractional p/q, so |p| counts)."""
    e = Fraction(exp)
    return base_bits * abs(e.numerator)


def exact_pow(a: Fraction, n: int) -> Fraction:
    """a ^ n for a whole n, refused by its size before it is computed."""
    bits = pow_bits(size(a), n)
    if bits > MAX_BITS:
        raise TooCostly("a power", bits)
    return a**n


# ---- the cost of a node -------------------------------------------------------------------------
#
# For an expression of params, the numbers folding makes are its coefficients
# (sympy folds 2 * (3 * x) into 6 * x, and (x / 1000) ^ 2 into x^2 / 10^6), and
# the cost bounds them by two logarithms: `mag`, of their magnitude, and `den`,
# of a denominator that all of them divide. While that denominator is small it
# is kept exactly (`q`), so that a sum takes the lcm of its terms' (x / 1000 +
# y / 1000 is over 1000, as sympy has it), and otherwise their product (x / 3 +
# x / 5 is 8 x / 15). A coefficient's numerator is then at most mag + den bits.


_Q_BITS = 64  # a common denominator is kept exactly up to this size, then as its logarithm


def _q(q: int | None) -> int | None:
    return q if q is not None and q.bit_length() <= _Q_BITS else None


@dataclass(frozen=True, slots=True)
class Cost:
    """Upper bounds for one expression, as base-2 logarithms; `value` is exact for a constant.

    `mag` bounds the magnitude of the numbers folding makes (a constant's value,
    an expression's coefficients), `den` a denominator they all divide (`q`,
    that denominator itself while it is small); `degree` is the degree in the
    params, `terms` the log of the terms once multiplied out.
    """

    mag: float = 0.0
    den: float = 0.0
    q: int | None = 1
    degree: float = 0.0
    terms: float = 0.0
    value: Fraction | None = None

    @property
    def bits(self) -> float:
        """Numerator and denominator bits of the largest number folding makes."""
        return max(0.0, self.mag + self.den) + self.den

    def over(self) -> tuple[str, str, str, str] | None:
        """(code, message, label, help) for the first bound this breaks, or None."""
        if self.bits > MAX_BITS:
            return (
                "CT610",
                f"exact value too large: about {digits(self.bits):,} digits ({self.bits:,.0f} bits), the bound is {MAX_BITS:,} bits",
                "sized by logarithms, never computed",
                "a power multiplies its base's digits by the exponent and a product adds them; a float holds up to 1e308",
            )
        if self.degree > MAX_DEGREE:
            return (
                "CT611",
                f"degree {_text(self.degree)} in the params is beyond the bound of {MAX_DEGREE}",
                f"degree {_text(self.degree)}",
                "nested powers multiply their exponents and a product adds them: (x ^ 8) ^ 8 is x ^ 64",
            )
        if self.terms > _LOG_TERMS:
            return (
                "CT612",
                f"multiplied out, this has about {_count(self.terms)} terms; the bound is {limits.MAX_EXPANDED_TERMS:,}",
                f"{_count(self.terms)} terms",
                "a power of a sum multiplies out term by term: (a + b + c) ^ 8 has 45 terms",
            )
        return None

    def sizes(self, degree: float | None = None, terms: float | None = None) -> "Cost":
        """The same bounds without the exact value (and with another degree or count of terms)."""
        return Cost(
            self.mag,
            self.den,
            self.q,
            self.degree if degree is None else degree,
            self.terms if terms is None else terms,
        )


def _text(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 or float(x).is_integer() else f"{x:g}"


def _count(log_terms: float) -> str:
    return f"{2.0 ** log_terms:,.0f}" if log_terms < 60 else f"10^{log_terms * math.log10(2):,.0f}"


SYMBOL = Cost(degree=1.0)


def rational(p: int, q: int) -> Cost:
    """The sizes of the number p/q (in lowest terms), without keeping it."""
    return Cost(mag=_lg(p) - _lg(q), den=_lg(q), q=_q(q))


def number(v: Fraction) -> Cost:
    c = rational(v.numerator, v.denominator)
    return Cost(c.mag, c.den, c.q, value=v)


def _constant(v: Fraction) -> Cost:
    """A folded constant; over the bound, its sizes only (so that nothing above it folds it further)."""
    c = number(v)
    return c if c.bits <= MAX_BITS else c.sizes()


def _common(a: Cost, b: Cost) -> tuple[float, int | None]:
    """A denominator that both a's and b's numbers divide: their lcm while both are known, else the product."""
    if a.q is not None and b.q is not None:
        q = math.lcm(a.q, b.q)
        return _lg(q), _q(q)
    return a.den + b.den, None


# Two constants within the bound fold exactly (the result is at most twice the
# bound's bits: cheap), and a result over it keeps only its sizes.


def add(a: Cost, b: Cost, sub: bool = False) -> Cost:
    if a.value is not None and b.value is not None:
        return _constant(a.value - b.value if sub else a.value + b.value)
    den, q = _common(a, b)
    return Cost(_lse(a.mag, b.mag), den, q, max(a.degree, b.degree), _lse(a.terms, b.terms))


def mul(a: Cost, b: Cost) -> Cost:
    if a.value is not None and b.value is not None:
        return _constant(a.value * b.value)
    q = _q(a.q * b.q) if a.q is not None and b.q is not None else None
    return Cost(a.mag + b.mag, a.den + b.den, q, a.degree + b.degree, a.terms + b.terms)


def _inverse(b: Cost) -> Cost:
    """1 / b's numbers: at most b's denominator in magnitude, over b's numerators."""
    return Cost(b.den, max(0.0, b.mag + b.den), None, b.degree, b.terms)


def div(a: Cost, b: Cost) -> Cost:
    if a.value is not None and b.value is not None:
        if b.value == 0:  # no exact value: the checker's evaluation says division by zero
            return a.sizes()
        return _constant(a.value / b.value)
    if b.value is not None and b.value != 0:
        return mul(a, number(1 / b.value).sizes())
    return mul(a.sizes(), _inverse(b))


def neg(a: Cost) -> Cost:
    return a if a.value is None else _constant(-a.value)


def power(a: Cost, exp: Fraction) -> Cost:
    """a ^ exp: sizes by logarithms first; the exact value only when it is within the bound.

    The numbers grow by |p| of exp = p/r (base ^ p is what a root is taken of),
    the degree by |exp|, the terms as the monomials of degree floor(|exp|) in
    the base's terms (a fractional part is a radical: one term).
    """
    e = Fraction(exp)
    p = abs(e.numerator)
    if e >= 0:
        base = a
    elif a.value:  # a constant: its reciprocal's own sizes
        base = number(1 / a.value).sizes()
    else:
        base = _inverse(a)
    q = _q(base.q**p) if base.q is not None and base.q.bit_length() * p <= _Q_BITS else None
    grown = Cost(base.mag * p, base.den * p, q, float(a.degree * abs(e)), _log_choose(2.0 ** min(a.terms, 1000.0), int(abs(e))))
    if grown.over() is not None or a.value is None:
        return grown
    if e.denominator != 1 or (a.value == 0 and e <= 0):
        return grown  # no exact value (a radical, or 0 to a power that is not positive)
    return _constant(exact_pow(a.value, e.numerator))


def extreme(args: tuple[Cost, ...], pick) -> Cost:
    """min or max: one of the arguments binds in each regime."""
    if all(c.value is not None for c in args):
        return pick(args, key=lambda c: c.value)
    out = args[0].sizes()
    for c in args[1:]:
        den, q = _common(out, c)
        out = Cost(max(out.mag, c.mag), den, q, max(out.degree, c.degree), max(out.terms, c.terms))
    return out


def ceiling(a: Cost) -> Cost:
    if a.value is not None:
        return _constant(Fraction(math.ceil(a.value)))
    return a.sizes(terms=0.0)  # one term: ceil(...) is not multiplied out


def logarithm(a: Cost) -> Cost:
    if a.value is not None:
        v = a.value
        if v > 0 and v.denominator == 1 and v.numerator & (v.numerator - 1) == 0:
            return _constant(Fraction(v.numerator.bit_length() - 1))
    return a.sizes(degree=1.0 if a.degree else 0.0, terms=0.0)  # the log is one term, its argument inside


_MEASURE = Visitor(
    {
        "Num": lambda _c, e: number(e.value),
        "Sym": lambda _c, e: SYMBOL,
        "Add": lambda _c, e, a, b: add(a, b),
        "Sub": lambda _c, e, a, b: add(a, b, sub=True),
        "Mul": lambda _c, e, a, b: mul(a, b),
        "Div": lambda _c, e, a, b: div(a, b),
        "Neg": lambda _c, e, a: neg(a),
        "Pow": lambda _c, e, a: power(a, e.exp),
        "min": lambda _c, e, *xs: extreme(xs, min),
        "max": lambda _c, e, *xs: extreme(xs, max),
        "ceil": lambda _c, e, a: ceiling(a),
        "log2": lambda _c, e, a: logarithm(a),
    }
)


def measure(expr: Expr, memo: Memo | None = None) -> Cost:
    """The cost of a checked expression. With a shared `memo` (id -> (node, Cost)), a node
    already measured is not walked again, so measuring each node as it is built is linear.

    A node whose cost is over a bound gets that cost (its exact value is not
    computed), and so do the nodes above it: the checker reports the first.
    """
    return _MEASURE(expr, None, memo)


# ---- the same rules on sympy's tree --------------------------------------------------------------


def of_sympy(expr: object) -> Cost:
    """The cost of a sympy expression, by the rules above (exact values are not kept).

    Read by attributes (`is_Rational`, `is_Add`, `is_Mul`, `is_Pow`, `args`), so
    that this module does not import sympy. A function (ceiling, log, max) is one
    term whose arguments count as they are; a float is a number of 53 bits.
    """
    memo: dict = {}
    stack = [(expr, False)]
    while stack:
        e, ready = stack.pop()
        if e in memo:
            continue
        if not ready:
            stack.append((e, True))
            stack.extend((a, False) for a in e.args if a not in memo)
            continue
        memo[e] = _sympy_node(e, [memo[a] for a in e.args])
    return memo[expr]


def _sympy_node(e, kids: list[Cost]) -> Cost:
    if getattr(e, "is_Rational", False):
        return rational(int(e.p), int(e.q))
    if getattr(e, "is_Number", False):
        return Cost(mag=1024.0)  # a float: up to 2^1024 in magnitude, 53 bits of digits
    if getattr(e, "is_Symbol", False):
        return SYMBOL
    if not kids:
        return Cost()  # a constant such as pi or E
    if getattr(e, "is_Add", False):
        out = kids[0]
        for k in kids[1:]:
            out = add(out, k)
        return out
    if getattr(e, "is_Mul", False):
        out = kids[0]
        for k in kids[1:]:
            out = mul(out, k)
        return out
    if getattr(e, "is_Pow", False):
        exp = e.args[1]
        if getattr(exp, "is_Rational", False):
            return power(kids[0], Fraction(int(exp.p), int(exp.q)))
        return kids[0].sizes(degree=kids[0].degree + kids[1].degree, terms=0.0)  # b ^ (symbolic): one term
    if type(e).__name__ in ("Max", "Min"):
        return extreme(tuple(kids), max)
    # any other function: one term, its arguments' numbers as they are
    return extreme(tuple(kids), max).sizes(terms=0.0)
