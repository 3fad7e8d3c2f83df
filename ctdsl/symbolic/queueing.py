"""Queueing on a shared link: the mean wait of a sync transfer (domain.md section 7).

A link with `load = rho` and `transfer = T` carries, besides the training job, a
stream of background transfers of T bytes each that keeps it busy a fraction
rho of the time. Arrivals are Poisson (many independent users), each transfer
holds the link for S = T / bandwidth, and the link serves whole transfers first
come, first served: an M/D/1 queue.

A sync transfer that arrives at a random moment finds, on average, the
unfinished work of the queue at a random moment ahead of it, which by the
Pollaczek-Khinchine formula is

    W = rho S / (2 (1 - rho))

(the time-average workload; Poisson arrivals see time averages, so it is also the
mean wait of a background transfer). This is exact for one transfer arriving at
a stationary queue, independently of it. What it leaves out, and the simulation
shows (docs/simulation.md):

- a sync transfer of length X lets rho X of background work pile up behind it,
  which the next sync step on the same link then waits for; over many steps the
  link serves the background first in the long run, so the sync must fit in the
  remaining 1 - rho of the time, and when it does not ("over-subscribed"), the
  step grows until it does: T_step >= busy / (1 - rho);
- when a step sends over two loaded links at once, it waits for the slower of
  two random waits, whose mean exceeds W.

The router charges W once per loaded link on a transfer's route, in every step of
every phase whose transfers cross one (routing.py), which is where the closed form
is included in the step time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ctdsl.symbolic.dimensioned import DimExpr


def md1_wait(rho: DimExpr, service: DimExpr) -> DimExpr:
    """Mean wait in an M/D/1 queue of utilisation rho and service time S (Pollaczek-Khinchine)."""
    return rho * service / (2 * (1 - rho))


@dataclass(frozen=True)
class Queue:
    """The background traffic on one directed edge."""

    link: str
    rho: DimExpr  # background utilisation (dimensionless)
    transfer: DimExpr  # bytes of one background transfer
    service: DimExpr  # S = transfer / bandwidth, s
    wait: DimExpr  # M/D/1 mean wait, s

    @classmethod
    def of(cls, link: str, rho: DimExpr, transfer: DimExpr, bandwidth: DimExpr) -> "Queue":
        service = transfer / bandwidth
        return cls(link, rho, transfer, service, md1_wait(rho, service))


def long_run_bound(rho: float, busy: float, step: float) -> float | None:
    """The least step a loaded link allows in the long run, where background and sync need all of
    it or more (rho + busy / step >= 1, "over-subscribed"): busy / (1 - rho); None where they fit.

    `busy` is the seconds per step the sync keeps the link busy, `step` the closed form's step.
    """
    if not step or rho + busy / step < 1:
        return None
    return busy / (1 - rho) if rho < 1 else math.inf


FORMULA = "rho S / (2 (1 - rho)) per loaded link crossed, per phase step; S = transfer / bandwidth"
STATUS = "approximation"  # the M/D/1 mean is exact; its use as a step's wait is not
LIMITS = (
    "the M/D/1 mean wait (Pollaczek-Khinchine) is exact for one transfer arriving at a random time "
    "to a stationary queue; as a step's wait it ignores the backlog a sync leaves behind for its next "
    "step on the same link, and takes one wait where a step waits on several loaded links at once "
    "(ctdsl simulate shows both)"
)

__all__ = ["md1_wait", "Queue", "long_run_bound", "FORMULA", "STATUS", "LIMITS"]
