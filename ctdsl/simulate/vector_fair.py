"""A loaded link shared fairly, for the numpy engine: fair_link.py's processor sharing without SimPy.

The model is fair_link.FairQueue's (its docstring): the active flows share the
rate equally, a virtual clock V grows at 1/n per second with n flows active, a
flow of size y that joins at V0 leaves when V reaches V0 + y. Here the events
are taken in a plain loop, next arrival or next departure, with the arrivals
drawn as the SimPy engine draws them (exponential gaps of mean S / rho, 4096 at
a time from the link's own generator, summed in the same order), so both engines
see the same background.

What makes it fast is the time between syncs, when only the background is on the
link (80,000 s of compute in tests/test_simulate_closed_forms.py's one-way ring:
thousands of transfers a step). The state at the next sync depends only on the
transfers since the link was last empty, and the total work on the link does not
depend on how it is shared (every discipline that never idles with work waiting
has the same work process), so the last moment it was empty comes from the
Lindley recursion over a block of arrivals at once (vector_link.py's form, one
running minimum): the link is empty just before arrival j exactly when the
unreflected work U_j is at or below 0 and below every earlier U. The queue is
then reset empty there and only the transfers after it are played flow by flow.

The transfers of the background so skipped are not measured one by one: a link
shared fairly reports no background wait from this engine (SimPy's does).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ctdsl.simulate.edge import LoadedEdge
from ctdsl.simulate.plan import QueuePlan

SKIP = 256  # arrivals in one wait past which the idle stretch is found by the Lindley recursion first


class FairVectorLink(LoadedEdge):
    """A loaded edge shared fairly: events in a loop, long stretches of background skipped to their last empty moment."""

    def __init__(self, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
        super().__init__(plan, rng, hold)  # bg_wait and bg_count are not measured here (the module's docstring)
        self.times = np.empty(0)  # arrivals drawn, from index i on not yet on the link
        self.i = 0
        self.last = 0.0  # time of the latest arrival drawn
        self.now = 0.0
        self.v = 0.0  # the virtual clock
        self.bg: deque = deque()  # finish tags of the background's active flows, in order
        self.idle = 0.0  # the link's idle time in [0, now]
        self.sync_jobs = 0
        self.served = 0  # background transfers played flow by flow

    def _refill(self) -> None:
        gaps = self.gaps()
        gaps[0] += self.last  # summed in SimPy's order: ((last + g0) + g1) + ...
        new = np.cumsum(gaps)
        self.last = float(new[-1])
        self.times = np.concatenate((self.times[self.i :], new))
        self.i = 0

    def _next_arrival(self) -> float:
        if self.i == len(self.times):
            self._refill()
        return float(self.times[self.i])

    def _skip(self, t: float) -> None:
        """Jump to the last moment before t at which the link was empty, where many arrivals come first.

        Arrivals are drawn a batch at a time; each pass looks at the ones drawn up to t, resets the
        queue at the last that finds it empty, and draws more while every one drawn comes by t."""
        while True:
            if self.i == len(self.times):
                self._refill()
            k = int(self.times.searchsorted(t, side="right"))
            drawn_all = k == len(self.times)  # more may come by t
            if k - self.i < SKIP and not drawn_all:
                return
            a = self.times[self.i : k]
            work = math.fsum(tag - self.v for tag in self.bg)
            u = work + self.service * np.arange(len(a)) - (a - self.now)  # unreflected work just before each
            low = np.minimum.accumulate(np.minimum(u, 0.0))
            empty = np.flatnonzero(u <= low)
            j = int(empty[-1]) if len(empty) else 0
            if j > 0 or (len(empty) and self.bg):
                at = float(a[j])
                self.idle += (at - self.now) - (work + self.service * j)  # all the work before it was done by then
                self.starts += j
                self.bg.clear()
                self.v = 0.0
                self.now = at
                self.i += j
            if not drawn_all:
                return
            self._refill()  # keeps the arrivals from i on; the next pass sees more of them

    def _run(self, t: float, sync: float | None = None) -> float:
        """Play the events up to time t, or, with a sync flow of finish tag `sync`, until it leaves: that time."""
        bg = self.bg
        while True:
            n = len(bg) + (sync is not None)
            ta = self._next_arrival()
            if n:
                tag = bg[0] if bg else math.inf
                if sync is not None and sync < tag:
                    tag = sync
                td = self.now + (tag - self.v) * n
            else:
                td = math.inf
            if ta > t and td > t:
                if n:
                    self.v += (t - self.now) / n
                else:
                    self.idle += t - self.now
                self.now = t
                return t
            if ta <= td:  # an arrival first
                if n:
                    self.v += (ta - self.now) / n
                else:
                    self.idle += ta - self.now
                self.now = ta
                bg.append(self.v + self.service)
                self.i += 1
                self.starts += 1
                self.served += 1
            else:
                self.now = td
                self.v = max(self.v, tag)  # the flow due now leaves exactly (no rounding left over)
                while bg and bg[0] <= self.v:
                    bg.popleft()
                if sync is not None and sync <= self.v:
                    return td

    def advance(self, t: float) -> None:
        """Bring the link to time t (background only)."""
        if not t < math.inf or t <= self.now:
            return
        self._skip(t)
        self._run(t)

    def book(self, t: float) -> None:
        """Starts are counted as flows join (every one is on the wire at once): nothing left to book."""

    def job(self, t: float, service: float) -> float:
        """A sync job arriving at t, a flow of service (+ latency with hold): its wait, past its own time."""
        self.advance(t)
        size = service + self.held
        end = self._run(math.inf, self.v + size)
        wait = max(0.0, end - t - size)  # rounding: a flow alone waits nothing
        self.sync_jobs += 1
        if self.measuring:
            self.sync_wait += wait
            self.sync_count += 1
        return wait


__all__ = ["FairVectorLink"]
