"""Uncertainty: draw the params that carry a distribution and push the draws through the compiled forms.

`uncertainty(solution, samples, seed)` draws every param with a `~`
distribution (`ctdsl.model.entities.Distribution`), `samples` values each, from
one `numpy.random.Generator` (PCG64) seeded with `seed`, param after param in
the spec's order: the same spec, samples and seed give the same draws, and so
byte-identical output. A table of samples (`samples([...])`) is resampled
uniformly with replacement: each draw picks one of its values, each with
probability 1 / (number of values), by `Generator.integers`. The other params stay at their values. The draws go
through `CompiledForms` (one lambdified function of every scheme's forms) a
chunk at a time, as sweeps do (`ctdsl.numeric.chunked`), plus a second
function of the same arguments for cost and CO2e to target, which sweeps do not
compute. Per scheme: the distribution of time, energy and (when the spec prices
something) cost to target, as mean, sd and the 5 / 50 / 95 % quantiles over the
finite values; the probability that the scheme is first to the target (the
chunk's winner: smallest time, ties to the first in the spec) and, when the
spec prices something, that it is the cheapest (smallest cost, the same rule).

A break-even over param b is a root of g(b) = Q_x(b) - Q_y(b) for each draw of
the other params. Solving it again symbolically per draw would take minutes, so
g is evaluated on a grid of `BREAKEVEN_GRID` points over b's range (log-spaced
when the solver searches it on a log scale) for every draw at once, the first
sign change (or exact zero) is taken, and its bracket is halved `BISECTIONS`
times, for all draws together (the rule of `ctdsl.roots.bisect`, vectorised). A
draw without a sign change on the grid is "never in range"; two roots closer
than a grid step can be missed, as by the solver's own scan. A draw that is
never in range is split by the sign of g over the range: x lower throughout
(faster, cheaper, ...) or y lower throughout. Break-evens use the first
`BREAKEVEN_SAMPLES` draws (at most), which the result says.

Global sensitivity (Sobol first-order and total indices on each scheme's time
and cost to target, over the params drawn) is in `ctdsl.numeric.sobol`, with
SALib; so is the design of each break-even's indices, whose roots are found
here as above, on a design of at most `BREAKEVEN_SAMPLES` points. A break-even
never in range at some point of its design has no indices (a variance of
roots that do not exist is not defined), and says so.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ctdsl import units as U
from ctdsl.numeric.chunked import _winner  # the sweep's rule: first smallest time, nan never wins
from ctdsl.numeric.forms import ENERGY, TIME, CompiledForms, _ceil_numpy, _tolerant
from ctdsl.numeric.sobol import design_values, indices, problem_of, scheme_indices
from ctdsl.results.solution import Solution
from ctdsl.results.uncertainty import BreakevenSobol, BreakevenSpread, SchemeSpread, Summary, Uncertainty

DEFAULT_SAMPLES = 10_000
MAX_UNCERTAINTY_SAMPLES = 2_000_000  # draws of one run (each scheme keeps its time, energy and cost per draw: 24 B each)
CHUNK = 1 << 14  # draws evaluated together (their temporaries stay in cache)
BREAKEVEN_SAMPLES = 5_000  # draws a break-even is found on, at most
BREAKEVEN_GRID = 32  # points of b's range scanned for a sign change
BISECTIONS = 40  # halvings of a bracket: 2^-40 of a grid step
QUANTILES = (0.05, 0.5, 0.95)


def draw(dist, n: int, rng: np.random.Generator) -> np.ndarray:
    """n values of one distribution, base units."""
    a = dist.args
    if dist.kind == "uniform":
        return rng.uniform(a[0], a[1], n)
    if dist.kind == "triangular":
        return rng.triangular(a[0], a[1], a[2], n)
    if dist.kind == "normal":
        return rng.normal(a[0], a[1], n)
    if dist.kind == "lognormal":
        return rng.lognormal(math.log(a[0]), a[1], n)
    if dist.kind == "samples":  # the empirical distribution: each value with probability 1 / len, with replacement
        return np.asarray(a, dtype=np.float64)[rng.integers(0, len(a), n)]
    raise ValueError(f"unknown distribution {dist.kind}")


def draws(spec, n: int, seed: int) -> dict[str, np.ndarray]:
    """Every param with a distribution, n draws each, in spec order, from one generator.

    A param given with `--set` is fixed at that value: it is not drawn.
    """
    rng = np.random.default_rng(seed)
    return {p.name: draw(p.dist, n, rng) for p in spec.params.values() if p.dist is not None and not p.given}


class MoneyForms:
    """Cost and CO2e to target of every scheme that has them, compiled like `CompiledForms`."""

    def __init__(self, sol, forms: CompiledForms):
        self.keys, exprs = [], []
        for name, r in sol.schemes.items():
            for q, attr in (("cost", "cost_to_target"), ("co2e", "co2e_to_target")):
                if getattr(r, attr, None) is not None:
                    self.keys.append((name, q))
                    exprs.append(_tolerant(getattr(r, attr).expr))
        self.names = forms.names
        self.defaults = forms.defaults
        fn = sp.lambdify(forms.args, exprs, modules=[{"_ceil_tol": _ceil_numpy}, "numpy"], cse=True, dummify=True) if exprs else None
        self._fn = fn

    def evaluate(self, values: dict, n: int) -> dict:
        if self._fn is None:
            return {}
        args = [values.get(k, self.defaults[k]) for k in self.names]
        with np.errstate(all="ignore"):
            outs = self._fn(*args)
        return {k: np.broadcast_to(np.asarray(o, dtype=np.float64), (n,)) for k, o in zip(self.keys, outs)}


def values_at(forms: CompiledForms, money: MoneyForms, params: dict[str, np.ndarray]) -> dict:
    """Every form and money form at the points (params: 1-D arrays of one length), as 1-D arrays."""
    n = len(next(iter(params.values())))
    out = {k: np.broadcast_to(a, (n,)) for k, a in forms.evaluate_raw(params).items()}
    out.update(money.evaluate(params, n))
    return out


def summary(a: np.ndarray, dim: U.Dim) -> Summary:
    finite = np.isfinite(a)
    f = a if finite.all() else a[finite]
    if not len(f):
        return Summary(dim, math.nan, math.nan, math.nan, math.nan, math.nan, 0)
    q = np.quantile(f, QUANTILES)
    return Summary(dim, float(f.mean()), float(f.std(ddof=1)) if len(f) > 1 else 0.0, float(q[0]), float(q[1]), float(q[2]), int(len(f)))


def _scheme_spreads(sol, forms, money, drawn: dict, n: int) -> tuple[SchemeSpread, ...]:
    ranked = [s for s, sf in forms.schemes.items() if sf.has_steps]
    cols = {(s, q): np.empty(n) for s in ranked for q in (TIME, ENERGY)}
    cols.update({(s, "cost"): np.empty(n) for s in ranked if (s, "cost") in money.keys})
    priced = all((s, "cost") in cols for s in ranked)
    wins = np.zeros(len(ranked) + 1, dtype=np.int64)
    cheap = np.zeros(len(ranked) + 1, dtype=np.int64)
    for a in range(0, n, CHUNK):
        b = min(a + CHUNK, n)
        vals = values_at(forms, money, {k: v[a:b] for k, v in drawn.items()})
        for key, col in cols.items():
            col[a:b] = vals[key]
        winner = np.broadcast_to(_winner([vals[(s, TIME)] for s in ranked]), (b - a,))
        wins += np.bincount(winner + 1, minlength=len(ranked) + 1)
        if priced:
            cheapest = np.broadcast_to(_winner([vals[(s, "cost")] for s in ranked]), (b - a,))
            cheap += np.bincount(cheapest + 1, minlength=len(ranked) + 1)
    out = []
    for i, s in enumerate(ranked):
        cost = summary(cols[(s, "cost")], U.MONEY) if (s, "cost") in cols else None
        out.append(
            SchemeSpread(
                s, summary(cols[(s, TIME)], U.TIME), summary(cols[(s, ENERGY)], U.ENERGY), cost, float(wins[i + 1] / n),
                float(cheap[i + 1] / n) if priced else None,
            )
        )
    return tuple(out)


_ON = {"time": TIME, "energy": ENERGY, "cost": "cost", "co2e": "co2e"}


def search_range(p) -> tuple[float, float, bool]:
    """b's range as the solver searches it (`symbolic.solve.breakeven`)."""
    lo, hi = (p.lo, p.hi) if p.lo is not None else (p.default * 1e-6, p.default * 1e6)
    return float(lo), float(hi), p.spacing == "log" or p.lo is None


def breakeven_roots(forms, money, b, p, drawn: dict, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest root of Q_x - Q_y over p's range for each of the first m draws (nan: none), and a side.

    The side of a draw without a root is the sign of Q_x - Q_y over the range: -1 where x is lower
    throughout, +1 where y is; 0 for a draw with a root, or whose difference is not finite.
    """
    lo, hi, log = search_range(p)
    grid = np.geomspace(lo, hi, BREAKEVEN_GRID) if log else np.linspace(lo, hi, BREAKEVEN_GRID)
    qx, qy = (b.x, _ON[b.on]), (b.y, _ON[b.on])

    def gap(sub: dict, x: np.ndarray) -> np.ndarray:
        vals = values_at(forms, money, {**sub, p.name: x})
        return vals[qx] - vals[qy]

    roots = np.full(m, np.nan)
    sides = np.zeros(m, dtype=np.int8)
    rows = max(1, (1 << 16) // BREAKEVEN_GRID)
    for a in range(0, m, rows):
        e = min(a + rows, m)
        k = e - a
        sub = {n: v[a:e] for n, v in drawn.items() if n != p.name}
        g = gap({n: np.repeat(v, BREAKEVEN_GRID) for n, v in sub.items()}, np.tile(grid, k)).reshape(k, BREAKEVEN_GRID)
        s = np.sign(g)
        hit = np.concatenate([(s[:, :-1] == 0) | (s[:, :-1] * s[:, 1:] < 0), s[:, -1:] == 0], axis=1)
        has = hit.any(axis=1)
        j = np.argmax(hit, axis=1)
        exact = has & (s[np.arange(k), j] == 0)
        out = np.where(exact, grid[j], np.nan)
        todo = np.flatnonzero(has & ~exact)
        if len(todo):
            picked = {n: v[todo] for n, v in sub.items()}
            out[todo] = _bisect(lambda x: gap(picked, x), grid[j[todo]], grid[j[todo] + 1], s[todo, j[todo]], log)
        roots[a:e] = out
        side = np.where(np.isfinite(g).all(axis=1), s[:, 0], 0).astype(np.int8)
        sides[a:e] = np.where(has, 0, side)
    return roots, sides


def _bisect(g, lo: np.ndarray, hi: np.ndarray, sign_lo: np.ndarray, log: bool) -> np.ndarray:
    """Halve every bracket [lo, hi] (g has sign `sign_lo` at lo) BISECTIONS times, all at once."""
    for _ in range(BISECTIONS):
        mid = np.sqrt(lo * hi) if log else (lo + hi) / 2
        same = np.sign(g(mid)) == sign_lo
        lo, hi = np.where(same, mid, lo), np.where(same, hi, mid)
    return np.sqrt(lo * hi) if log else (lo + hi) / 2


def _breakeven_spreads(sol, forms, money, drawn: dict, n: int) -> tuple[BreakevenSpread, ...]:
    out = []
    m = min(n, BREAKEVEN_SAMPLES)
    for b in sol.breakevens:
        if b.result is None or (b.x, _ON[b.on]) not in _keys(forms, money):
            continue
        p = sol.spec.params[b.over]
        roots, sides = breakeven_roots(forms, money, b, p, drawn, m)
        never = float(np.mean(~np.isfinite(roots)))
        lower = (float(np.mean(sides < 0)), float(np.mean(sides > 0)))
        out.append(BreakevenSpread(b.x, b.y, b.over, b.on, summary(roots, b.dim), never, m, *lower))
    return tuple(out)


def _breakeven_sobol(sol, forms, money, samples: int, seed: int) -> tuple[BreakevenSobol, ...]:
    """Sobol indices of every break-even's lowest root over the params drawn, its own param aside."""
    out = []
    for b in sol.breakevens:
        if b.result is None or (b.x, _ON[b.on]) not in _keys(forms, money):
            continue
        params = [p for p in sol.spec.params.values() if p.dist is not None and not p.given and p.name != b.over]
        if not params:
            continue
        over = sol.spec.params[b.over]

        def roots(x: np.ndarray) -> dict:
            values = {p.name: design_values(p, x[:, i]) for i, p in enumerate(params)}
            return {"root": breakeven_roots(forms, money, b, over, values, len(x))[0]}

        found, used = indices(problem_of(params), roots, min(samples, BREAKEVEN_SAMPLES), seed)
        note = None if "root" in found else "never in range at some points of the design, or no spread"
        out.append(BreakevenSobol(b.x, b.y, b.over, b.on, found.get("root"), used, note))
    return tuple(out)


def _keys(forms, money) -> set:
    return set(forms.keys) | {k for k, _, _ in forms.scaled} | set(money.keys)


def uncertainty(sol: Solution, samples: int = DEFAULT_SAMPLES, seed: int = 0, sobol: bool = False, forms: CompiledForms | None = None) -> Uncertainty:
    """The distributions of every scheme's figures and break-evens over the params' draws."""
    if not 1 < samples <= MAX_UNCERTAINTY_SAMPLES:
        raise ValueError(f"samples must be 2 .. {MAX_UNCERTAINTY_SAMPLES:,}, not {samples}")
    forms = forms if forms is not None else CompiledForms(sol)
    money = MoneyForms(sol, forms)
    drawn = draws(sol.spec, samples, seed)
    schemes = _scheme_spreads(sol, forms, money, drawn, samples)
    breaks = _breakeven_spreads(sol, forms, money, drawn, samples)
    times, costs, used, roots = None, None, 0, ()
    if sobol and drawn:
        times, costs, used = scheme_indices(sol, forms, money, samples, seed)
        roots = _breakeven_sobol(sol, forms, money, samples, seed)
    return Uncertainty(samples, seed, tuple(drawn), schemes, breaks, times, used, costs, roots)


__all__ = ["DEFAULT_SAMPLES", "MoneyForms", "breakeven_roots", "draw", "draws", "summary", "uncertainty", "values_at"]
