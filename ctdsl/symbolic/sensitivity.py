"""Partial derivatives and elasticities of every answer with respect to every param.

For each scheme's step time, time to target and energy to target, and for each
break-even root, `sensitivity(solution)` gives dy/dx and the elasticity
d ln y / d ln x = (x / y) dy/dx for every param x, exact from the symbolic
forms (sympy's diff) and evaluated at the params' values.

Step times hold max() and min() (the slowest link, the slowest module stage,
compute against sync). A max is differentiable except where its two largest
arguments tie, so each max/min is first replaced by its argument that binds at
the point (`Active`), and that branch is differentiated: the derivative one
would see moving a param a little. Where the two largest arguments are within
`KINK` of each other and their derivatives differ, the point is a kink: the
answer names it, with the derivative on each branch. ceil() and floor() are
steps: their derivative is 0 (a jump at the point is named as a kink too).

A break-even b* is a root of F(b, x) = T_x(b, x) - T_y(b, x) = 0, found exactly
or numerically. Either way the implicit function theorem gives its partials:
db*/dx = -(dF/dx) / (dF/db) at the root, each derivative exact (the active
branches at the root). The param solved for is not an input of b*; it has no
partial. A break-even that is never in range has no derivative, and where the
times touch without crossing (dF/db = 0) none is defined: both are stated.

Nothing here runs unless asked (`ctdsl solve --sensitivity`): plain `solve`
never imports this module.
"""

from __future__ import annotations

import math

import sympy as sp

from ctdsl import units as U
from ctdsl.language.tolerances import KINK, close
from ctdsl.results.quantity import Quantity
from ctdsl.results.sensitivity import Partial, QuantitySensitivity, Sensitivity
from ctdsl.results.solution import Solution
from ctdsl.symbolic.convert import Env, NumericError, value

_FAILS = (NumericError, ArithmeticError, ValueError, TypeError)
NAN = float("nan")


def num(e: sp.Expr, env) -> float:
    """The value of e at env; nan where it cannot be evaluated."""
    try:
        v = value(e, env)
    except _FAILS:
        return NAN
    return float(v) + 0.0  # -0.0 shows as 0


class Active:
    """An expression with each max/min replaced by the argument that binds at `env`, and each
    ceil/floor by its value there; `ties` collects the max/min whose two leading arguments tie."""

    def __init__(self, env):
        self.env = env
        self.memo: dict[sp.Basic, sp.Basic] = {}
        self.ties: list[tuple[str, sp.Expr, sp.Expr]] = []  # (max | min, active branch, the other)
        self.steps: list[str] = []  # ceil/floor that jump at the point

    def __call__(self, e):
        if not isinstance(e, sp.Basic) or not e.args:
            return e
        hit = self.memo.get(e)
        if hit is not None:
            return hit
        if isinstance(e, (sp.Max, sp.Min)):
            r = self._pick(e)
        elif isinstance(e, (sp.ceiling, sp.floor)):
            r = self._step(e)
        else:
            args = [self(a) for a in e.args]
            r = e if all(a is b for a, b in zip(args, e.args)) else e.func(*args)
        self.memo[e] = r
        return r

    def _pick(self, e) -> sp.Expr:
        largest = isinstance(e, sp.Max)
        vals = [num(a, self.env) for a in e.args]
        order = sorted(range(len(vals)), key=lambda i: (math.isnan(vals[i]), -vals[i] if largest else vals[i], i))
        first = self(e.args[order[0]])
        if len(order) > 1 and close(vals[order[0]], vals[order[1]], KINK):
            self.ties.append(("max" if largest else "min", first, self(e.args[order[1]])))
        return first

    def _step(self, e) -> sp.Expr:
        v = num(e, self.env)
        if not math.isfinite(v):
            return e
        arg = num(e.args[0], self.env)
        if e.args[0].free_symbols and math.isfinite(arg) and abs(arg - round(arg)) <= KINK * max(1.0, abs(arg)):
            name = "ceil" if isinstance(e, sp.ceiling) else "floor"
            self.steps.append(f"{name} of a whole number here: it jumps at the point (its derivative is 0 on either side)")
        return sp.Integer(int(v))


def _kinks(act: Active, symbols, env) -> tuple[str, ...]:
    """The ties whose branches have different derivatives, in words, and the steps that jump."""
    out = []
    for kind, a, b in act.ties:
        differ = []
        for info in symbols.info.values():
            s = info.symbol
            da, db = num(sp.diff(a, s), env), num(sp.diff(b, s), env)
            if not close(da, db, KINK):
                differ.append(f"{info.param.name}: {da:.4g} on the active branch, {db:.4g} on the other")
        if differ:
            side = "largest" if kind == "max" else "smallest"
            out.append(f"a {kind} whose two {side} terms tie within {KINK:g} here (d/d " + "; d/d ".join(differ) + ")")
    return tuple(dict.fromkeys(out + act.steps))


def _order(partials: list[Partial]) -> tuple[Partial, ...]:
    """Largest |elasticity| first; nan last; ties in the spec's order."""
    keyed = [(math.isnan(p.elasticity.value), -abs(p.elasticity.value) if not math.isnan(p.elasticity.value) else 0, i, p)
             for i, p in enumerate(partials)]  # fmt: skip
    return tuple(k[-1] for k in sorted(keyed, key=lambda k: k[:3]))


def elasticity(x: float, dydx: float, y: float) -> float:
    """(x / y) dy/dx; 0 at x = 0 (a finite slope), nan where y is 0 or a factor is not finite."""
    if not (math.isfinite(x) and math.isfinite(dydx) and math.isfinite(y)) or y == 0:
        return NAN
    return x * dydx / y + 0.0


def _partial(p, derivative: Quantity, elasticity: Quantity, y_dim) -> Partial:
    unit = p.unit if p.unit and not p.dim.dimensionless else None
    return Partial(p.name, derivative, elasticity, unit, float(p.unit_scale) if unit else 1.0, y_dim)


def explicit(name: str, kind: str, what: str, q: Quantity, symbols, env) -> QuantitySensitivity:
    """The partials of a quantity whose exact form is given: diff of its active branch."""
    act = Active(env)
    y_expr = act(q.expr)
    y = num(y_expr, env)
    partials = []
    for info in symbols.info.values():
        s = info.symbol
        d = sp.diff(y_expr, s)
        dv = num(d, env)
        el = elasticity(env[s], dv, y)
        partials.append(_partial(info.param, Quantity(d, dv, q.dim / info.param.dim), Quantity(s * d / y_expr, el, U.ONE), q.dim))
    return QuantitySensitivity(name, kind, what, q, _order(partials), _kinks(act, symbols, env))


def implicit(name: str, b, root, tx: sp.Expr, ty: sp.Expr, symbols, env) -> QuantitySensitivity:
    """The partials of one break-even root: db*/dx = -(dF/dx) / (dF/db), F = T_x - T_y, at the root."""
    bs = symbols[b.over]
    at = Env({**env, bs: root.value})
    act = Active(at)
    f = act(tx) - act(ty)
    dfdb = sp.diff(f, bs)
    dfdb_v = num(dfdb, at)
    what = f"break-even of {b.x} vs {b.y} over {b.over}"
    note = f"implicit: d {b.over}*/dx = -(dF/dx) / (dF/d {b.over}), F = T_{b.x} - T_{b.y}, at the root"
    if not math.isfinite(dfdb_v) or dfdb_v == 0:
        note = f"the times touch without crossing here (dF/d{b.over} = 0): no derivative"
    partials = []
    for info in symbols.info.values():
        if info.param.name == b.over:
            continue
        s = info.symbol
        dfdx = sp.diff(f, s)
        dv = -num(dfdx, at) / dfdb_v if dfdb_v and math.isfinite(dfdb_v) else NAN
        d = (-dfdx / dfdb).xreplace({bs: root.raw})
        el = elasticity(env[s], dv, root.value)
        partials.append(_partial(info.param, Quantity(d, dv, b.dim / info.param.dim), Quantity(s * d / root.raw, el, U.ONE), b.dim))
    return QuantitySensitivity(name, "breakeven", what, Quantity(root.raw, root.value, b.dim), _order(partials), _kinks(act, symbols, at), note)


def breakeven_name(b, k: int) -> str:
    """`breakeven.X.Y.OVER`, and `...#k` for the k-th root (k >= 2)."""
    return f"breakeven.{b.x}.{b.y}.{b.over}" + (f"#{k + 1}" if k else "")


SCHEME_QUANTITIES = (("step_time", "step time"), ("time_to_target", "time to target"), ("energy_to_target", "energy to target"))


def sensitivity(sol: Solution) -> Sensitivity:
    """The partials of every scheme's step time, time and energy to target, and of every break-even root."""
    symbols = sol.symbols
    env = Env(symbols.defaults())
    out = []
    for r in sol.schemes.values():
        for attr, words in SCHEME_QUANTITIES:
            q = getattr(r, attr)
            if q is not None:
                out.append(explicit(f"{r.name}.{attr}", attr, f"{words} of {r.name}", q, symbols, env))
    for b in sol.breakevens:
        what = f"break-even of {b.x} vs {b.y} over {b.over}"
        if b.result is None or not b.roots:
            why = b.missing if b.result is None else f"never in range: {b.result.reason}"
            out.append(QuantitySensitivity(breakeven_name(b, 0), "breakeven", what, None, (), (), f"{why}; no derivative"))
            continue
        tx, ty = sol.schemes[b.x].time_to_target.expr, sol.schemes[b.y].time_to_target.expr
        for k, root in enumerate(b.roots):
            out.append(implicit(breakeven_name(b, k), b, root, tx, ty, symbols, env))
    return Sensitivity(tuple(symbols.info), tuple(out), KINK)
