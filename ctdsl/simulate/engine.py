"""The SimPy model of one scheme, one seed (docs/simulation.md).

- Each directed edge with a background load is, with `sharing = fifo`, a
  `simpy.Resource` of capacity one: one transfer on the wire at a time, first
  come, first served; with `sharing = fair` (the default) a processor-sharing
  queue (fair_link.py): every active transfer at an equal share of the rate.
- Cross traffic on it is a Poisson stream of fixed-size transfers, rate
  lambda = rho / S, each holding the link for S = transfer / bandwidth; the
  stream runs from time 0, and training starts after a warm-up of the
  background alone, so that the first sync meets a queue near its stationary
  state.
- Training proceeds in rounds of H steps (a sync every H steps). In a round,
  every worker draws its compute time for each step (b + jitter x X), and the
  barrier waits for the slowest worker's total. Then the transform and the
  scheme's fixed overhead, then each phase of the collective, step after step.
- A step of a phase: the bytes that the step puts on each loaded edge (all the
  step's transfers that share it) join that edge's queue as one job and hold
  it for their bytes / bandwidth. A transfer finishes after its route latency
  plus the latest of: its unloaded edges' bytes / bandwidth, and, per loaded
  edge, the job's wait plus its bytes / bandwidth (cut-through: a transfer
  streams across its route, held back by its slowest hop). The step ends when
  its last transfer does. With no wait this is exactly the symbolic step time,
  and the simulation uses that number as it is, so that without load and
  jitter the simulated step equals the closed form.
- Latency (`simulation { latency = ... }`): `propagate` (the default, what the
  closed forms assume) holds a loaded link for bytes / bandwidth only, the
  latency being propagation that does not occupy it; `hold` (store-and-forward,
  request/response) holds it for the edge's latency + bytes / bandwidth, for the
  sync's jobs and the background's transfers alike (the background's arrival
  rate becomes rho / (S + latency), so rho stays its busy fraction).
- With overlap, the sync of a round runs alongside its compute, and the round
  ends when both have.

Randomness: one `numpy.random.Generator` per stream (the jitter, and each
loaded edge's arrivals), spawned from `SeedSequence([seed, run])`, so a run is a
function of its seed alone, and every scheme meets the same background traffic
and the same draws (common random numbers make the comparison between schemes
sharper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ctdsl.language.enums import Sharing
from ctdsl.language.tolerances import REL
from ctdsl.simulate.edge import LoadedEdge
from ctdsl.simulate.fair_link import FairQueue
from ctdsl.simulate.phases import run_phase
from ctdsl.simulate.plan import Edge, PhasePlan, QueuePlan, SchemePlan

DRAW_ROWS = 4096  # steps of jitter drawn at a time for one barrier (bounds memory)


@dataclass
class LinkStats:
    edge: Edge
    link: str
    rho: float
    service: float
    utilisation: float  # busy fraction over the measured window (background and sync)
    background_wait: float  # mean wait of the background transfers that started in the window
    background_count: int
    sync_wait: float  # mean wait of the sync's jobs in the window (nan if none)
    sync_count: int


@dataclass
class RunResult:
    step: float  # mean step time over the measured steps
    steps: int  # measured steps
    stragglers: float  # mean extra compute over the slowest dc's deterministic compute, per step
    queueing: float | None  # mean sync time over the sync with no waits, per step (None with overlap)
    links: list[LinkStats] = field(default_factory=list)
    events: int = 0  # SimPy events processed
    background: int = 0  # background transfers put on the wire
    exposed: dict[str, float] | None = None  # step by step (steps.py): each sync's wait per step
    flags: tuple[str, ...] = ()  # step by step: what the run met that the closed form leaves out


class LinkQueue(LoadedEdge):
    """One directed edge with background traffic: a capacity-one resource, FCFS."""

    def __init__(self, env, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
        import simpy

        super().__init__(plan, rng, hold)
        self.env = env
        self.res = simpy.Resource(env, capacity=1)
        self.completed = 0.0  # busy time of finished transfers
        self.started: float | None = None  # start of the transfer on the wire
        env.process(self._arrivals())

    def busy(self, now: float) -> float:
        return self.completed + (now - self.started if self.started is not None else 0.0)

    def _arrivals(self):
        env = self.env
        timeout, request, start = env.timeout, self.res.request, self._start
        gap = self._gap
        while True:
            yield timeout(gap())
            req = request()
            req.arrived = env.now
            req.callbacks.append(start)

    def _start(self, req) -> None:
        now = self.env.now
        self.starts += 1
        if self.measuring:
            self.bg_wait += now - req.arrived
            self.bg_count += 1
        self.started = now
        self.env.timeout(self.service, req).callbacks.append(self._end)

    def _end(self, ev) -> None:
        self.completed += self.env.now - self.started
        self.started = None
        self.res.release(ev.value)

    def sync_job(self, service: float):
        """A step's sync bytes on this edge: queue, then hold the link for bytes / bandwidth (+ latency with hold)."""
        env = self.env
        arrived = env.now
        req = self.res.request()
        yield req
        now = env.now
        wait = now - arrived
        self.started = now
        yield env.timeout(service + self.held)
        self.completed += env.now - self.started
        self.started = None
        self.res.release(req)
        if self.measuring:
            self.sync_wait += wait
            self.sync_count += 1
        return wait


def _total(xs: list[float]) -> float:
    """fsum, or the plain sum (inf, nan) where fsum raises on values beyond the float range."""
    try:
        return math.fsum(xs)
    except (OverflowError, ValueError):
        return sum(xs, 0.0)


def _draw_sums(rng, d, m: int):
    """Each worker's sum of m unit draws, drawn DRAW_ROWS steps at a time (memory: DRAW_ROWS x workers).

    A block of rows continues the same stream, so the draws are those of one (m, workers) array.
    A lognormal draw that overflows is inf, kept as such (no warning, no exception).
    """
    total = None
    with np.errstate(over="ignore", invalid="ignore"):
        for first in range(0, m, DRAW_ROWS):
            shape = (min(DRAW_ROWS, m - first), d.workers)
            if d.kind == "exponential":
                x = rng.standard_exponential(shape)
            elif d.kind == "uniform":
                x = rng.random(shape)
            else:
                x = np.exp(d.sigma * rng.standard_normal(shape))
            part = x.sum(axis=0)
            total = part if total is None else total + part
    return total


def round_lengths(period: float, warmup: int, steps: int) -> tuple[list[int], int]:
    """Steps in each round (a sync ends each), and how many rounds are warm-up.

    With a whole H every round has H steps; otherwise round j has
    floor((j + 1) H) - floor(j H), so that syncs come every H steps on average.
    """
    lengths: list[int] = []
    done = 0

    def next_len() -> int:  # REL: a product such as 3 x (1/3) may land a rounding error below a whole number
        j = len(lengths)
        return max(1, math.floor((j + 1) * period + REL) - math.floor(j * period + REL))

    while done < warmup:
        lengths.append(next_len())
        done += lengths[-1]
    warm = len(lengths)
    measured = 0
    while measured < steps:
        lengths.append(next_len())
        measured += lengths[-1]
    return lengths, warm


def background_warmup(queues: list[QueuePlan]) -> float:
    """How long the background runs alone before training starts: five relaxation times
    S / (1 - sqrt(rho))^2 of the slowest-relaxing loaded link (at least 20 S)."""
    t = 0.0
    for q in queues:
        t = max(t, 20 * q.service, 5 * q.service / (1 - math.sqrt(q.rho)) ** 2)
    return t


def link_queue(env, plan: QueuePlan, rng: np.random.Generator, hold: bool = False):
    """The SimPy model of a loaded edge: a FairQueue (processor sharing) or a FIFO LinkQueue, as its link's `sharing` says."""
    if plan.sharing is Sharing.FAIR:
        return FairQueue(env, plan, rng, hold)
    return LinkQueue(env, plan, rng, hold)


class _SchemeRun:
    """One scheme, one seed: the SimPy processes of its training, and what they measure.

    `training` runs the rounds: the barrier's compute (the slowest worker's
    steps), then (or, with overlap, alongside) the sync: the transform, then
    each phase, step by step, its jobs queued on the loaded edges.
    """

    def __init__(self, plan: SchemePlan, seed: int, run_index: int, steps: int, warmup: int, load: bool, jitter: bool, spawn_keys, hold: bool = False):
        import simpy

        self.plan = plan
        self.env = env = simpy.Environment()
        keys = spawn_keys if spawn_keys is not None else sorted(plan.queues)
        streams = np.random.SeedSequence([seed, run_index]).spawn(1 + len(keys))
        self.rng_jitter = np.random.Generator(np.random.PCG64(streams[0]))
        self.links: dict[Edge, LinkQueue] = {}
        if load:
            for i, e in enumerate(keys):
                q = plan.queues.get(e)
                if q is not None and q.rho > 0:
                    self.links[e] = link_queue(env, q, np.random.Generator(np.random.PCG64(streams[1 + i])), hold)
        self.lengths, self.warm = round_lengths(plan.period, warmup, steps)
        self.start_at = background_warmup([lq.plan for lq in self.links.values()])
        self.dcs = [d for d in plan.dcs if d.workers > 0]
        self.noisy = [d for d in self.dcs if jitter and d.jitter > 0 and d.kind is not None]
        self.compute = max(d.base for d in self.dcs) if self.dcs else 0.0
        self.free_sync = _total([ph.time for ph in plan.phases])
        # measured over the rounds after the warm-up
        self.t0 = 0.0
        self.t1 = 0.0
        self.stragglers = 0.0
        self.queueing = 0.0
        self.steps = 0
        self.busy0: dict[Edge, float] = {}

    def barrier(self, m: int) -> float:
        """The round's compute: the slowest worker's m steps."""
        if not self.noisy:
            return m * self.compute
        rng = self.rng_jitter
        slowest = 0.0
        for d in self.dcs:
            if d in self.noisy:
                worst = m * d.base + d.jitter * float(_draw_sums(rng, d, m).max())
            else:
                worst = m * d.base
            slowest = max(slowest, worst)
        return slowest

    def phase(self, ph: PhasePlan):
        """One phase of the collective: its steps, each as long as its slowest transfer."""
        yield from run_phase(self.env, [self.links.get(e) for e in ph.loaded], ph)

    def sync(self):
        if self.plan.transform + self.plan.overhead:
            yield self.env.timeout(self.plan.transform + self.plan.overhead)
        for ph in self.plan.phases:
            yield from self.phase(ph)

    def training(self):
        env, plan = self.env, self.plan
        if self.start_at > 0:
            yield env.timeout(self.start_at)
        for j, m in enumerate(self.lengths):
            if j == self.warm:
                self.t0 = env.now
                for lq in self.links.values():
                    lq.measuring = True
                    self.busy0[lq.plan.edge] = lq.busy(env.now)
            comp = self.barrier(m)
            if plan.overlap:
                yield env.all_of([env.timeout(comp), env.process(self.sync())])
            else:
                yield env.timeout(comp)
                t_sync = env.now
                yield from self.sync()
                if j >= self.warm:
                    self.queueing += (env.now - t_sync) - (plan.transform + plan.overhead + self.free_sync)
            if j >= self.warm:
                self.stragglers += comp - m * self.compute
                self.steps += m
        self.t1 = env.now

    def execute(self) -> int:
        """Run the training to its end; the number of SimPy events processed."""
        main = self.env.process(self.training())
        events = 0
        step = self.env.step
        while not main.triggered:
            step()
            events += 1
        return events

    def result(self, events: int) -> RunResult:
        n = self.steps
        window = self.t1 - self.t0
        stats = []
        for e, lq in self.links.items():
            stats.append(
                LinkStats(
                    e,
                    lq.plan.link,
                    lq.plan.rho,
                    lq.plan.service,
                    (lq.busy(self.t1) - self.busy0[e]) / window if window > 0 else math.nan,
                    lq.bg_wait / lq.bg_count if lq.bg_count else math.nan,
                    lq.bg_count,
                    lq.sync_wait / lq.sync_count if lq.sync_count else math.nan,
                    lq.sync_count,
                )
            )
        return RunResult(
            step=window / n if n else math.nan,
            steps=n,
            stragglers=self.stragglers / n if n else math.nan,
            queueing=None if self.plan.overlap else (self.queueing / n if n else math.nan),
            links=stats,
            events=events,
            background=sum(lq.starts for lq in self.links.values()),
        )


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
    """Simulate one scheme for one seed; deterministic in (seed, run_index); `hold`: a loaded
    link is held during its latency too (`simulation { latency = hold }`)."""
    sim = _SchemeRun(plan, seed, run_index, steps, warmup, load, jitter, spawn_keys, hold)
    return sim.result(sim.execute())


def md1_run(queue: QueuePlan, seed: int, run_index: int, arrivals: int, warmup: int) -> tuple[float, int]:
    """The background stream of one link alone: the mean wait of `arrivals` transfers after
    `warmup` (for --validate against rho S / (2 (1 - rho)) first come, first served, or, on a link
    shared fairly, against rho S / (1 - rho) past its S). Returns (mean wait, events)."""
    import simpy

    env = simpy.Environment()
    stream = np.random.SeedSequence([seed, run_index]).spawn(1)[0]
    lq = link_queue(env, queue, np.random.Generator(np.random.PCG64(stream)))
    events = 0
    step = env.step
    while lq.starts < warmup:
        step()
        events += 1
    lq.measuring = True
    while lq.bg_count < arrivals:
        step()
        events += 1
    return lq.bg_wait / lq.bg_count, events


__all__ = ["run", "md1_run", "RunResult", "LinkStats", "LinkQueue", "link_queue", "round_lengths", "background_warmup"]
