"""Statistics over independent replications: mean, sample standard deviation,
Student-t confidence intervals.

Each seed is one independent run, and its result (a mean over its measured
steps) is one observation; K seeds give K independent, identically distributed
observations, so a t interval with K - 1 degrees of freedom is the right one
whatever the correlation between steps inside a run (the method of independent
replications). The t quantile is computed, not looked up: the Student-t CDF is
a regularised incomplete beta function (mpmath, which ships with sympy), and the
quantile is found by bisection (ctdsl.roots) to full double precision. tests check it against
scipy.stats.t.ppf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath as mp

from ctdsl.roots import bisect


@lru_cache(maxsize=None)
def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with df degrees of freedom (0.5 < p < 1)."""
    if not 0.5 < p < 1 or df < 1:
        raise ValueError("t_quantile needs 0.5 < p < 1 and df >= 1")

    def upper(t: float) -> float:  # P(T > t) for t >= 0
        x = df / (df + t * t)
        return float(mp.betainc(df / 2, 0.5, 0, x, regularized=True)) / 2

    target = 1 - p
    hi = 1.0
    while upper(hi) > target:
        hi *= 2
    return bisect(0.0, hi, lambda t: upper(t) > target, steps=200)  # ctdsl.roots: to the last bit


@dataclass(frozen=True)
class Estimate:
    """The mean of K independent observations, with its spread and a t interval."""

    mean: float
    sd: float  # sample standard deviation of the observations (K - 1 in the denominator)
    n: int
    level: float = 0.95

    @property
    def se(self) -> float:
        return self.sd / math.sqrt(self.n) if self.n > 0 else math.nan

    @property
    def half_width(self) -> float:
        if self.n < 2:
            return math.inf
        return t_quantile(0.5 + self.level / 2, self.n - 1) * self.se

    @property
    def interval(self) -> tuple[float, float]:
        h = self.half_width
        return (self.mean - h, self.mean + h)

    def scaled(self, k: float) -> "Estimate":
        return Estimate(self.mean * k, self.sd * abs(k), self.n, self.level)

    def t_statistic(self, reference: float) -> float:
        """(mean - reference) / standard error; 0 when both agree exactly."""
        diff = self.mean - reference
        if diff == 0:
            return 0.0
        return diff / self.se if self.se > 0 else math.copysign(math.inf, diff)


def estimate(values: list[float], level: float = 0.95) -> Estimate:
    n = len(values)
    if n == 0:
        return Estimate(math.nan, math.nan, 0, level)
    mean = _sum(values) / n
    sd = math.sqrt(_sum([(v - mean) * (v - mean) for v in values]) / (n - 1)) if n > 1 else 0.0  # x * x: inf, where x ** 2 raises
    return Estimate(mean, sd, n, level)


def _sum(xs: list[float]) -> float:
    """fsum, but inf, -inf or nan where the values or their sum leave the float range (never an exception)."""
    if all(math.isfinite(x) for x in xs):
        try:
            return math.fsum(xs)
        except OverflowError:
            pass
    return math.nan if any(math.isnan(x) for x in xs) else sum(xs, 0.0)


def agrees(est: Estimate, reference: float, alpha: float) -> tuple[bool, float, float]:
    """Two-sided t test of mean = reference at level alpha: (agrees, |t|, critical |t|)."""
    t = abs(est.t_statistic(reference))
    crit = t_quantile(1 - alpha / 2, est.n - 1) if est.n >= 2 else math.inf
    return t <= crit, t, crit


__all__ = ["t_quantile", "Estimate", "estimate", "agrees"]
