"""A loaded edge's background traffic and counters, as every engine and sharing discipline has them.

The background is Poisson: transfers of S seconds on the link (S + its latency with
`latency = hold`) arriving at exponential gaps of mean S / rho, drawn from the run's
stream BATCH at a time. The SimPy engine's FIFO queue (engine.LinkQueue) and fair
queue (fair_link.FairQueue) and the numpy engine's links (vector_link, vector_fair)
all draw them here, so that each meets the same arrivals draw for draw; each counts
the background's and the sync's waits in the same fields, read by the run's results.
"""

from __future__ import annotations

import numpy as np

from ctdsl.simulate.plan import QueuePlan

BATCH = 4096  # gaps drawn from the stream at a time


class LoadedEdge:
    """One directed edge with background traffic: its draws and what a run measures on it."""

    def __init__(self, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
        self.plan = plan
        self.rng = rng
        self.held = plan.latency if hold else 0.0  # added to every transfer's time on the link
        self.service = plan.service + self.held
        self.mean_gap = self.service / plan.rho
        self._gaps: list[float] = []
        self.measuring = False
        self.starts = 0  # background transfers put on the wire, measured or not
        self.bg_wait = 0.0
        self.bg_count = 0
        self.sync_wait = 0.0
        self.sync_count = 0

    def gaps(self) -> np.ndarray:
        """The next BATCH gaps between background arrivals."""
        return self.rng.exponential(self.mean_gap, BATCH)

    def _gap(self) -> float:
        """The next gap, one at a time (the SimPy engine's arrival processes)."""
        if not self._gaps:
            self._gaps = self.gaps().tolist()
            self._gaps.reverse()
        return self._gaps.pop()
