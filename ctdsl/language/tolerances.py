"""Named numeric tolerances, one place for each.

CEIL_SLACK: `ceil(x)` is taken of x - CEIL_SLACK * max(1, |x|), so that a quotient
  that should be a whole number but lands a rounding error above it (e.g.
  3.0000000000000004) does not take the next integer. Used by every evaluator.
REL: relative tolerance of comparisons between two floats that should be equal,
  or of a threshold test (a rate "above" another by more than rounding).
TIGHT: relative tolerance where a value is compared with an exact one (a sent
  payload against the dense one).
KINK: relative gap under which the two largest (smallest) arguments of a max (min)
  count as tied where a derivative is taken (ctdsl.symbolic.sensitivity): the
  derivative is the active branch's, and the other side's may differ.
SEARCH_BINDING: relative gap under which a design search's constraint counts as
  binding at the optimum (its quantity equals its bound), and a param as at an
  end of its range (ctdsl.numeric.search).
SEARCH_XTOL: relative width (of the param's range, in log space on a log axis)
  to which a design search's bounded minimisation along one param converges.
"""

from __future__ import annotations

CEIL_SLACK = 1e-12
REL = 1e-9
TIGHT = 1e-12
KINK = 1e-6
SEARCH_BINDING = 1e-6
SEARCH_XTOL = 1e-9


def close(a: float, b: float, rel: float = REL) -> bool:
    """a and b equal to `rel` relative (to the larger magnitude; exact zero only equals zero)."""
    return abs(a - b) <= rel * max(abs(a), abs(b))


def above(a: float, b: float, rel: float = REL) -> bool:
    """a exceeds b by more than rounding."""
    return a > b * (1 + rel)


def below(a: float, b: float, rel: float = REL) -> bool:
    """a falls short of b by more than rounding."""
    return a < b * (1 - rel)
