"""Break-even: where two schemes reach the target loss in the same time.

For schemes x and y and a param b (usually the WAN bandwidth), find every root
of T_x(b) = T_y(b) inside b's range, exactly.

Step times hold max() and min() (the slowest link of a route, the slowest stage
of a module, compute against sync when they overlap). Those are never handed to
`solve`: each max/min that depends on b is split into its regimes, one per
argument, with the condition that this argument is the largest (or smallest).
In each pair of regimes the equation is a rational function of b; its numerator
is a polynomial whose roots are found exactly. A root is kept only where its
regime's conditions hold at the other params' defaults, and only inside b's
range. max/min that do not depend on b are constants for the solve: they are
replaced by placeholders and put back in the answer, so each root is an exact
expression in the other params.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy as sp

from ctdsl.symbolic.convert import NumericError, value

MAX_REGIMES = 4096
_TOL = 1e-9


@dataclass
class Root:
    raw: sp.Expr  # exact, in the other params, as solved
    value: float
    regime: list[str]  # what binds on each side, in words
    below: str  # scheme that is faster just below the root
    above: str
    _tidied: sp.Expr | None = field(default=None, repr=False, compare=False)

    @property
    def expr(self) -> sp.Expr:
        """The root in a readable exact form (common factors cancelled), made when first asked for:
        the tables need only the value, and cancelling is the costly part of a break-even."""
        if self._tidied is None:
            self._tidied = _tidy(self.raw)
        return self._tidied


@dataclass
class Breakeven:
    x: str
    y: str
    over: str
    lo: float
    hi: float
    roots: list[Root] = field(default_factory=list)
    reason: str | None = None  # why there is no root in range
    outside: list[float] = field(default_factory=list)  # roots that fall outside the range
    faster_at_lo: str | None = None
    faster_at_hi: str | None = None

    @property
    def never(self) -> bool:
        return not self.roots


def _first_maxmin(expr: sp.Expr, b: sp.Symbol):
    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.Max, sp.Min)) and node.has(b):
            return node
    return None


def regimes(expr: sp.Expr, b: sp.Symbol, labels: dict[sp.Expr, str] | None = None):
    """Split expr into branches free of max/min in b: (branch, conditions, words).

    A condition (big, small) means big >= small must hold for the branch to bind.
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
        for sub, subconds, subwords in regimes(expr.xreplace({node: arg}), b, labels):
            out.append((sub, conds + subconds, words + subwords))
            if len(out) > MAX_REGIMES:
                raise ValueError("too many regimes")
    return out


def _freeze_constants(exprs: list[sp.Expr], b: sp.Symbol):
    """Replace b-free max/min/ceiling by placeholders; return (exprs, back-map)."""
    table: dict[sp.Expr, sp.Dummy] = {}

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


def _poly_roots(num: sp.Expr, b: sp.Symbol) -> tuple[list[sp.Expr], sp.Poly | None]:
    try:
        poly = sp.Poly(num, b)
    except sp.PolynomialError:
        return list(sp.solve(num, b)), None
    deg = poly.degree()
    if deg <= 0:
        return [], poly
    if deg == 1:
        c1, c0 = poly.all_coeffs()
        return [-c0 / c1], poly
    found = sp.roots(poly, b)
    return list(found), poly


def _laurent_roots(diff: sp.Expr, b: sp.Symbol, back, env) -> tuple[list[sp.Expr], int] | None:
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
    for term in sp.Add.make_args(sp.expand(diff)):
        c, k = term.as_coeff_exponent(b)
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
        except (NumericError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            return None
        if not math.isfinite(v) or v == 0 or abs(v) <= 1e-9 * _magnitude(c.xreplace(back), env):
            return None
    if m - k != 1:
        return None
    return [-low / high], 1


def _magnitude(c: sp.Expr, env) -> float:
    """The sum of the absolute values of c's terms: the scale against which c is 'zero'."""
    total = 0.0
    for t in sp.Add.make_args(c):
        try:
            total += abs(value(t, env))
        except (NumericError, TypeError, ValueError, ZeroDivisionError, OverflowError):
            return math.inf
    return total


def solve_breakeven(
    name_x: str,
    tx: sp.Expr,
    name_y: str,
    ty: sp.Expr,
    b: sp.Symbol,
    env: dict[sp.Symbol, float],
    lo: float,
    hi: float,
    labels: dict[sp.Expr, str] | None = None,
) -> Breakeven:
    """Every root of tx(b) = ty(b) in [lo, hi], with the other symbols at `env`."""
    result = Breakeven(name_x, name_y, str(b), lo, hi)
    labels = labels or {}
    candidates: list[tuple[sp.Expr, float, list[str]]] = []
    flat: list[tuple[list, bool]] = []  # each regime pair: its conditions, and whether b drops out
    for bx, cx, wx in regimes(tx, b, labels):
        for by, cy, wy in regimes(ty, b, labels):
            (fx, fy), back = _freeze_constants([bx, by], b)
            quick = _laurent_roots(fx - fy, b, back, env)
            if quick is not None:
                roots, degree = quick
            else:
                num, den = sp.fraction(sp.together(fx - fy))
                roots, poly = _poly_roots(sp.expand(num), b)
                degree = poly.degree() if poly is not None else None
            flat.append((cx + cy, degree is not None and degree <= 0))
            for r in roots:
                r_full = r.xreplace(back)
                try:
                    rv = value(r_full, env)
                except (NumericError, TypeError, ValueError, ZeroDivisionError):
                    continue
                if not math.isfinite(rv) or rv <= 0:
                    continue
                if not _holds(cx + cy, b, rv, env):
                    continue
                if not _unique(candidates, rv):
                    continue
                candidates.append((r_full, rv, wx + wy))
    candidates.sort(key=lambda c: c[1])
    inside = [c for c in candidates if lo * (1 - _TOL) <= c[1] <= hi * (1 + _TOL)]
    result.outside = [c[1] for c in candidates if c not in inside]
    diff = lambda v: value(tx, {**env, b: v}) - value(ty, {**env, b: v})  # noqa: E731
    winner = lambda d: name_x if d < 0 else (name_y if d > 0 else "neither")  # noqa: E731
    result.faster_at_lo = winner(diff(lo))
    result.faster_at_hi = winner(diff(hi))
    points = [lo] + [c[1] for c in inside] + [hi]
    for i, (expr, rv, words) in enumerate(inside):
        left = _mid(points[i], points[i + 1])
        right = _mid(points[i + 1], points[i + 2])
        result.roots.append(Root(expr, rv, _dedupe(words), winner(diff(left)), winner(diff(right))))
    if not result.roots:
        samples = [lo * (hi / lo) ** (i / 8) for i in range(9)] if lo > 0 else [lo + (hi - lo) * i / 8 for i in range(9)]
        active = [f for conds, f in flat for v in samples if _holds(conds, b, v, env)]
        slopes_equal = bool(active) and all(active)
        if slopes_equal:
            result.reason = (
                f"equal slopes: both times change with {b} in the same way, so "
                f"{result.faster_at_lo} stays faster at every {b}"
            )
        elif result.outside:
            shown = ", ".join(f"{v:.6g}" for v in result.outside)
            result.reason = f"the times tie only outside the range, at {b} = {shown}; {result.faster_at_lo} is faster throughout"
        else:
            result.reason = f"{result.faster_at_lo} is faster at every {b}: the times never tie"
    return result


def _mid(a: float, b: float) -> float:
    return math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2


def _holds(conds, b, bv: float, env) -> bool:
    full = {**env, b: bv}
    for big, small in conds:
        try:
            vb, vs = value(big, full), value(small, full)
        except (NumericError, ZeroDivisionError):
            return False
        if vb < vs - _TOL * max(abs(vb), abs(vs), 1e-300):
            return False
    return True


def _unique(cands, rv: float) -> bool:
    return all(abs(c[1] - rv) > 1e-9 * max(abs(rv), 1e-300) for c in cands)


def _dedupe(words: list[str]) -> list[str]:
    out: list[str] = []
    for w in words:
        if w not in out:
            out.append(w)
    return out


def _tidy(e: sp.Expr) -> sp.Expr:
    """A readable exact form: cancel common factors, keep it cheap."""
    if not e.free_symbols:
        return e
    try:
        return sp.cancel(e)
    except (sp.PolynomialError, TypeError, ValueError):  # pragma: no cover
        return e
