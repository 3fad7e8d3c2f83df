"""A loaded link shared fairly (`sharing = fair`): a processor-sharing queue in SimPy.

Every transfer on the link, the background's and the sync's, is a flow; the n
flows active at a moment each get 1/n of the link's rate (TCP's fair share of a
bottleneck, at flow level: Ben Fredj et al., SIGCOMM 2001). The background is
engine.py's: Poisson arrivals at rate rho / S (S + latency with `latency = hold`),
each a flow of S seconds of the link's whole rate, drawn from the same stream in
the same batches as the FIFO `LinkQueue`, so both disciplines meet the same
arrivals.

The queue keeps a virtual clock V, the service each active flow has received:
V grows at 1/n per second while n flows are active, and stands still while none
is. A flow of size y that joins at V0 leaves when V reaches V0 + y, its finish
tag. Background flows all have size S, so they leave in the order they came (a
deque); the sync's flows are few (one per step and loaded edge). The next
departure is the smallest tag; it is due (tag - V) n seconds from now, and is
rescheduled whenever a flow joins or leaves (the event of a superseded schedule
is ignored when it fires).

A flow's wait is its time on the link past its own service, sojourn - y (zero
when it is alone): the same reading as the FIFO queue's wait, so the phases'
step model (phases.py) uses either as it is.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ctdsl.simulate.edge import LoadedEdge
from ctdsl.simulate.plan import QueuePlan


class FairQueue(LoadedEdge):
    """One directed edge with background traffic, shared by its active flows equally (processor sharing)."""

    def __init__(self, env, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
        super().__init__(plan, rng, hold)
        self.env = env
        self.v = 0.0  # the virtual clock: service each active flow has received
        self.last = 0.0  # when v was brought up to date
        self.background: deque = deque()  # (tag, arrived) of the background's active flows, in tag order
        self.sync: list = []  # [tag, arrived, size, event] of the sync's active flows
        self.completed = 0.0  # busy time up to `last`
        self._generation = 0
        env.process(self._arrivals())

    @property
    def active(self) -> int:
        """Flows on the link now (the trace's queue length)."""
        return len(self.background) + len(self.sync)

    def busy(self, now: float) -> float:
        return self.completed + (now - self.last if self.active else 0.0)

    def _advance(self) -> None:
        now = self.env.now
        n = self.active
        if n:
            self.v += (now - self.last) / n
            self.completed += now - self.last
        self.last = now

    def _schedule(self) -> None:
        """(Re)schedule the next departure; any event scheduled before is now stale."""
        self._generation += 1
        n = self.active
        if not n:
            return
        tags = [f[0] for f in self.sync]
        if self.background:
            tags.append(self.background[0][0])
        tag = min(tags)
        delay = max(0.0, (tag - self.v) * n)
        gen = self._generation
        self.env.timeout(delay).callbacks.append(lambda _ev: self._depart(gen, tag))

    def _depart(self, gen: int, tag: float) -> None:
        if gen != self._generation:
            return
        self._advance()
        self.v = max(self.v, tag)  # the flow due now leaves exactly (no rounding left over)
        now = self.env.now
        while self.background and self.background[0][0] <= self.v:
            _, arrived = self.background.popleft()
            if self.measuring:
                self.bg_wait += (now - arrived) - self.service
                self.bg_count += 1
        for f in [f for f in self.sync if f[0] <= self.v]:
            self.sync.remove(f)
            f[3].succeed(max(0.0, now - f[1] - f[2]))  # rounding: a flow alone waits nothing
        self._schedule()

    def _arrivals(self):
        env = self.env
        timeout, gap = env.timeout, self._gap
        while True:
            yield timeout(gap())
            self._advance()
            self.starts += 1
            self.background.append((self.v + self.service, env.now))
            self._schedule()

    def sync_job(self, service: float):
        """A step's sync bytes on this edge: a flow of service (+ latency with hold); its wait, past its own time."""
        env = self.env
        self._advance()
        size = service + self.held
        done = env.event()
        self.sync.append([self.v + size, env.now, size, done])
        self._schedule()
        wait = yield done
        if self.measuring:
            self.sync_wait += wait
            self.sync_count += 1
        return wait


__all__ = ["FairQueue"]
