"""Stragglers: the expected wait for the slowest worker (domain.md section 7).

A dc with `jitter = s` gives each of its workers, every step, a compute time
b + s X, where b is the deterministic compute time and X a fresh draw:
X ~ Exp(1) (`jitter_kind = exponential`, the default), U(0, 1) (`uniform`) or
LogNormal(0, sigma^2) (`lognormal`, with `jitter_sigma`). Draws are independent
across workers and steps.

Synchronous training waits at each sync for the slowest worker. With a sync
every H steps, worker i reaches the barrier after H b + s Y_i, Y_i the sum of
its H draws, so the compute part of a step is E[max_i (H b_i + s_i Y_i)] / H.
The extra over b (the "stragglers" component) is, for N alike workers:

- H = 1, exponential: s H_N, H_N = 1 + 1/2 + ... + 1/N the harmonic number
  (the maximum of N Exp(1) is a sum of independent Exp(1)/k, k = 1..N). Exact,
  and an exact rational times s in the symbolic results.
- H = 1, uniform: s N / (N + 1) (the largest of N uniforms has a Beta(N, 1)
  law). Exact.
- H = 1, lognormal: s E[max of N LogNormal(0, sigma^2)], which has no closed
  form: numerically integrated, E[max] = integral_0^inf (1 - F(y)^N) dy with
  mpmath's quadrature (tanh-sinh, about 15 significant digits).
- H > 1, exponential: Y is Gamma(H, 1) (Erlang for whole H); E[max of N] / H is
  numerically integrated the same way, with the regularised incomplete gamma.
- H > 1, uniform: Y has the Irwin-Hall law, whose CDF is a piecewise polynomial;
  numerically integrated at the working precision its cancellation needs, for
  H <= 200; above that, a normal law with the same mean and variance
  (approximation).
- H > 1, lognormal: the sum of lognormals has no closed law; Fenton-Wilkinson
  (a lognormal with the sum's mean and variance) then numerical integration:
  an approximation, and the simulation shows how good it is.

When the dcs differ (another device, another jitter), the workers fall into
groups and E[max] - max b = integral from max a of (1 - prod_g F_g(x)^{n_g}) dx,
a_g = H b_g, integrated numerically at the params' defaults: that term is then a
number that does not follow a swept param.

H_N grows like ln N: the wait for the slowest of many is what synchronous
training pays. A sum of H draws has a relative spread 1/sqrt(H) of a single
draw's, so syncing every H steps waits for a maximum much closer to the mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp

EXACT = "exact"
INTEGRATED = "numerically integrated"
APPROXIMATION = "approximation"
_IRWIN_HALL_MAX = 200  # above this H, the uniform sum is taken as normal


@dataclass(frozen=True)
class Straggler:
    extra: sp.Expr  # expected extra compute time per step, s
    status: str  # exact | numerically integrated | approximation
    formula: str
    note: str = ""


@dataclass(frozen=True)
class Group:
    """Workers alike: same deterministic compute and the same jitter."""

    count: int
    base: float  # compute time per step, s
    scale: float  # jitter, s (0: no variability)
    kind: str | None = None  # exponential | uniform | lognormal
    sigma: float | None = None


# ---- the law of Y, the sum of H unit draws -------------------------------------------------


def sum_law(kind: str, H: float, sigma: float | None = None):
    """(cdf of Y, mean, sd, status) for Y = the sum of H draws of the unit jitter."""
    import mpmath as mp

    if kind == "exponential":
        return (lambda y: mp.gammainc(H, 0, y, regularized=True) if y > 0 else mp.mpf(0)), H, math.sqrt(H), (
            EXACT if H == 1 else INTEGRATED
        )
    if kind == "uniform":
        n = int(round(H))
        if n == H and n <= _IRWIN_HALL_MAX:
            return _irwin_hall_cdf(n), n / 2, math.sqrt(n / 12), (EXACT if n == 1 else INTEGRATED)
        mean, sd = H / 2, math.sqrt(H / 12)
        return (lambda y: mp.ncdf((y - mean) / sd)), mean, sd, APPROXIMATION
    if kind == "lognormal":
        s2 = sigma * sigma
        if H == 1:
            mu, sd_log, status = 0.0, sigma, INTEGRATED
        else:  # Fenton-Wilkinson: a lognormal with the sum's mean and variance
            v = math.log1p(math.expm1(s2) / H)
            mu, sd_log, status = math.log(H) + s2 / 2 - v / 2, math.sqrt(v), APPROXIMATION
        mean = H * math.exp(s2 / 2)
        sd = math.sqrt(H * math.expm1(s2) * math.exp(s2))
        return (lambda y: mp.ncdf((mp.log(y) - mu) / sd_log) if y > 0 else mp.mpf(0)), mean, sd, status
    raise ValueError(kind)  # pragma: no cover


def _irwin_hall_cdf(n: int) -> Callable:
    import mpmath as mp

    binom = [math.comb(n, k) for k in range(n + 1)]
    fact = math.factorial(n)
    dps = 30 + int(n * 1.2)

    def cdf(y):
        if y <= 0:
            return mp.mpf(0)
        if y >= n:
            return mp.mpf(1)
        with mp.workdps(dps):
            y = mp.mpf(y)
            total = mp.mpf(0)
            for k in range(int(mp.floor(y)) + 1):
                term = binom[k] * (y - k) ** n
                total += -term if k % 2 else term
            return +(total / fact)

    return cdf


# ---- expected maxima -------------------------------------------------------------------------


@lru_cache(maxsize=256)
def unit_factor(kind: str, N: int, H: float, sigma: float | None = None) -> tuple[sp.Expr, str, str]:
    """c with E[max of N workers' H-step sums of jitter x X] / H = jitter x c, for N alike workers.

    Returns (c, status, formula); c is an exact sympy number where one exists.
    """
    if H == 1 and kind == "exponential":
        return sp.harmonic(N), EXACT, f"jitter x H_{N} (harmonic number: E[max of {N} Exp(1)] = 1 + 1/2 + ... + 1/{N})"
    if H == 1 and kind == "uniform":
        return sp.Rational(N, N + 1), EXACT, f"jitter x {N}/{N + 1} (E[max of {N} U(0, 1)] = N/(N + 1))"
    cdf, mean, sd, status = sum_law(kind, H, sigma)
    c = _expected_max([(N, 0.0, 1.0, cdf, mean, sd)]) / H
    if kind == "exponential":
        what = f"Gamma({H:g}, 1)" if H != 1 else "Exp(1)"
    elif kind == "uniform":
        what = f"the sum of {H:g} U(0, 1)" + (" (normal approximation)" if status == APPROXIMATION else "")
    else:
        law = f"LogNormal(0, {sigma:g}^2)"
        what = law if H == 1 else f"the sum of {H:g} {law} (Fenton-Wilkinson)"
    per = " / H" if H != 1 else ""
    return sp.Float(c, 15), status, f"jitter x E[max of {N} {what}]{per} = jitter x {c:.6g}"


def excess(groups: list[Group], H: float) -> tuple[float, str]:
    """E[max over workers of (H b + s Y)] / H - max b, for workers in unlike groups (numerically)."""
    parts = []
    status = INTEGRATED
    for g in groups:
        if g.scale > 0 and g.kind is not None:
            cdf, mean, sd, st = sum_law(g.kind, H, g.sigma)
            if st == APPROXIMATION:
                status = APPROXIMATION
            parts.append((g.count, H * g.base, g.scale, cdf, mean, sd))
        else:
            parts.append((g.count, H * g.base, 0.0, None, 0.0, 0.0))
    return _expected_max(parts) / H, status


def _expected_max(parts) -> float:
    """E[max_i (a_i + s_i Y_i)] - max a, over groups (count, a, s, cdf of Y, mean of Y, sd of Y)."""
    import mpmath as mp

    m0 = max(a for _, a, _, _, _, _ in parts)
    live = [(n, a, s, cdf) for n, a, s, cdf, _, _ in parts if s > 0 and cdf is not None]
    if not live:
        return 0.0

    def survival(x):
        prod = mp.mpf(1)
        for n, a, s, cdf in live:
            prod *= cdf((x - a) / s) ** n
        return 1 - prod

    points = {0.0}
    for n, a, s, _, mean, sd in parts:
        if s > 0:
            for k in (-3, 0, 3, 10):
                x = a - m0 + s * (mean + k * sd)
                if x > 0:
                    points.add(x)
    grid = [m0 + p for p in sorted(points)] + [mp.inf]
    return float(mp.quad(survival, grid))


__all__ = ["Straggler", "Group", "unit_factor", "excess", "sum_law", "EXACT", "INTEGRATED", "APPROXIMATION"]
