"""Sobol indices of each scheme's time (and cost) to target over the params that carry a distribution (SALib).

SALib (an optional extra: `pip install 'ctdsl[uncertainty]'`) draws Saltelli's
design for the params' own distributions (`problem_of`: uniform -> unif,
triangular -> triang with its peak as a fraction of the width, normal -> norm,
lognormal -> lognorm in ln space), seeded; the design goes through the compiled
forms, and `SALib.analyze.sobol` gives each param's first-order index S1 (the
share of the variance that param explains alone) and total index ST (alone and
with the others), each with its 95 % bootstrap half-width. The design takes
base x (params + 2) evaluations: the base is the largest power of two that
keeps that within the samples asked for, and at least `MIN_BASE`.

A table of samples has no SALib distribution: it is given to SALib as U(0, 1),
and each design value u becomes the table's empirical quantile Q(u), the
(floor(u k) + 1)-th smallest of its k values (`design_values`). Q(U) with U
uniform on (0, 1) takes each value with probability 1 / k, so the indices are
those of the empirical distribution the sampler draws from.

Cost to target gets indices too when every ranked scheme has one (the spec
prices something). A scheme whose figure is not finite at some design point,
or does not vary, gets no indices for it (it is left out).
"""

from __future__ import annotations

import math

import numpy as np

from ctdsl.numeric.chunked import evaluate
from ctdsl.numeric.forms import TIME
from ctdsl.results.uncertainty import SobolIndex

MIN_BASE = 64
CHUNK = 1 << 16


def available() -> bool:
    try:
        import SALib  # noqa: F401
    except ImportError:
        return False
    return True


def problem_of(params) -> dict:
    """The SALib problem of the params' distributions (params: model Params with a dist)."""
    dists, bounds = [], []
    for p in params:
        a = p.dist.args
        if p.dist.kind == "samples":  # mapped through its quantile function by design_values
            dists.append("unif"), bounds.append([0.0, 1.0])
        elif p.dist.kind == "uniform":
            dists.append("unif"), bounds.append([a[0], a[1]])
        elif p.dist.kind == "triangular":
            dists.append("triang"), bounds.append([a[0], a[2], (a[1] - a[0]) / (a[2] - a[0])])
        elif p.dist.kind == "normal":
            dists.append("norm"), bounds.append([a[0], a[1]])
        else:
            dists.append("lognorm"), bounds.append([math.log(a[0]), a[1]])
    return {"num_vars": len(params), "names": [p.name for p in params], "bounds": bounds, "dists": dists}


def design_values(p, column: np.ndarray) -> np.ndarray:
    """A column of SALib's design as the param's values: a table's empirical quantiles, the others as drawn."""
    if p.dist.kind != "samples":
        return column
    table = np.sort(np.asarray(p.dist.args, dtype=np.float64))
    k = len(table)
    return table[np.clip(np.floor(column * k).astype(np.int64), 0, k - 1)]


def base_for(samples: int, d: int) -> int:
    base = MIN_BASE
    while base * 2 * (d + 2) <= samples:
        base *= 2
    return base


def indices(problem: dict, f, samples: int, seed: int) -> tuple[dict, int]:
    """{output name: tuple[SobolIndex]} for f(X) -> {name: Y}, X the design (rows: points); and its size."""
    from SALib.analyze import sobol as analyze
    from SALib.sample import sobol as sample

    base = base_for(samples, problem["num_vars"])
    x = sample.sample(problem, base, calc_second_order=False, seed=seed)
    out = {}
    for name, y in f(x).items():
        y = np.asarray(y, dtype=float)
        if not np.isfinite(y).all() or np.ptp(y) == 0:
            continue
        # SALib seeds its bootstrap only for a seed that is true: 0 would leave it to numpy's global state
        r = analyze.analyze(problem, y, calc_second_order=False, seed=seed + 1, print_to_console=False)
        out[name] = tuple(
            SobolIndex(n, float(r["S1"][i]), float(r["S1_conf"][i]), float(r["ST"][i]), float(r["ST_conf"][i]))
            for i, n in enumerate(problem["names"])
        )
    return out, len(x)


def scheme_indices(sol, forms, money, samples: int, seed: int) -> tuple[dict, dict | None, int]:
    """Sobol indices of every scheme's time to target, and of its cost when priced, over the params drawn.

    `money`: the compiled cost forms (`ctdsl.numeric.uncertainty.MoneyForms`). Returns the time
    indices by scheme, the cost indices by scheme (None when not every scheme has a cost), and the
    design's size.
    """
    params = [p for p in sol.spec.params.values() if p.dist is not None and not p.given]
    ranked = [s for s, sf in forms.schemes.items() if sf.has_steps]
    priced = all((s, "cost") in money.keys for s in ranked)
    problem = problem_of(params)
    keys = [(s, TIME) for s in ranked] + ([(s, "cost") for s in ranked] if priced else [])

    def figures(x: np.ndarray) -> dict:
        out = {k: np.empty(len(x)) for k in keys}
        for a in range(0, len(x), CHUNK):
            b = min(a + CHUNK, len(x))
            values = {p.name: design_values(p, x[a:b, i]) for i, p in enumerate(params)}
            chunk = evaluate(forms, values).values
            costs = money.evaluate(values, b - a) if priced else {}
            for k in keys:
                out[k][a:b] = chunk[k] if k[1] == TIME else costs[k]
        return out

    found, used = indices(problem, figures, samples, seed)
    times = {s: found[(s, TIME)] for s in ranked if (s, TIME) in found}
    costs = {s: found[(s, "cost")] for s in ranked if (s, "cost") in found} if priced else None
    return times, costs, used


__all__ = ["available", "base_for", "design_values", "indices", "problem_of", "scheme_indices"]
