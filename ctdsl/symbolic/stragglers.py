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
  numerically integrated the same way, with the regularised incomplete gamma;
  above H = 1000, with the Wilson-Hilferty law ((Y/H)^(1/3) normal: an
  approximation), where the incomplete gamma is slow or does not converge.
- H > 10^4, any kind: Y is taken as normal with the sum's mean and variance (an
  approximation; E[max] is also kept within mean <= E[max] <= N mean). Where a
  law's integral does not converge (mpmath's NoConvergence), the same normal law
  stands in and the formula says so.
- A lognormal's E[max] is integrated in z = log(Y), where the heavy tail is; a
  mean beyond the float range makes the term inf, shown as such.
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
from typing import Callable, Mapping

import mpmath as mp
import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import InnerSync
from ctdsl.model.entities import DataCentre, Scheme
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import NumericError, value
from ctdsl.symbolic.dimensioned import DimExpr

EXACT = "exact"
INTEGRATED = "numerically integrated"
APPROXIMATION = "approximation"
_IRWIN_HALL_MAX = 200  # above this H, the uniform sum is taken as normal
_WH_H = 1000  # above this H, Gamma(H, 1) is taken by Wilson-Hilferty (the incomplete gamma is slow or fails)
_CLT_H = 1e4  # above this H, every sum is taken as normal (its law's own integral is slow or fails)


@dataclass(frozen=True)
class Straggler:
    extra: DimExpr  # expected extra compute time per step, s
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
    """(cdf of Y, mean, sd, status) for Y = the sum of H draws of the unit jitter.

    mean and sd are floats, +inf where they are beyond the float range (a
    lognormal with a large sigma): they only place the quadrature's points.
    """
    if H > _CLT_H:  # the central limit: a normal law with the sum's mean and variance
        mean, var = _moments(kind, sigma)
        m, sd = H * mean, mp.sqrt(H * var)
        return (lambda y: mp.ncdf((y - m) / sd)), _f(m), _f(sd), APPROXIMATION
    if kind == "exponential" and H > _WH_H:  # Wilson-Hilferty: (Y / H)^(1/3) is close to normal
        a, b = 1 - 1 / (9 * H), math.sqrt(1 / (9 * H))
        return (lambda y: mp.ncdf((mp.cbrt(y / H) - a) / b) if y > 0 else mp.mpf(0)), H, math.sqrt(H), APPROXIMATION
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
        s2 = mp.mpf(sigma) ** 2  # exp(s2) leaves the float range for sigma above about 26
        mu, sd_log = _log_law(H, sigma)
        status = INTEGRATED if H == 1 else APPROXIMATION
        mean = H * mp.exp(s2 / 2)
        sd = mp.sqrt(H * mp.expm1(s2) * mp.exp(s2))
        return (lambda y: mp.ncdf((mp.log(y) - mu) / sd_log) if y > 0 else mp.mpf(0)), _f(mean), _f(sd), status
    raise ValueError(kind)  # pragma: no cover


def _log_law(H: float, sigma: float):
    """(mu, sigma) of the lognormal law of the sum of H LogNormal(0, sigma^2) (Fenton-Wilkinson for H > 1)."""
    if H == 1:
        return mp.mpf(0), mp.mpf(sigma)
    s2 = mp.mpf(sigma) ** 2
    v = mp.log1p(mp.expm1(s2) / H)  # the sum's mean and variance
    return mp.log(H) + s2 / 2 - v / 2, mp.sqrt(v)


def _lognormal_max(N: int, mu, s) -> float:
    """E[max of N LogNormal(mu, s^2)] = integral of exp(mu + s z) N phi(z) Phi(z)^(N-1) dz, in z.

    In z the integrand is a bump near z = s (exp(s z) phi(z) is phi(z - s) scaled),
    where a quadrature in y = exp(mu + s z) misses the heavy tail; +inf beyond the float range.
    """
    f = lambda z: mp.exp(mu + s * z) * N * mp.npdf(z) * mp.ncdf(z) ** (N - 1)  # noqa: E731
    pts = sorted({-mp.inf, -10, 0, s - 10, s, s + 10, mp.inf})
    return _f(mp.quad(f, pts))


def _moments(kind: str, sigma: float | None):
    """(mean, variance) of one unit draw, as mpmath numbers."""
    if kind == "exponential":
        return mp.mpf(1), mp.mpf(1)
    if kind == "uniform":
        return mp.mpf(1) / 2, mp.mpf(1) / 12
    s2 = mp.mpf(sigma) ** 2
    return mp.exp(s2 / 2), mp.expm1(s2) * mp.exp(s2)


def _f(x) -> float:
    """An mpmath number as a float: +inf beyond the float range."""
    try:
        return float(x)
    except OverflowError:  # pragma: no cover - mpmath answers inf
        return math.inf


def _irwin_hall_cdf(n: int) -> Callable:
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
    c, note = _unit_max(kind, N, H, sigma, cdf, mean, sd, status)
    if note:
        status = APPROXIMATION
    if kind == "exponential":
        what = f"Gamma({H:g}, 1)" if H != 1 else "Exp(1)"
    elif kind == "uniform":
        what = f"the sum of {H:g} U(0, 1)" + (" (normal approximation)" if status == APPROXIMATION else "")
    else:
        law = f"LogNormal(0, {sigma:g}^2)"
        what = law if H == 1 else f"the sum of {H:g} {law} (Fenton-Wilkinson)"
    if H > _CLT_H:
        what = f"the sum of {H:g} draws (normal approximation)"
    per = " / H" if H != 1 else ""
    if not math.isfinite(c):  # inf shown as such: E[max] >= the mean, beyond the float range
        return sp.oo, APPROXIMATION, f"jitter x E[max of {N} {what}]{per} = inf (beyond the float range){note}"
    return sp.Float(c, 15), status, f"jitter x E[max of {N} {what}]{per} = jitter x {c:.6g}{note}"


def _unit_max(kind, N, H, sigma, cdf, mean, sd, status) -> tuple[float, str]:
    """(E[max of N sums] / H, a note when the quadrature gave up and the normal law stands in)."""
    if not math.isfinite(mean / H):
        return math.inf, ""
    if status == APPROXIMATION and H > _CLT_H:  # E[max of N] <= N E[Y]: a bound where the normal law is far off
        return min((mean + sd * _normal_max(N)) / H, N * mean / H), ""
    if kind == "lognormal":
        return _lognormal_max(N, *_log_law(H, sigma)) / H, ""
    try:
        c = _expected_max([(N, 0.0, 1.0, cdf, mean, sd)]) / H
    except mp.libmp.NoConvergence:
        m, var = _moments(kind, sigma)
        c = _f((H * m + mp.sqrt(H * var) * _normal_max(N)) / H)
        return c, " (normal approximation: the integral did not converge)"
    return c, ""


@lru_cache(maxsize=64)
def _normal_max(N: int) -> float:
    """E[max of N standard normals]."""
    up = mp.quad(lambda x: 1 - mp.ncdf(x) ** N, [0, 3, 10, mp.inf])
    down = mp.quad(lambda x: mp.ncdf(x) ** N, [-mp.inf, -10, -3, 0])
    return float(up - down)


def excess(groups: list[Group], H: float) -> tuple[float, str]:
    """E[max over workers of (H b + s Y)] / H - max b, for workers in unlike groups (numerically).

    +inf where it is beyond the float range; where the quadrature of a law does not
    converge, each group's sum is taken as normal (an approximation).
    """
    try:
        return _excess(groups, H, normal=False)
    except mp.libmp.NoConvergence:
        return _excess(groups, H, normal=True)


def _excess(groups: list[Group], H: float, normal: bool) -> tuple[float, str]:
    parts = []
    status = APPROXIMATION if normal else INTEGRATED
    for g in groups:
        if g.scale > 0 and g.kind is not None:
            if normal:
                m, var = _moments(g.kind, g.sigma)
                mean, sd = H * m, mp.sqrt(H * var)
                cdf = lambda y, mean=mean, sd=sd: mp.ncdf((y - mean) / sd)  # noqa: E731
                mean, sd = _f(mean), _f(sd)
            else:
                cdf, mean, sd, st = sum_law(g.kind, H, g.sigma)
                if st == APPROXIMATION:
                    status = APPROXIMATION
            parts.append((g.count, H * g.base, g.scale, cdf, mean, sd))
        else:
            parts.append((g.count, H * g.base, 0.0, None, 0.0, 0.0))
    return _expected_max(parts) / H, status


def _expected_max(parts) -> float:
    """E[max_i (a_i + s_i Y_i)] - max a, over groups (count, a, s, cdf of Y, mean of Y, sd of Y)."""
    m0 = max(a for _, a, _, _, _, _ in parts)
    live = [(n, a, s, cdf) for n, a, s, cdf, _, _ in parts if s > 0 and cdf is not None]
    if not live:
        return 0.0
    # E[max] is at least each group's mean: inf when a mean is beyond the float range, and a
    # floor under a quadrature that misses part of a heavy tail
    floor = max(a + s * mean for _, a, s, cdf, mean, _ in parts if s > 0 and cdf is not None) - m0
    if not math.isfinite(floor):
        return math.inf

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
                if x > 0 and math.isfinite(x):
                    points.add(x)
    grid = [m0 + p for p in sorted(points)] + [mp.inf]
    return max(_f(mp.quad(survival, grid)), floor)


# ---- a scheme's wait for its slowest worker ----------------------------------------------------


def wait(ctx: Context, scheme: Scheme, per_dc: Mapping[str, DimExpr]) -> Straggler | None:
    """The expected wait for the slowest worker of `scheme`, when a dc sets jitter; `per_dc` is a
    worker's deterministic step (compute, or the inner step) by dc.

    The workers wait for each other at every barrier: every H steps (the sync period), every
    H / F steps with fragments, and with `inner = dc` every step, a dc's replicas among
    themselves (`_inner_wait`)."""
    spec = ctx.spec
    dcs = [d for d in spec.dcs.values() if d.workers > 0]
    if not any(d.jitter is not None for d in dcs):
        return None
    env = ctx.symbols.defaults()
    notes = []
    if scheme.inner is InnerSync.DC:
        return _inner_wait(ctx, dcs, env)
    period = ctx.field(scheme, "period") / (ctx.field(scheme, "fragments") if scheme.fragments is not None else 1)
    try:
        H = value(period.e, env)
    except (NumericError, ZeroDivisionError):  # pragma: no cover - bounds are checked
        return None
    if period.free_symbols:
        notes.append(f"H is taken at its default, {H:g}")
    bound = scheme.delay is not None and value(ctx.q(scheme.delay, U.ONE).e, env) > 0
    if bound:
        notes.append("with a delay the workers need not meet at every sync: an upper bound")
    keys = {}
    for d in dcs:
        jitter = ctx.field(d, "jitter") if d.jitter is not None else D.zero(U.TIME)
        sigma = ctx.field(d, "jitter_sigma") if d.jitter_sigma is not None else None
        keys[d.name] = (per_dc[d.name], jitter, d.jitter_kind if d.jitter is not None else None, sigma)
    if len(set(keys.values())) == 1:
        base, jitter, kind, sigma = next(iter(keys.values()))
        n = sum(d.workers * d.n_sites for d in dcs)  # replicas in every site
        sig = value(sigma, env) if sigma is not None else None
        if sigma is not None and sigma.free_symbols:
            notes.append(f"jitter_sigma is taken at its default, {sig:g}")
        c, status, formula = unit_factor(kind, n, H, sig)
        extra = jitter * c
    else:
        groups = []
        for d in dcs:
            base, jitter, kind, sigma = keys[d.name]
            groups.append(Group(d.workers * d.n_sites, value(base, env), value(jitter, env), kind, value(sigma, env) if sigma is not None else None))
        x, status = excess(groups, H)
        extra = DimExpr(sp.Float(x, 15), U.TIME)
        formula = "E[max over workers of their compute over H steps] / H - the slowest dc's compute, for unlike dcs"
        notes.append("integrated at the params' defaults: a number that does not follow a swept param")
    if scheme.overlap:
        status = APPROXIMATION
        notes.append("with overlap, max(compute + stragglers, sync) stands for E[max(slowest compute, sync)], which is at least as large")
    if bound:
        status = APPROXIMATION
    return Straggler(extra, status, formula, "; ".join(notes))


def _inner_wait(ctx: Context, dcs: list[DataCentre], env) -> Straggler:
    """inner = dc: a dc's replicas wait for each other every step (its inner sync); the slowest
    dc's expected wait per step. The dcs' wait for each other every H steps is left out."""
    extras = {}
    formula = ""
    for d in dcs:
        if d.jitter is None:
            continue
        sigma = value(ctx.field(d, "jitter_sigma").e, env) if d.jitter_sigma is not None else None
        c, _status, formula = unit_factor(d.jitter_kind, d.workers, 1, sigma)
        extras[d.name] = ctx.field(d, "jitter") * c
    extra = D.emax(*extras.values()) if len(set(extras.values())) > 1 else next(iter(extras.values()))
    note = "inner = dc: each dc's replicas meet every step; the wait of the dcs for each other every H steps is left out"
    return Straggler(extra, APPROXIMATION, "per step, the slowest dc's " + formula, note)


__all__ = ["Straggler", "Group", "unit_factor", "excess", "sum_law", "wait", "EXACT", "INTEGRATED", "APPROXIMATION"]
