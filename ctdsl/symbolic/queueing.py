"""Queueing on a shared link: the mean wait of a sync's burst of transfers (domain.md section 7).

A link with `load = rho` and `transfer = T` carries, besides the training job, a
stream of background transfers of T bytes each that keeps it busy a fraction
rho of the time. Arrivals are Poisson (many independent users), each transfer
holds the link for S = T / bandwidth, and the link serves whole transfers first
come, first served: an M/D/1 queue.

One transfer that arrives at a random moment finds, on average, the unfinished
work of the queue ahead of it, which by the Pollaczek-Khinchine formula is

    W = rho S / (2 (1 - rho))

(the time-average workload; Poisson arrivals see time averages). A sync is not
one transfer: each step of a collective's phase puts its bytes on the link as a
job of x = bytes / bandwidth, and the next step's job arrives as this one ends
(the step's transfers take the link as soon as the one before is done), so a
burst of n jobs (a phase's steps, or a sync's buckets one after another) is a
batch that chases itself through the queue. The first job finds W; every later
one finds exactly the background that arrived while the job before it was in
the queue (all earlier work was served first: FIFO), whose mean is rho times
that job's wait and service:

    W_1 = W,   W_(k+1) = rho (W_k + x)

so the burst's waits add up to (with c = rho x / (1 - rho), their limit)

    Q(n) = sum_k W_k = n c + (W - c) (1 - rho^n) / (1 - rho)

and the burst ends n x + Q(n) after it starts: n x / (1 - rho) in the long run,
the link's leftover capacity. This is exact for n jobs back to back on one
loaded link whose background is stationary when the burst begins (Kleinrock,
Queueing Systems vol. 1, 1975, section 5.6 for W; the recursion is the FIFO
queue's work conservation). It is a lower bound where:

- the jobs are not back to back (buckets released over the backward pass faster
  than the link takes them are; gaps let the link drain, so the burst can only
  end later than if they were not there, and by at most the gaps);
- a step waits on several loaded links at once (both directions of a ring over
  a loaded WAN): each step ends when its slowest job does, a fork-join of two
  FIFO queues, for which no closed form is known (Nelson and Tantawi, IEEE
  Trans. Computers 37(6), 1988); the burst on each link alone is a lower bound
  of it (its jobs can only arrive later than alone), and the form charges the
  largest of them. `ctdsl simulate` shows how far the fork-join goes past it
  (docs/cost-model.md, "Queueing of a burst").

What it also leaves out: a sync of length X lets rho X of background pile up behind
it; over many steps the sync must fit in the 1 - rho of the time the background
leaves ("over-subscribed": T_step >= busy / (1 - rho), `long_run_bound`).

`burst.py` counts a sync's jobs on each loaded edge and charges Q per phase (a
plain sync) or per burst of buckets (a sync that overlaps the backward pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr


def md1_wait(rho: DimExpr, service: DimExpr) -> DimExpr:
    """Mean wait in an M/D/1 queue of utilisation rho and service time S (Pollaczek-Khinchine)."""
    return rho * service / (2 * (1 - rho))


SMALL_BURST = 4  # up to this many jobs the form is the sum of their waits (it reads as derived)


def burst_wait(rho: DimExpr, service: DimExpr, job: DimExpr, n: DimExpr) -> DimExpr:
    """The summed waits Q(n) of n jobs of `job` seconds each sent back to back through an M/D/1
    link of utilisation rho and service S (the module's docstring): n c + (W - c)(1 - rho^n)/(1 - rho),
    c = rho job / (1 - rho), W = rho S / (2 (1 - rho)); Q(1) = W."""
    if rho.dim != U.ONE or n.dim != U.ONE:  # pragma: no cover - a load and a count are dimensionless
        raise D.DimensionError(f"rho^n of {rho.dim.describe()} and {n.dim.describe()}")
    w = md1_wait(rho, service)
    k = sp.Integer(n.e) if isinstance(n.e, int) else n.e
    if k.is_Integer and 1 <= int(k) <= SMALL_BURST:  # the waits one by one: W + rho (W + x) + ..., as derived
        waits = [w]
        for _ in range(int(k) - 1):
            waits.append(rho * (waits[-1] + job))
        return D.total(waits, U.TIME)
    c = rho * job / (1 - rho)
    decay = DimExpr(sp.Pow(rho.e, n.e), U.ONE)
    return n * c + (w - c) * (1 - decay) / (1 - rho)


@dataclass(frozen=True)
class Queue:
    """The background traffic on one directed edge."""

    link: str
    rho: DimExpr  # background utilisation (dimensionless)
    transfer: DimExpr  # bytes of one background transfer
    service: DimExpr  # S = transfer / bandwidth, s
    wait: DimExpr  # M/D/1 mean wait of one transfer arriving at a random time, s

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


FORMULA = (
    "Q(n) = n c + (W - c)(1 - rho^n)/(1 - rho) per burst of n jobs of x s on a loaded link; "
    "W = rho S / (2 (1 - rho)), c = rho x / (1 - rho), S = transfer / bandwidth"
)
# a lower bound everywhere: gaps between the jobs, several loaded edges at once (a fork-join) and a
# backlog left by the sync before (a link not yet back to its stationary state) can only add to the
# waits; exact for jobs back to back on one loaded edge whose background is stationary
STATUS = "lower bound"
LIMITS = (
    "exact for a burst of jobs sent back to back over one loaded link whose background is stationary "
    "when it begins (each job waits for the background that arrived during the one before); a lower "
    "bound where a step waits on several loaded links at once (a fork-join of FIFO queues: both "
    "directions of a ring over a loaded WAN), or where the jobs come with gaps; it leaves out the "
    "backlog a sync leaves behind for its next step on the same link (ctdsl simulate shows both)"
)

__all__ = ["md1_wait", "burst_wait", "Queue", "long_run_bound", "FORMULA", "STATUS", "LIMITS"]
