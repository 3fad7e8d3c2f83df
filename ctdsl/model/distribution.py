"""What an uncertain param is drawn from: `param x = v ~ kind(args)` (docs/codesign.md, Uncertainty)."""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import limits
from ctdsl.diagnostics import Span


@dataclass(frozen=True, slots=True)
class Distribution:
    """A checked distribution; args in the param's base units.

    uniform (lo, hi), triangular (lo, mode, hi), normal (mean, sd), lognormal
    (median, sigma): ln x is normal with mean ln(median) and sd sigma (sigma is a
    plain number); samples (v1, v2, ...): the empirical distribution of a table
    of samples, each value drawn with probability 1/len (a value written twice,
    twice as often), at most `limits.MAX_DIST_SAMPLES` of them.
    """

    kind: str
    args: tuple[float, ...]
    span: Span

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(float(a) for a in self.args))
        if self.kind == "samples" and not 1 <= len(self.args) <= limits.MAX_DIST_SAMPLES:
            raise ValueError(f"a table of samples holds 1 .. {limits.MAX_DIST_SAMPLES:,} values, not {len(self.args):,}")


__all__ = ["Distribution"]
