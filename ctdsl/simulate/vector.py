"""The numpy engine: the SimPy model of engine.py, computed with arrays instead of events.

The model is engine.py's, unchanged (docs/simulation.md, docs/simulation-engines.md):
FIFO links with a Poisson background of fixed-size transfers, the sync's jobs in
phases, every worker's jitter, a sync every H steps. What differs is how it is
computed:

- a loaded link served first come, first served (vector_link.py) solves the
  Lindley recursion over each interval between two of the sync's jobs at once:
  the background arrivals of the interval are drawn in bulk, and their waits are
  a prefix sum and a running minimum; a link shared fairly (vector_fair.py) plays
  its flows in a plain loop from the last moment it was empty, found by the same
  recursion, and measures no background wait;
- the sync's jobs are the only thing computed one at a time, in a plain loop
  (a few per round), because when each starts depends on the waits before it;
- the barrier's compute of every round is drawn up front, as blocks of rounds
  (the slowest worker's sum of each round, `_barriers`).

Random streams are keyed as the SimPy engine's: `SeedSequence([seed, run])`
spawned into the jitter's stream and one per loaded edge in `spawn_keys` order;
the background gaps and the jitter are drawn from them in the same order and
the same amounts, so a seed gives both engines the same arrivals and the same
compute times, and their results agree to rounding (tests/test_simulate_vector.py).

`RunResult.events` counts the transfers this engine simulated (background
arrivals served and the sync's jobs): it has no events.
"""

from __future__ import annotations

import math

import numpy as np

from ctdsl.language.enums import Sharing
from ctdsl.simulate.engine import RunResult, LinkStats, background_warmup, round_lengths
from ctdsl.simulate.phases import waited_step
from ctdsl.simulate.plan import Edge, PhasePlan, QueuePlan, SchemePlan
from ctdsl.simulate.vector_draws import barriers
from ctdsl.simulate.vector_fair import FairVectorLink
from ctdsl.simulate.vector_link import VectorLink


def _finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x) and x >= 0


def supports(plan: SchemePlan, hold: bool) -> str | None:
    """None when this engine runs the SimPy model of the plan exactly (in distribution, and draw for
    draw); else why not, in one line. `hold` is accepted for the call's symmetry: both latency models are."""
    if plan.step_plan is not None:
        return "its syncs overlap the backward pass, run on into the next steps, come in fragments or every step: simulated step by step"
    for d in plan.dcs:
        if not (_finite(d.base) and _finite(d.jitter)):
            return f"dc '{d.name}': its compute or jitter time is not a finite, non-negative number"
    for name, x in (("period", plan.period), ("transform", plan.transform), ("overhead", plan.overhead)):
        if not _finite(x):
            return f"the scheme's {name} is not a finite, non-negative number"
    for ph in plan.phases:
        if not all(_finite(x) for x in (ph.free_step, ph.time, *ph.service)):
            return f"phase '{ph.name}': a time that is not a finite, non-negative number"
        for tp in ph.transfers:
            if not all(_finite(x) for x in (tp.latency, tp.unloaded, *(s for _, s in tp.loaded))):
                return f"phase '{ph.name}': a transfer time that is not a finite, non-negative number"
    for q in plan.queues.values():
        if not (0 < q.rho < 1) or not (q.service > 0 and math.isfinite(q.service)) or not _finite(q.latency):
            return f"link '{q.link}': a background with rho outside (0, 1) or a service time that is not positive and finite"
    return None


class _VectorRun:
    """One scheme, one seed: the rounds of engine._SchemeRun, with VectorLink queues."""

    def __init__(self, plan: SchemePlan, seed: int, run_index: int, steps: int, warmup: int, load: bool, jitter: bool, spawn_keys, hold: bool):
        self.plan = plan
        keys = spawn_keys if spawn_keys is not None else sorted(plan.queues)
        streams = np.random.SeedSequence([seed, run_index]).spawn(1 + len(keys))
        self.rng_jitter = np.random.Generator(np.random.PCG64(streams[0]))
        self.links: dict[Edge, VectorLink | FairVectorLink] = {}
        if load:
            for i, e in enumerate(keys):
                q = plan.queues.get(e)
                if q is not None and q.rho > 0:
                    link = FairVectorLink if q.sharing is Sharing.FAIR else VectorLink
                    self.links[e] = link(q, np.random.Generator(np.random.PCG64(streams[1 + i])), hold)
        self.lengths, self.warm = round_lengths(plan.period, warmup, steps)
        self.start_at = background_warmup([lk.plan for lk in self.links.values()])
        self.dcs = [d for d in plan.dcs if d.workers > 0]
        self.noisy = [d for d in self.dcs if jitter and d.jitter > 0 and d.kind is not None]
        self.compute = max(d.base for d in self.dcs) if self.dcs else 0.0
        self.free_sync = _total([ph.time for ph in plan.phases])
        self.phases = [(ph, [self.links.get(e) for e in ph.loaded]) for ph in plan.phases]

    def phase(self, ph: PhasePlan, lks: list[VectorLink | None], now: float) -> float:
        """One phase from `now`: its steps, each as long as its slowest transfer; when it ends."""
        if not any(lks):
            return now + ph.time
        jobs = [(i, lk, s) for i, (lk, s) in enumerate(zip(lks, ph.service)) if lk is not None]
        for _ in range(ph.steps):
            t0 = now
            waits = {}
            end = -math.inf
            for i, lk, s in jobs:
                w = lk.job(t0, s)
                waits[i] = w
                end = max(end, t0 + w + (s + lk.held))  # the job's end: its start, then its time on the link
            now = end
            rest = t0 + waited_step(ph, waits) - now
            if rest > 0:
                now += rest
        return now

    def sync(self, now: float) -> float:
        plan = self.plan
        if plan.transform + plan.overhead:
            now += plan.transform + plan.overhead
        for ph, lks in self.phases:
            now = self.phase(ph, lks, now)
        return now

    def execute(self) -> RunResult:
        plan = self.plan
        comps = barriers(self.dcs, self.noisy, self.lengths, self.rng_jitter, self.compute)
        now = self.start_at
        t0, idle0 = 0.0, {}
        stragglers = queueing = 0.0
        n = 0
        for j, m in enumerate(self.lengths):
            if j == self.warm:
                t0 = now
                idle0 = self._checkpoint(now, start=True)
            comp = comps[j]
            if plan.overlap:
                now = max(now + comp, self.sync(now))
            else:
                now += comp
                t_sync = now
                now = self.sync(now)
                if j >= self.warm:
                    queueing += (now - t_sync) - (plan.transform + plan.overhead + self.free_sync)
            if j >= self.warm:
                stragglers += comp - m * self.compute
                n += m
        idle1 = self._checkpoint(now, start=False)
        return self._result(t0, now, idle0, idle1, n, stragglers, queueing)

    def _checkpoint(self, t: float, start: bool) -> dict[Edge, float]:
        """Every link brought to t, its starts up to t booked; the window opens (start) or closes there."""
        out = {}
        for e, lk in self.links.items():
            lk.advance(t)
            lk.book(t)
            lk.measuring = lk.measuring or start
            out[e] = lk.idle
        return out

    def _result(self, t0: float, t1: float, idle0, idle1, n: int, stragglers: float, queueing: float) -> RunResult:
        window = t1 - t0
        stats = []
        for e, lk in self.links.items():
            busy = window - (idle1[e] - idle0.get(e, 0.0))
            stats.append(
                LinkStats(
                    e,
                    lk.plan.link,
                    lk.plan.rho,
                    lk.plan.service,
                    busy / window if window > 0 else math.nan,
                    lk.bg_wait / lk.bg_count if lk.bg_count else math.nan,
                    lk.bg_count,
                    lk.sync_wait / lk.sync_count if lk.sync_count else math.nan,
                    lk.sync_count,
                )
            )
        return RunResult(
            step=window / n if n else math.nan,
            steps=n,
            stragglers=stragglers / n if n else math.nan,
            queueing=None if self.plan.overlap else (queueing / n if n else math.nan),
            links=stats,
            events=sum(lk.served + lk.sync_jobs for lk in self.links.values()),
            background=sum(lk.starts for lk in self.links.values()),
        )


def _total(xs: list[float]) -> float:
    """fsum, or the plain sum (inf, nan) where fsum raises on values beyond the float range (as engine.py)."""
    try:
        return math.fsum(xs)
    except (OverflowError, ValueError):
        return sum(xs, 0.0)


def run(
    plan: SchemePlan,
    seed: int,
    run_index: int,
    steps: int,
    warmup: int,
    load: bool = True,
    jitter: bool = True,
    spawn_keys: list[Edge] | None = None,
    hold: bool = False,
) -> RunResult:
    """Simulate one scheme for one seed, as engine.run does (same arguments, same result); deterministic
    in (seed, run_index). The caller checks `supports(plan, hold)` and the budgets (budget.py) first."""
    return _VectorRun(plan, seed, run_index, steps, warmup, load, jitter, spawn_keys, hold).execute()


def md1_run(queue: QueuePlan, seed: int, run_index: int, arrivals: int, warmup: int) -> tuple[float, int]:
    """As engine.md1_run: the background of one link alone, the mean wait of `arrivals` transfers after
    `warmup`; returns (mean wait, transfers simulated)."""
    stream = np.random.SeedSequence([seed, run_index]).spawn(1)[0]
    lk = VectorLink(queue, np.random.Generator(np.random.PCG64(stream)))
    lk.background_waits(warmup)
    waits = lk.background_waits(arrivals)
    return float(waits.mean()) if arrivals else math.nan, warmup + arrivals


__all__ = ["run", "supports", "md1_run"]
