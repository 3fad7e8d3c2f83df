"""The model against measurements: each observation's measured and predicted value, the fit,
and the figures of a set (a spec's observations): mean absolute percentage error, the largest
error, and the rank correlation of the layouts that share a model.

Conventions (docs/validation.md):

- error = (predicted - measured) / measured, signed; MAPE is the mean of |error| in percent;
- the observation a fit was made on is met by construction: it is shown, and left out of
  MAPE and the largest error (it is not a test of the model), but kept among the layouts
  ranked;
- layouts "share a model" when their scheme trains the same model block and the model's
  fields other than `tokens` (its shape or parameter count, `batch_tokens`, the bytes of a
  value, the FLOPs per token) take the same values in their scenarios; within such a group
  and one observable, Spearman's rank correlation between measured and predicted (ties get
  the mean of their ranks; none for fewer than 3 layouts), and whether the best layout
  (the fastest, or the highest utilisation) is predicted right.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctdsl import units as U

MIN_RANKED = 3  # layouts a rank correlation needs: two always correlate +-1


@dataclass(frozen=True, slots=True)
class ObservedRow:
    scenario: str | None  # None: at the params' defaults
    scheme: str
    observable: str
    measured: float  # base units
    predicted: float | None  # base units; None: the solve gives no such value (see note)
    dim: U.Dim
    text: str  # the measured value as written
    source: str
    fitted: bool = False  # the fit was made on this observation: met by construction
    group: str = ""  # the model it trains, as shown (rank groups)
    group_key: tuple = ()  # the model's values (rank groups)
    better: str = "lower"  # lower | higher: which way the best layout lies
    note: str = ""  # why there is no prediction
    implied: float | None = None  # with a fit: the fitted param's value that would meet this observation; None: none in range

    @property
    def error(self) -> float | None:
        """(predicted - measured) / measured; None without a prediction."""
        if self.predicted is None or self.measured == 0 or not math.isfinite(self.predicted):
            return None
        return (self.predicted - self.measured) / self.measured

    @property
    def counted(self) -> bool:
        """Whether the row counts towards MAPE and the largest error."""
        return not self.fitted and self.error is not None


@dataclass(frozen=True, slots=True)
class FitResult:
    """A param solved for so that one observation is met, then held for every other."""

    param: str
    scenario: str
    value: float  # base units
    dim: U.Dim
    lo: float  # the range searched
    hi: float
    bracket: tuple[float, float]  # the scan's bracket of the root: predicted - measured changes sign across it
    roots: int  # sign changes found over the range (the first is used)
    observation: str  # what was met, as shown: `step_time of dp = 3.5665 s`

    @property
    def shown(self) -> str:
        return U.format_quantity(self.value, self.dim) if self.dim != U.ONE else f"{self.value:.6g}"


@dataclass(frozen=True, slots=True)
class RankGroup:
    group: str  # the model, as shown
    observable: str
    scheme: str
    scenarios: tuple[str, ...]  # the layouts, in the order written
    spearman: float | None  # None: fewer than MIN_RANKED layouts, or all alike
    best_measured: str
    best_predicted: str

    @property
    def best_right(self) -> bool:
        return self.best_measured == self.best_predicted


@dataclass(frozen=True, slots=True)
class Observed:
    """One set: a spec's observations against its predictions."""

    path: str
    rows: tuple[ObservedRow, ...]
    fit: FitResult | None = None
    groups: tuple[RankGroup, ...] = ()

    @property
    def counted(self) -> tuple[ObservedRow, ...]:
        return tuple(r for r in self.rows if r.counted)

    @property
    def mape(self) -> float | None:
        """Mean absolute percentage error over the counted rows, in percent; None: none counted."""
        return mean_abs_pct(r.error for r in self.counted)

    @property
    def worst(self) -> ObservedRow | None:
        """The counted row with the largest |error|."""
        rows = self.counted
        return max(rows, key=lambda r: abs(r.error)) if rows else None


def mean_abs_pct(errors) -> float | None:
    xs = [abs(e) for e in errors if e is not None]
    return 100 * sum(xs) / len(xs) if xs else None


def ranks(xs: list[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    out = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation: Pearson's correlation of the ranks (exact with ties);
    None for fewer than MIN_RANKED pairs or when either side has a single rank."""
    if len(xs) != len(ys) or len(xs) < MIN_RANKED:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def rank_groups(rows: tuple[ObservedRow, ...]) -> tuple[RankGroup, ...]:
    """The layouts that share a model, one group per (model values, scheme, observable), in
    the order their first row was written; rows without a prediction are left out."""
    groups: dict[tuple, list[ObservedRow]] = {}
    for r in rows:
        if r.predicted is None or not math.isfinite(r.predicted):
            continue
        groups.setdefault((r.group_key, r.scheme, r.observable), []).append(r)
    out = []
    for (_, scheme, observable), members in groups.items():
        measured = [r.measured for r in members]
        predicted = [r.predicted for r in members]
        pick = min if members[0].better == "lower" else max
        name = lambda r: r.scenario or "defaults"  # noqa: E731
        out.append(
            RankGroup(
                members[0].group,
                observable,
                scheme,
                tuple(name(r) for r in members),
                spearman(measured, predicted),
                name(pick(members, key=lambda r: r.measured)),
                name(pick(members, key=lambda r: r.predicted)),
            )
        )
    return tuple(out)


__all__ = ["ObservedRow", "FitResult", "RankGroup", "Observed", "mean_abs_pct", "ranks", "spearman", "rank_groups", "MIN_RANKED"]
