"""What an uncertain param is drawn from: `param x = v ~ kind(args)` (docs/codesign.md, Uncertainty)."""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl.diagnostics import Span


@dataclass(frozen=True, slots=True)
class Distribution:
    """A checked distribution; args in the param's base units.

    uniform (lo, hi), triangular (lo, mode, hi), normal (mean, sd), lognormal
    (median, sigma): ln x is normal with mean ln(median) and sd sigma (sigma is a
    plain number).
    """

    kind: str
    args: tuple[float, ...]
    span: Span

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(float(a) for a in self.args))


__all__ = ["Distribution"]
