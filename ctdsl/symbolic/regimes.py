"""The exact half of a break-even: max/min split into regimes, and each regime's roots.

A step time's max() and min() that depend on b are never handed to sympy's
`solve`: `regimes` splits an expression into one branch per choice of the
argument that binds, each with the conditions under which it does. In a
branch the times are rational functions of b; `exact_roots` finds the roots of
the numerator of their difference, exactly, and says whether it found them
all (see its docstring). `breakeven.py` checks and completes what it returns.
"""

from __future__ import annotations

import functools
import math

import sympy as sp
from sympy.polys.polyerrors import BasePolynomialError

from ctdsl.language.tolerances import REL
from ctdsl.model import cost as C
from ctdsl.symbolic.convert import NumericError, value

MAX_EXACT_DEGREE = 4  # numerators of higher degree go to the scan: radicals stop at quartics
MAX_EXACT_NODES = 2000  # a regime's difference larger than this is not handed to together/Poly
MAX_EXACT_TERMS = 256  # a regime's difference that multiplies out into more terms (ctdsl.model.cost) is not expanded: a shipped spec's have at most 32
EVAL_FAILURES = (NumericError, TypeError, ValueError, ZeroDivisionError, OverflowError)
_SYMPY_GIVES_UP = (BasePolynomialError, NotImplementedError, ValueError, TypeError, ZeroDivisionError, RecursionError)


class TooManyRegimes(Exception):
    """More branches than the limit given to `regimes`."""


def _first_maxmin(expr: sp.Expr, b: sp.Symbol):
    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.Max, sp.Min)) and node.has(b):
            return node
    return None


def regimes(expr: sp.Expr, b: sp.Symbol, labels: dict[sp.Expr, str] | None, limit: int):
    """Split expr into branches free of max/min in b: (branch, conditions, words).

    A condition (big, small) means big >= small must hold for the branch to bind.
    More than `limit` branches raise TooManyRegimes.
    """
    labels = labels or {}
    node = _first_maxmin(expr, b)
    if node is None:
        return [(expr, [], [])]
    out = []
    is_max = isinstance(node, sp.Max)
    for arg in node.args:
        conds = [((arg, other) if is_max else (other, arg)) for other in node.args if other != arg]
        words = [f"{labels[arg]} binds"] if arg in labels else []
        for sub, subconds, subwords in regimes(expr.xreplace({node: arg}), b, labels, limit):
            out.append((sub, conds + subconds, words + subwords))
            if len(out) > limit:
                raise TooManyRegimes
    return out


def freeze_constants(exprs: list[sp.Expr], b: sp.Symbol, table: dict[sp.Expr, sp.Dummy] | None = None):
    """Replace b-free max/min/ceiling by placeholders; return (exprs, back-map).

    `table` (placeholder of each expression), when given, is shared with other calls: the
    same max gets the same placeholder in every branch, and the back-map covers them all.
    """
    table = {} if table is None else table

    def walk(e: sp.Expr) -> sp.Expr:
        if isinstance(e, (sp.Max, sp.Min, sp.ceiling, sp.floor)) and not e.has(b):
            if e not in table:
                table[e] = sp.Dummy("k", positive=True)
            return table[e]
        if not e.args:
            return e
        new = [walk(a) for a in e.args]
        return e.func(*new) if any(n is not a for n, a in zip(new, e.args)) else e

    frozen = [walk(e) for e in exprs]
    back = {d: e for e, d in table.items()}
    return frozen, back


def larger_than(e: sp.Expr, cap: int) -> bool:
    """Whether e has more than cap nodes, counted only up to cap."""
    for n, _ in enumerate(sp.preorder_traversal(e)):
        if n >= cap:
            return True
    return False


def exact_roots(diff: sp.Expr, b: sp.Symbol, back, env, parts: tuple[sp.Expr, sp.Expr] | None = None) -> tuple[list[sp.Expr], int | None, bool]:
    """The roots of diff = 0 in b that sympy finds exactly: (roots, degree, complete).

    `complete` is False where sympy may have missed some: b is not polynomial in
    the numerator (inside ceil, log2), the degree is above MAX_EXACT_DEGREE, the
    difference is too large to hand over (more than MAX_EXACT_NODES nodes, or
    more than MAX_EXACT_TERMS terms once multiplied out, which its cost says
    before anything is expanded: two fields of (a + b + c + d + e) ^ 8 took a
    minute), sympy raised, or `roots` returned fewer roots (with multiplicity)
    than the degree. The degree is None when unknown.

    `parts` (x, y), when given, are the two sides with diff = x - y: their expansions are
    remembered (`_expanded`), so that a branch paired with every branch of the other side
    is expanded once, not once a pair; expand(x) - expand(y) is expand(x - y), the same
    expression (srepr-identical on all 322 pairs of the shipped specs and examples).
    """
    if C.of_sympy(diff).terms > math.log2(MAX_EXACT_TERMS):
        return [], None, False
    quick = _laurent_roots(diff, b, back, env, parts)
    if quick is not None:
        return quick[0], quick[1], True
    if larger_than(diff, MAX_EXACT_NODES):
        return [], None, False
    try:
        num, _den = sp.fraction(sp.together(diff))
        poly = sp.Poly(sp.expand(num), b)
    except _SYMPY_GIVES_UP:
        return [], None, False
    deg = poly.degree()
    if deg <= 0:
        return [], deg, True
    if deg == 1:
        c1, c0 = poly.all_coeffs()
        return [-c0 / c1], 1, True
    if deg == 2:
        return _quadratic_roots(*poly.all_coeffs()), 2, True
    if deg > MAX_EXACT_DEGREE:
        return [], deg, False
    try:
        found = sp.roots(poly, b)
    except _SYMPY_GIVES_UP:
        return [], deg, False
    kept = [r for r in found if not r.has(sp.CRootOf)]
    return kept, deg, len(kept) == len(found) and sum(found.values()) == deg


def _quadratic_roots(a: sp.Expr, b: sp.Expr, c: sp.Expr) -> list[sp.Expr]:
    """The two roots of a b^2 + b b + c, as sympy's roots_quadratic gives them (-b/2a -+ sqrt(d)/2a,
    d = b^2 - 4ac) but without its simplify or factor of each coefficient: those took most of
    a break-even's solve (1.1 of 1.8 CPU-seconds for the three quadratic break-evens of
    examples/20_codesign_study.ct), and the roots are the same numbers."""
    if c == 0:
        return [sp.Integer(0), -b / a]
    if b == 0:
        r = sp.sqrt(-c / a)
        return [-r, r]
    B = -b / (2 * a)
    D = sp.sqrt(b**2 - 4 * a * c) / (2 * a)
    return [B - D, B + D]


def _laurent_roots(diff: sp.Expr, b: sp.Symbol, back, env, parts=None) -> tuple[list[sp.Expr], int] | None:
    """The common case without `together`: diff = c_k b^k + c_m b^m, whole k < m.

    A step time is alpha + beta / b in each regime, so the difference of two is
    c_0 + c_-1 / b, and its one root is -c_-1 / c_0: the same root the general
    path finds through the numerator's polynomial, at a fraction of the cost.
    Returns (roots, degree), or None for anything else (then the general path
    runs): b inside another function, three or more powers, or a coefficient that
    is zero at the defaults (it may be zero identically, which only the general
    path can tell).
    """
    terms: dict[int, sp.Expr] = {}
    expanded = _expanded(parts[0]) - _expanded(parts[1]) if parts is not None else sp.expand(diff)
    for term in sp.Add.make_args(expanded):
        c, k = coeff_exponent(term, b)
        if not k.is_Integer or c.has(b):
            return None
        terms[int(k)] = terms.get(int(k), sp.Integer(0)) + c
    terms = {k: c for k, c in terms.items() if c != 0}
    if len(terms) <= 1:
        return [], 0
    if len(terms) > 2:
        return None
    (k, low), (m, high) = sorted(terms.items())
    for c in (low, high):
        try:
            v = value(c.xreplace(back), env)
        except EVAL_FAILURES:
            return None
        if not math.isfinite(v) or v == 0 or abs(v) <= REL * _magnitude(c.xreplace(back), env):
            return None
    if m - k != 1:
        return None
    return [-low / high], 1


@functools.lru_cache(maxsize=256)
def _expanded(e: sp.Expr) -> sp.Expr:
    """sp.expand(e), remembered: one side's branch meets every branch of the other side."""
    return sp.expand(e)


def coeff_exponent(term: sp.Expr, b: sp.Symbol) -> tuple[sp.Expr, sp.Expr]:
    """term.as_coeff_exponent(b) for a term of an expanded sum, without its `collect`.

    `as_coeff_exponent` collects in b before it splits the term (0.7 of the flagship's
    1.4 profiled CPU-seconds in `_laurent_roots`, 384 terms). Where the term is a product
    of b-free factors and at most one factor b or b**n (n whole), which is what an expanded
    step time's terms are, the split is read off its factors: the b-free factors as
    `as_coeff_mul` gives them, the power of b. Anything else goes to `as_coeff_exponent`
    (through a cache).
    """
    if term == b:
        return sp.Integer(1), sp.Integer(1)
    if term.is_Pow:
        if term.base == b and term.exp.is_Integer:
            return sp.Integer(1), term.exp
    elif term.is_Mul:
        free, dep = [], []
        for f in term.args:
            (dep if f.has(b) else free).append(f)
        if not dep:
            return term, sp.Integer(0)
        if len(dep) == 1:
            f = dep[0]
            if f == b:
                return term._new_rawargs(*free), sp.Integer(1)
            if f.is_Pow and f.base == b and f.exp.is_Integer:
                return term._new_rawargs(*free), f.exp
    elif not term.has(b) and (term.is_Atom or term.is_Function):
        return term, sp.Integer(0)
    return _as_coeff_exponent(term, b)


@functools.lru_cache(maxsize=1024)
def _as_coeff_exponent(term: sp.Expr, b: sp.Symbol) -> tuple[sp.Expr, sp.Expr]:
    """sympy's own split, remembered: the same term recurs across the regime pairs of a
    break-even (214 calls, 27 distinct terms on the flagship, b inside a queue's denominator)."""
    return term.as_coeff_exponent(b)


def _magnitude(c: sp.Expr, env) -> float:
    """The sum of the absolute values of c's terms: the scale against which c is 'zero'."""
    total = 0.0
    for t in sp.Add.make_args(c):
        try:
            total += abs(value(t, env))
        except EVAL_FAILURES:
            return math.inf
    return total
