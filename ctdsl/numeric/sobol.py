"""Sobol indices of each scheme's time to target over the params that carry a distribution (SALib).

SALib (an optional extra: `pip install 'ctdsl[uncertainty]'`) draws Saltelli's
design for the params' own distributions (`problem_of`: uniform -> unif,
triangular -> triang with its peak as a fraction of the width, normal -> norm,
lognormal -> lognorm in ln space), seeded; the design goes through the compiled
forms, and `SALib.analyze.sobol` gives each param's first-order index S1 (the
share of the variance that param explains alone) and total index ST (alone and
with the others), each with its 95 % bootstrap half-width. The design takes
base x (params + 2) evaluations: the base is the largest power of two that
keeps that within the samples asked for, and at least `MIN_BASE`.

A scheme whose time is not finite at some design point, or does not vary, gets
no indices (it is left out).
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
        if p.dist.kind == "uniform":
            dists.append("unif"), bounds.append([a[0], a[1]])
        elif p.dist.kind == "triangular":
            dists.append("triang"), bounds.append([a[0], a[2], (a[1] - a[0]) / (a[2] - a[0])])
        elif p.dist.kind == "normal":
            dists.append("norm"), bounds.append([a[0], a[1]])
        else:
            dists.append("lognorm"), bounds.append([math.log(a[0]), a[1]])
    return {"num_vars": len(params), "names": [p.name for p in params], "bounds": bounds, "dists": dists}


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
        r = analyze.analyze(problem, y, calc_second_order=False, seed=seed, print_to_console=False)
        out[name] = tuple(
            SobolIndex(n, float(r["S1"][i]), float(r["S1_conf"][i]), float(r["ST"][i]), float(r["ST_conf"][i]))
            for i, n in enumerate(problem["names"])
        )
    return out, len(x)


def scheme_indices(sol, forms, samples: int, seed: int) -> tuple[dict, int]:
    """Sobol indices of every scheme's time to target over the params with a distribution."""
    params = [p for p in sol.spec.params.values() if p.dist is not None and not p.given]
    ranked = [s for s, sf in forms.schemes.items() if sf.has_steps]
    problem = problem_of(params)

    def times(x: np.ndarray) -> dict:
        out = {s: np.empty(len(x)) for s in ranked}
        for a in range(0, len(x), CHUNK):
            b = min(a + CHUNK, len(x))
            chunk = evaluate(forms, {p.name: x[a:b, i] for i, p in enumerate(params)})
            for s in ranked:
                out[s][a:b] = chunk.values[(s, TIME)]
        return out

    return indices(problem, times, samples, seed)


__all__ = ["available", "base_for", "indices", "problem_of", "scheme_indices"]
