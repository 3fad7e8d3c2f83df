"""Queueing on a shared link: the mean wait of a sync's burst of transfers (domain.md section 7).

A link with `load = rho` and `transfer = T` carries, besides the training job, a
stream of background transfers of T bytes each that keeps it busy a fraction
rho of the time. Arrivals are Poisson (many independent users), each transfer
needs S = T / bandwidth of the link's time, and the link's `sharing` says how it
serves them.

`sharing = fair` (the default): processor sharing (M/G/1-PS), the flow-level model
of a link shared by elastic flows, as TCP flows share a bottleneck (S. Ben Fredj,
T. Bonald, A. Proutiere, G. Regnie and J. W. Roberts, "Statistical bandwidth
sharing: a study of congestion at flow level", SIGCOMM 2001; L. Kleinrock,
Queueing Systems vol. 2, 1976, section 4.4; M. Harchol-Balter, Performance
Modeling and Design of Computer Systems, 2013, ch. 22): the active transfers
share the rate equally at once. A job of y seconds arriving at a random moment
stays y / (1 - rho) on average, whatever the background's sizes
(insensitivity), so it waits y rho / (1 - rho) past its own time. A burst of n
jobs of x sent back to back (each as the one before ends) is, to the link, one
flow of n x: the sync always holds one share, and which of its jobs holds it
changes nothing for the background. Its waits add up to, exactly,

    Q_fair(n) = n x rho / (1 - rho) = n c,   c = rho x / (1 - rho)

(the long-run limit of the FIFO form below, reached from the first job: under
sharing a job never waits for a whole background transfer ahead of it). A
background transfer waits W = rho S / (1 - rho) past its S.

`sharing = fifo`: the link serves whole transfers first come, first served, an
M/D/1 queue, as follows.

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

Under sharing the same two limits hold: the burst on each link is exact alone,
and a step that waits on several links at once is a fork-join of processor-sharing
queues, also without a closed form; the largest link's mean is a lower bound of the
mean of the largest, close to it where the burst is long against one background
transfer (a long flow's sojourn concentrates about its mean), far below it where a
step's job is short against S.

`burst.py` counts a sync's jobs on each loaded edge and charges Q per phase (a
plain sync) or per burst of buckets (a sync that overlaps the backward pass).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import Sharing
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr


def md1_wait(rho: DimExpr, service: DimExpr) -> DimExpr:
    """Mean wait in an M/D/1 queue of utilisation rho and service time S (Pollaczek-Khinchine)."""
    return rho * service / (2 * (1 - rho))


def ps_wait(rho: DimExpr, service: DimExpr) -> DimExpr:
    """Mean wait past its own time of a job of `service` seconds on an M/G/1-PS link of utilisation
    rho: service / (1 - rho) - service (Kleinrock vol. 2, section 4.4)."""
    return rho * service / (1 - rho)


def fair_burst_wait(rho: DimExpr, job: DimExpr, n: DimExpr) -> DimExpr:
    """The summed waits of n jobs of `job` seconds each sent back to back through a processor-sharing
    link of utilisation rho: one flow of n x job, n job rho / (1 - rho) (the module's docstring)."""
    return n * ps_wait(rho, job)


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
    wait: DimExpr  # mean wait of one background transfer arriving at a random time (past its S under sharing), s
    sharing: Sharing = Sharing.FAIR

    @classmethod
    def of(cls, link: str, rho: DimExpr, transfer: DimExpr, bandwidth: DimExpr, sharing: Sharing = Sharing.FAIR) -> "Queue":
        service = transfer / bandwidth
        wait = ps_wait(rho, service) if sharing is Sharing.FAIR else md1_wait(rho, service)
        return cls(link, rho, transfer, service, wait, sharing)

    def burst(self, job: DimExpr, n: DimExpr) -> DimExpr:
        """The summed waits of n jobs of `job` seconds sent back to back through this link."""
        if self.sharing is Sharing.FAIR:
            return fair_burst_wait(self.rho, job, n)
        return burst_wait(self.rho, self.service, job, n)


def long_run_bound(rho: float, busy: float, step: float) -> float | None:
    """The least step a loaded link allows in the long run, where background and sync need all of
    it or more (rho + busy / step >= 1, "over-subscribed"): busy / (1 - rho); None where they fit.

    `busy` is the seconds per step the sync keeps the link busy, `step` the closed form's step.
    """
    if not step or rho + busy / step < 1:
        return None
    return busy / (1 - rho) if rho < 1 else math.inf


FAIR_FORMULA = "Q(n) = n x rho / (1 - rho) per burst of n jobs of x s on a loaded link shared fairly (processor sharing: one flow of n x stays n x / (1 - rho))"
FAIR_LIMITS = (
    "the exact mean on one loaded link shared fairly (processor sharing) whose background is stationary when "
    "the burst begins, whatever the background's transfer sizes; a lower bound where a step waits on several "
    "loaded links at once (a fork-join: the mean of one link, below the mean of the slowest), close where the "
    "burst is long against one background transfer; it leaves out the backlog a sync leaves behind for its "
    "next step on the same link (ctdsl simulate shows both)"
)
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

def closed_form(sharings) -> tuple[str, str, str]:
    """(formula, status, limits) of the waits on links of the given disciplines (both joined where a
    phase waits on links of each)."""
    kinds = set(sharings)
    parts = [(FAIR_FORMULA, FAIR_LIMITS)] if Sharing.FAIR in kinds else []
    if Sharing.FIFO in kinds or not kinds:
        parts.append((FORMULA, LIMITS))
    return "; ".join(f for f, _ in parts), STATUS, "; ".join(n for _, n in parts)


__all__ = ["md1_wait", "ps_wait", "fair_burst_wait", "closed_form", "burst_wait", "Queue", "long_run_bound", "FORMULA", "STATUS", "LIMITS"]
