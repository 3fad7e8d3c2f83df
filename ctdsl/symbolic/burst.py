"""A sync's burst on its loaded links: how many jobs it puts on each, and their summed waits.

A phase of a collective runs its steps one after another; each step puts its bytes
on every loaded edge it crosses as one job (x = the step's bytes on the edge over
its bandwidth). A burst is phases run back to back, `repeat` times over (a sync's
B buckets, each the phases of one bucket). On each loaded edge e the burst is
n_e jobs of x_e each (their mean where phases differ), and its waits there add up
to Q(n_e) (`Queue.burst`: n_e x_e rho / (1 - rho) on a link shared fairly, the FIFO
form `queueing.burst_wait` on one that is not). A step ends when its slowest job does, so the
burst waits the largest Q over its edges: exact with one loaded edge, a lower
bound with several at once (a fork-join; queueing.py says why).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from ctdsl import units as U
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr

Edge = tuple[str, str]


def jobs(phases: Iterable, edges: Mapping) -> dict[Edge, tuple[DimExpr, DimExpr]]:
    """Per loaded edge: (jobs, seconds on the link) of the phases once through; `edges` the
    router's EdgeTerms by edge."""
    out: dict[Edge, tuple[DimExpr, DimExpr]] = {}
    for ph in phases:
        for e in ph.waits:
            steps = D.one() * ph.steps
            n, busy = out.get(e, (D.zero(U.ONE), D.zero(U.TIME)))
            out[e] = (n + steps, busy + steps * ph.loads[e] / edges[e].bandwidth)
    return out


def wait(phases: Iterable, edges: Mapping, repeat: DimExpr | int = 1) -> DimExpr:
    """The summed waits of the phases run back to back `repeat` times: max over the loaded edges
    of Q(n_e) (zero where none is loaded)."""
    repeat = D.one() * repeat
    waits = []
    for e, (n, busy) in jobs(phases, edges).items():
        waits.append(edges[e].queue.burst(busy / n, repeat * n))
    if not waits:
        return D.zero(U.TIME)
    return D.emax(*waits) if len(waits) > 1 else waits[0]


__all__ = ["jobs", "wait"]
