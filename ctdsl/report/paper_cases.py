"""Where a max / min in a printed form changes hands over the swept param's range.

`t_2 = 2 max(0.7055, 70.55/b) + ...` is easier to read with the regime split
written out: `max(0.7055, 70.55/b) = 70.55/b for b < 100 GB/s, 0.7055 for
b >= 100 GB/s`. A `Regime` is that split, found only when it is cheap and exact:

- two arguments, each a function of the swept param alone (no other param, no
  max / min inside), their difference small (`MAX_SPLIT_OPS`);
- the difference's numerator a polynomial in the param of degree at most
  `MAX_SPLIT_DEGREE`: its real roots in the declared range are the crossings, exactly,
  each confirmed by a sign change; no root in the range means one argument holds
  over the whole range;
- otherwise a numeric scan of the range (`SAMPLES` points) and a bisection of
  the one interval where the sign changes (ctdsl.roots: the scan's points, its
  brackets, the bisection, and the sign change that confirms an exact root);
  none, or more than one, and the max is left as it is.

Values are in the param's declared unit (the forms are in declared units).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ctdsl import roots

MAX_SPLIT_OPS = 60  # a larger difference of arguments is not split (a hostile spec: no solving, no scanning)
MAX_SPLIT_DEGREE = 2  # sympy's exact roots for a numerator of at most this degree
SAMPLES = 64  # points of the numeric scan
BISECT = 100  # halvings of the bracketing interval (far below a float's resolution)


@dataclass(frozen=True)
class Regime:
    head: str  # the max's LaTeX, as the form prints it
    args: tuple[str, str]  # LaTeX of its two arguments, as printed in it
    low: int  # the argument the max / min equals below the crossing (or over the whole range)
    cross: float | None  # the crossing in the param's declared unit; None: `low` holds over the whole range
    lo: float  # the declared range, in the declared unit
    hi: float


def regime(orig: sp.Expr, head: str, args: tuple[str, ...], x: sp.Symbol, lo: float | None, hi: float | None) -> Regime | None:
    """The split of one max / min (`orig`, its args in declared units) over x in [lo, hi], or None."""
    if len(orig.args) != 2 or len(args) != 2 or lo is None or hi is None or not lo < hi:
        return None
    a, b = orig.args
    if not all(t.free_symbols <= {x} and not t.has(sp.Max, sp.Min, sp.Piecewise) for t in (a, b)):
        return None
    if x not in (a.free_symbols | b.free_symbols):
        return None
    diff = a - b
    if sp.count_ops(diff) > MAX_SPLIT_OPS:
        return None
    roots = _exact_roots(diff, x, lo, hi)
    if roots is None:
        roots = _scanned_root(diff, x, lo, hi)
        if roots is None or not roots:  # the scan proves no absence of crossings: keep the max
            return None
    if len(roots) > 1:
        return None
    s = _sign(diff, x, (lo + roots[0]) / 2 if roots else (lo + hi) / 2)
    if not s:
        return None
    low = 0 if (s > 0) == isinstance(orig, sp.Max) else 1
    return Regime(head, (args[0], args[1]), low, roots[0] if roots else None, lo, hi)


def _exact_roots(diff: sp.Expr, x: sp.Symbol, lo: float, hi: float) -> list[float] | None:
    """The crossings in (lo, hi) of a difference whose numerator is a small polynomial; None if it is not one."""
    num, den = sp.fraction(sp.together(diff))
    try:
        poly = sp.Poly(num, x)
    except sp.PolynomialError:
        return None
    if poly.degree() < 1 or poly.degree() > MAX_SPLIT_DEGREE or not all(c.is_Number for c in poly.all_coeffs()):
        return None
    if den.has(x) and _poles(den, x, lo, hi):  # the difference may change sign at a pole too: not this path
        return None
    out = []
    for r in sp.roots(poly, filter="R"):
        v = float(r)
        if lo < v < hi and not _zero(den, x, v) and _changes_sign(diff, x, v, lo, hi):
            out.append(v)
    return sorted(out)


def _poles(den: sp.Expr, x: sp.Symbol, lo: float, hi: float) -> bool:
    """The denominator may vanish in [lo, hi]: it is no small polynomial, or one of its real roots is there."""
    try:
        poly = sp.Poly(den, x)
    except sp.PolynomialError:
        return True
    if poly.degree() > MAX_SPLIT_DEGREE or not all(c.is_Number for c in poly.all_coeffs()):
        return True
    return any(lo <= float(r) <= hi for r in sp.roots(poly, filter="R"))


class _Undefined(ArithmeticError):
    """The difference cannot be told positive or negative at a point of the bisection."""


def _scanned_root(diff: sp.Expr, x: sp.Symbol, lo: float, hi: float) -> list[float] | None:
    """The one crossing a scan of (lo, hi) brackets, bisected; [] for none seen, None for more than one."""
    pts = roots.grid(lo, hi, SAMPLES - 1, lo > 0 and hi / lo > 100)  # a range of decades: scanned evenly in log
    signs = [_sign(diff, x, p) for p in pts]
    if any(s is None for s in signs) or 0 in signs:
        return None
    changes = roots.sign_changes(pts, [float(s) for s in signs])
    if len(changes) != 1:
        return None if changes else []
    a, sa, b, _ = changes[0]

    def stays(m: float) -> bool:
        s = _sign(diff, x, m)
        if s is None:
            raise _Undefined
        return s == sa

    try:
        return [roots.bisect(a, b, stays, steps=BISECT)]
    except _Undefined:
        return None


def _sign(e: sp.Expr, x: sp.Symbol, v: float) -> int | None:
    try:
        f = float(e.xreplace({x: sp.Float(v, 30)}))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if not math.isfinite(f):
        return None
    return (f > 0) - (f < 0)


def _zero(den: sp.Expr, x: sp.Symbol, v: float) -> bool:
    return den.has(x) and _sign(den, x, v) in (0, None)


def _changes_sign(diff: sp.Expr, x: sp.Symbol, v: float, lo: float, hi: float) -> bool:
    """The difference has opposite signs just either side of v (a crossing, not a touch)."""
    h = min(v - lo, hi - v, abs(v) + 1) * 1e-6
    return roots.changes_sign(lambda t: _signed(diff, x, t), v - h, v + h)


def _signed(e: sp.Expr, x: sp.Symbol, v: float) -> float:
    """The sign of e at x = v as a float (nan where it has none)."""
    s = _sign(e, x, v)
    return math.nan if s is None else float(s)
