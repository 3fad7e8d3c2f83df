"""Break-even: where two schemes reach the target loss in the same time.

For schemes x and y and a param b (usually the WAN bandwidth), find every root
of T_x(b) = T_y(b) inside b's range: exactly where sympy can, numerically where
it cannot, and every one checked.

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

Nothing is taken on trust. Every exact root must show a sign change of
T_x - T_y across a small bracket around it (or a tie there, where the times
touch without crossing). Where a regime's equation is not a polynomial in b (b
inside ceil or log2), has a degree above what radicals solve, is too large to
hand to sympy, or has roots sympy did not express or that do not evaluate, the
exact answer may be incomplete; then, and whenever no exact root lies in the
range, T_x - T_y is scanned over the range (log-spaced for a log param) and
each sign change that no exact root explains is narrowed by Brent's method to
a root marked `numeric`. So "never in range" is always what the scan saw.

What cannot be solved at all (more regimes than MAX_REGIMES, times that cannot
be evaluated at the ends of the range) raises `Unsolvable` with a diagnostic
code; `solve.py` turns it into a diagnostic at the break-even's statement.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import sympy as sp

from ctdsl.language.tolerances import REL
from ctdsl.roots import brent, changes_sign, grid, midpoint, sign_changes
from ctdsl.symbolic.convert import NumericError, real_function, value
from ctdsl.symbolic.regimes import EVAL_FAILURES, TooManyRegimes, exact_roots, freeze_constants, larger_than, regimes

MAX_REGIMES = 4096  # regime pairs of one break-even (each max/min in b multiplies them)
MAX_EXACT_PAIRS = 64  # regime pairs past which a break-even is solved numerically only (the scan and Brent)
SCAN_STEPS = 256  # intervals of the scan that finds the roots sympy may have missed
CONFIRM_STEPS = 64  # intervals of the scan that confirms a complete exact answer with no root in range
VERIFY_REL = 1e-6  # half-width, relative, of the bracket a root's sign change is checked across
MAX_TIDY_NODES = 400  # nodes of a root as solved past which it is not cancelled (cancel's cost grows faster than the size)


class Unsolvable(Exception):
    """A break-even that cannot be solved on a checked spec: a diagnostic code, a message, a hint."""

    def __init__(self, code: str, message: str, help: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.help = help


@dataclass
class Root:
    raw: sp.Expr  # exact, in the other params, as solved; a Float for a numeric root
    value: float
    regime: list[str]  # what binds on each side, in words
    below: str  # scheme that is faster just below the root
    above: str
    numeric: bool = False  # found by the scan and Brent's method: no exact form
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
    settled: str | None = None  # a hand-off break-even: where the paths' queues settle, when not the whole range

    @property
    def never(self) -> bool:
        return not self.roots


@dataclass
class _Pair:
    """One pair of regimes: its conditions, what binds in words, and whether b drops out of it."""

    conds: list
    words: list[str]
    flat: bool


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
    log: bool | None = None,
    show: Callable[[float], str] | None = None,
) -> Breakeven:
    """Every root of tx(b) = ty(b) in [lo, hi], with the other symbols at `env`.

    `log`: scan log-spaced (by default when lo > 0 and the range spans more than
    a factor of 10); `show` formats a value of b for messages. Raises Unsolvable.
    """
    show = show or (lambda v: f"{v:.6g}")
    log = (lo > 0 and hi > 10 * lo) if log is None else log
    result = Breakeven(name_x, name_y, str(b), lo, hi)
    pairs, candidates, complete = _candidates(name_x, tx, name_y, ty, b, env, labels or {})
    candidates.sort(key=lambda c: c[1])
    inside = [c for c in candidates if lo * (1 - REL) <= c[1] <= hi * (1 + REL)]
    result.outside = [c[1] for c in candidates if c not in inside]
    ftx, fty = real_function(tx, b, env), real_function(ty, b, env)

    def diff(v: float) -> float:
        return ftx(v) - fty(v)

    d_lo, d_hi = diff(lo), diff(hi)
    for end, v, d in (("low", lo, d_lo), ("high", hi, d_hi)):
        if math.isnan(d):
            raise Unsolvable(
                "CT702",
                f"break-even {name_x} vs {name_y}: the times to target cannot be evaluated at the {end} end "
                f"of {b}'s range, {b} = {show(v)} (they overflow or divide by zero)",
                f"narrow the range of {b} to values the times can be computed at",
            )
    verified = [c for c in inside if _verified(ftx, fty, c[1])]
    complete = complete and len(verified) == len(inside)
    found = [(expr, rv, words, False) for expr, rv, words in verified]
    if not verified or not complete:
        steps = CONFIRM_STEPS if complete else SCAN_STEPS
        for rv in _scan(diff, lo, hi, steps, log, [c[1] for c in verified], (d_lo, d_hi)):
            words = next((p.words for p in pairs if _holds(p.conds, b, rv, env)), [])
            found.append((sp.Float(rv, 17), rv, words, True))
        found.sort(key=lambda c: c[1])
    winner = lambda d: name_x if d < 0 else (name_y if d > 0 else "neither")  # noqa: E731
    result.faster_at_lo = winner(d_lo)
    result.faster_at_hi = winner(d_hi)
    points = [lo] + [c[1] for c in found] + [hi]
    for i, (expr, rv, words, numeric) in enumerate(found):
        left = _mid(points[i], points[i + 1])
        right = _mid(points[i + 1], points[i + 2])
        result.roots.append(Root(expr, rv, _dedupe(words), winner(diff(left)), winner(diff(right)), numeric))
    if not result.roots:
        result.reason = _never_reason(result, pairs, b, env)
    return result


def _candidates(name_x, tx, name_y, ty, b, env, labels):
    """Every regime pair, and the exact roots that hold in their regime: (pairs, candidates, complete).

    A candidate is (exact root, its value, what binds). `complete` is False when
    some pair's roots may be missing (see `regimes.exact_roots`), or a root could not be
    evaluated (a real root written with complex radicals, say).
    """
    try:
        rx = regimes(tx, b, labels, MAX_REGIMES)
        ry = regimes(ty, b, labels, MAX_REGIMES)
        if len(rx) * len(ry) > MAX_REGIMES:
            raise TooManyRegimes
    except TooManyRegimes:
        raise Unsolvable(
            "CT701",
            f"break-even {name_x} vs {name_y} over {b}: the times to target split into more than "
            f"{MAX_REGIMES} regimes (one per choice of what binds in each max or min that depends on {b})",
            f"each max or min whose terms depend on {b} multiplies the regimes: let fewer links, stages or "
            f"overlaps depend on {b}, or ask for the break-even over another param",
        ) from None
    candidates: list[tuple[sp.Expr, float, list[str]]] = []
    pairs: list[_Pair] = []
    # each pair's exact roots cost tens of milliseconds where b enters non-linearly: past
    # MAX_EXACT_PAIRS (784 pairs took 16 CPU-seconds, examples/20_sites.ct with replicas = n_sites,
    # found by the fuzz campaign; the most a shipped spec has is 49) the scan finds the roots
    exact = len(rx) * len(ry) <= MAX_EXACT_PAIRS
    complete = exact
    if exact:  # every branch frozen once, one placeholder per constant max across all of them
        table: dict = {}
        frozen_x, _ = freeze_constants([r[0] for r in rx], b, table)
        frozen_y, back = freeze_constants([r[0] for r in ry], b, table)
    for i, (bx, cx, wx) in enumerate(rx):
        for j, (by, cy, wy) in enumerate(ry):
            if not exact:
                pairs.append(_Pair(cx + cy, wx + wy, False))
                continue
            fx, fy = frozen_x[i], frozen_y[j]
            roots, degree, whole = exact_roots(fx - fy, b, back, env, parts=(fx, fy))
            complete = complete and whole
            pairs.append(_Pair(cx + cy, wx + wy, degree is not None and degree <= 0))
            for r in roots:
                r_full = r.xreplace(back)
                try:
                    rv = value(r_full, env)
                except EVAL_FAILURES:
                    complete = False
                    continue
                if not math.isfinite(rv) or rv <= 0:
                    continue
                if not _holds(cx + cy, b, rv, env):
                    continue
                if not _unique(candidates, rv):
                    continue
                candidates.append((r_full, rv, wx + wy))
    return pairs, candidates, complete


def _verified(ftx, fty, rv: float) -> bool:
    """T_x - T_y changes sign across [rv (1 - VERIFY_REL), rv (1 + VERIFY_REL)], or the times tie at rv."""
    if changes_sign(lambda v: ftx(v) - fty(v), rv * (1 - VERIFY_REL), rv * (1 + VERIFY_REL)):
        return True
    x, y = ftx(rv), fty(rv)
    return abs(x - y) <= REL * (abs(x) + abs(y))


def _scan(diff, lo: float, hi: float, steps: int, log: bool, exact: list[float], ends: tuple[float, float]) -> list[float]:
    """Roots of diff in [lo, hi] that no value in `exact` explains, from the sign changes of a scan."""
    xs = grid(lo, hi, steps, log)
    for r in exact:
        xs += [v for v in (r * (1 - VERIFY_REL), r * (1 + VERIFY_REL)) if lo < v < hi]
    xs = sorted(set(xs))
    ys = [ends[0] if x == lo else ends[1] if x == hi else diff(x) for x in xs]
    out = []
    for a, fa, c, fc in sign_changes(xs, ys):
        if any(a <= r <= c for r in exact):
            continue
        root, _low, _high = brent(diff, a, c, fa, fc)
        out.append(root)
    return out


def _never_reason(result: Breakeven, pairs: list[_Pair], b, env) -> str:
    lo, hi = result.lo, result.hi
    samples = [lo * (hi / lo) ** (i / 8) for i in range(9)] if lo > 0 else [lo + (hi - lo) * i / 8 for i in range(9)]
    active = [p.flat for p in pairs for v in samples if _holds(p.conds, b, v, env)]
    if active and all(active):
        return (
            f"equal slopes: both times change with {b} in the same way, so "
            f"{result.faster_at_lo} stays faster at every {b}"
        )
    if result.outside:
        shown = ", ".join(f"{v:.6g}" for v in result.outside)
        return f"the times tie only outside the range, at {b} = {shown}; {result.faster_at_lo} is faster throughout"
    return f"{result.faster_at_lo} is faster at every {b}: the times never tie"


def _mid(a: float, b: float) -> float:
    return midpoint(a, b, a > 0 and b > 0)


def _holds(conds, b, bv: float, env) -> bool:
    full = {**env, b: bv}
    for big, small in conds:
        try:
            vb, vs = value(big, full), value(small, full)
        except (NumericError, ZeroDivisionError):
            return False
        if vb < vs - REL * max(abs(vb), abs(vs), 1e-300):
            return False
    return True


def _unique(cands, rv: float) -> bool:
    return all(abs(c[1] - rv) > REL * max(abs(rv), 1e-300) for c in cands)


def _dedupe(words: list[str]) -> list[str]:
    out: list[str] = []
    for w in words:
        if w not in out:
            out.append(w)
    return out


def _tidy(e: sp.Expr) -> sp.Expr:
    """A readable exact form: cancel common factors, keep it cheap. A form past MAX_TIDY_NODES
    nodes is kept as it is: cancel took 0.71 CPU-seconds for a root of 513 nodes (a ZeRO-3
    variant of examples/20_codesign_study.ct, found by the fuzz campaign), 0.14 for the largest
    a shipped spec has (276 nodes, in that example). A quadratic's root (a square root in it) is
    kept as solved too: cancel takes the radical for a new variable and multiplies it out (that
    root of 276 nodes came back with 837)."""
    if not e.free_symbols or larger_than(e, MAX_TIDY_NODES) or _has_radical(e) or _has_high_power(e):
        return e
    try:
        return sp.cancel(e)
    except (sp.PolynomialError, TypeError, ValueError):  # pragma: no cover
        return e


def _has_radical(e: sp.Expr) -> bool:
    return any(p.exp.is_Rational and not p.exp.is_Integer for p in e.atoms(sp.Pow))


HIGH_POWER = 8  # a power past which a root is kept as solved (below)


def _has_high_power(e: sp.Expr) -> bool:
    """A burst's waits hold (1 - rho^n) / (1 - rho) with n its jobs (queueing.py, 706 on the flagship):
    cancel divides it out into the n terms 1 + rho + ... + rho^(n - 1)."""
    return any(p.exp.is_Integer and abs(int(p.exp)) > HIGH_POWER for p in e.atoms(sp.Pow))
