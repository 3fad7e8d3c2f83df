"""One loaded link of the numpy engine: a FIFO queue whose waits come from the Lindley recursion.

The link serves one transfer at a time, first come, first served. Its state at
time `now` is the unfinished work V (the wait of a transfer arriving then) and
the server's idle time so far. Between two of the sync's jobs only background
transfers arrive, each bringing S of work; over such an interval, with the
arrivals a_j drawn in bulk,

    U_j = V(now) + S (j - p) - (a_j - now)        (the work just before a_j, unreflected)
    W_j = U_j - min(0, min_{i <= j} U_i)           (the Lindley recursion, solved)

so a block of waits is one running minimum over an array (numpy's
`minimum.accumulate`), and -min(0, min U) is the idle time the block adds. A
sync job arriving at t waits V(t) and adds its own service to the work.

A transfer's start a_j + W_j is known once it has arrived (FIFO: nothing that
arrives later goes ahead of it), but it counts in the measured window only if
it starts there: starts are booked (`book`) up to a time, and at the window's
start and end the runner books them exactly up to that time, as SimPy counts a
transfer when it is put on the wire.

The gaps are drawn as the SimPy engine's `LinkQueue` draws them (exponential,
mean S / rho, 4096 at a time from the link's own generator), and arrival times
are summed in the same order, so with the same stream both engines see the same
background arrivals.
"""

from __future__ import annotations

import math

import numpy as np

from ctdsl.simulate.edge import BATCH, LoadedEdge
from ctdsl.simulate.plan import QueuePlan



class VectorLink(LoadedEdge):
    """A loaded edge: background arrivals in bulk, waits by prefix sums and running minima."""

    def __init__(self, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
        super().__init__(plan, rng, hold)
        self.now = 0.0  # the time up to which the work is known
        self.work = 0.0  # unfinished work at `now`: the wait of a transfer arriving then
        self.idle = 0.0  # the server's idle time in [0, now]
        self.last = 0.0  # time of the latest arrival drawn
        self.times = np.empty(0)  # arrivals drawn and not yet booked
        self.waits = np.empty(0)  # their waits, for the first `p` of them (the ones served)
        self.lift = np.empty(0)  # S j - (a_j - base), j the position in `times`
        self.base = 0.0
        self.p = 0  # first arrival not yet served
        self.f = 0  # first arrival not yet booked (its start not yet counted)
        self.sync_jobs = 0
        self.served = 0  # background arrivals served (their waits computed)

    def _refill(self) -> None:
        """Draw the next BATCH gaps; keep the arrivals not yet booked at the front."""
        gaps = self.gaps()
        gaps[0] += self.last  # the cumulative sum then adds in SimPy's order: ((last + g0) + g1) + ...
        new = np.cumsum(gaps)
        self.last = float(new[-1])
        f, p = self.f, self.p
        keep = self.times[f:]
        waits = np.empty(len(keep) + BATCH)
        waits[: p - f] = self.waits[f:p]
        self.times = np.concatenate((keep, new))
        self.waits = waits
        self.base = float(self.times[0])
        self.lift = self.service * np.arange(len(self.times)) - (self.times - self.base)
        self.p, self.f = p - f, 0

    def _serve(self, k: int) -> None:
        """Serve the arrivals p..k-1 (all at or before the time being reached)."""
        p = self.p
        g = self.lift[p:k]
        c = self.work - self.service * p + (self.now - self.base)  # U_j = c + g_j
        low = np.minimum.accumulate(g)
        idle = -c - float(low[-1])
        np.minimum(low, -c, out=low)
        np.subtract(g, low, out=self.waits[p:k])  # W_j = c + g_j - min(0, c + min_{i <= j} g_i)
        self.idle += max(0.0, idle)
        self.served += k - p
        self.work = float(self.waits[k - 1]) + self.service
        self.now = float(self.times[k - 1])
        self.p = k

    def advance(self, t: float) -> None:
        """Bring the link to time t: every background arrival up to t served."""
        if not t < math.inf:  # inf or nan: SimPy would never get there; nothing to serve
            return
        while True:
            k = int(self.times.searchsorted(t, side="right"))  # >= p: the arrivals before p came by `now` <= t
            if k > self.p:
                self._serve(k)
            if k < len(self.times):
                break
            self.book(self.now)  # starts up to now are final: drop them before drawing more
            self._refill()
        gap = t - self.now
        if gap > 0:
            self.idle += max(0.0, gap - self.work)
            self.work = max(0.0, self.work - gap)
            self.now = t

    def book(self, t: float) -> None:
        """Count the served background transfers that start at or before t."""
        f, p = self.f, self.p
        if f == p:
            return
        w = self.waits[f:p]
        n = int(np.searchsorted(self.times[f:p] + w, t, side="right"))
        if n:
            self.starts += n
            if self.measuring:
                self.bg_count += n
                self.bg_wait += float(w[:n].sum())
            self.f = f + n

    def job(self, t: float, service: float) -> float:
        """A sync job arriving at t that holds the link for service (+ latency with hold): its wait."""
        self.advance(t)
        wait = self.work
        self.work = wait + service + self.held
        self.sync_jobs += 1
        if self.measuring:
            self.sync_wait += wait
            self.sync_count += 1
        return wait

    def busy(self, t: float) -> float:
        """Busy time in [0, t] (the link brought to t first)."""
        return t - self.idle

    def background_waits(self, n: int):
        """The waits of the next n background arrivals of the link alone (for md1_run), served in blocks."""
        out = []
        left = n
        while left > 0:
            if self.p == len(self.times):
                self.book(self.now)
                self._refill()
            k = min(len(self.times), self.p + left)
            first = self.p
            self._serve(k)
            out.append(self.waits[first:k].copy())
            left -= k - first
        return np.concatenate(out) if out else np.empty(0)


__all__ = ["VectorLink", "BATCH"]
