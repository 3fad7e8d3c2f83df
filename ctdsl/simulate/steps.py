"""The step simulation: a scheme whose syncs overlap the backward pass, run on into the next
steps (a delay), come in fragments, or come every step beside every H (inner = dc), simulated
step by step in SimPy (docs/simulation.md, "The training step").

- **Workers.** Each dc's replicas run its chain (stepplan.py): every step, the pipeline
  schedule's makespan M (simulated once, schedule.py: it is the same every step), then the
  optimiser. A worker's jitter draw of the step delays its pipeline's start, so every path
  through the schedule, and its step, is longer by it (one draw per worker per step, as the
  closed form has it). A dc's workers are one process holding an array of clocks.
- **A sync's release.** A sync that overlaps the backward pass (window w > 0) releases its
  B buckets over the last w of the pipeline, at M - w + w/B, ..., M after the start of the
  dc's slowest worker, and the step's update waits for it. Any other sync is released whole when
  the step's update is done (after the inner sync's, for the outer sync of inner = dc), and the
  step waits for it at its end. A sync over several dcs starts each bucket when every dc has
  released it.
- **Its link.** Every instance of a sync (each fragment sync, each step's inner sync) queues
  first in, first out behind the earlier ones on one link: a bucket starts at the later of its
  release and the previous bucket's end, and runs the phases of one bucket of one fragment
  (phases.run_phase: a loaded link queues them behind its background).
- **Its deadline.** A sync triggered at step t must be done at step t + N (N its delay, 0
  without); the transform and the overhead run there too, at the end of that step, in series
  as in the closed form.

Measured: from the slowest worker's end of the warm-up's last step to its end of the run's
last, over the measured steps. Warm-up and measured steps are whole cycles (the steps after
which the syncs repeat), the warm-up at least the longest delay and a cycle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ctdsl.language.tolerances import REL
from ctdsl.simulate.engine import DRAW_ROWS, LinkStats, RunResult, background_warmup, link_queue, round_lengths
from ctdsl.simulate.phases import run_phase
from ctdsl.simulate.plan import SchemePlan
from ctdsl.simulate.stepplan import SyncSim

PILED = "a fragment or bucket sync waited behind the previous one on its link"
CROWDED = "a sync's delay lasted longer than delay x the closed form's step (its steps waited for other syncs or ran a transform)"


def whole_cycles(n: int, cycle: int) -> int:
    return cycle * max(1, math.ceil(n / cycle))


def lengths(plan: SchemePlan, warmup: int, steps: int) -> tuple[int, int]:
    """(warm-up steps, measured steps) of a run step by step (module docstring)."""
    sp = plan.step_plan
    longest = max((sy.steps_delay for sy in sp.syncs), default=0)
    warm = whole_cycles(max(warmup, longest + sp.cycle if longest else warmup), sp.cycle) if (warmup or longest) else 0
    return warm, whole_cycles(steps, sp.cycle)


def triggers(sy: SyncSim, total: int) -> list[int]:
    """The steps (1-based) at whose end a sync is triggered: every H / F steps, floor-spaced."""
    runs, _ = round_lengths(sy.period, 0, total)
    out, t = [], 0
    for n in runs:
        t += n
        if t > total:
            break
        out.append(t)
    return out


@dataclass(eq=False)
class _Instance:
    """One sync (one fragment's, one step's inner sync) in flight."""

    k: int  # which sync of the plan
    trigger: int
    deadline: int
    members: list[int]
    done: object
    arrived: dict[int, np.ndarray] = field(default_factory=dict)  # dc -> its release times
    end: float = math.nan
    queueing: float = 0.0
    piled: bool = False
    straggle: float = 0.0
    ref: float = -math.inf  # where its delay counts from: the slowest member's backward end (buckets) or release


class _StepRun:
    def __init__(self, plan: SchemePlan, seed: int, run_index: int, steps: int, warmup: int, load: bool, jitter: bool, spawn_keys, hold: bool):
        import simpy

        self.plan = plan
        self.sp = plan.step_plan
        self.env = env = simpy.Environment()
        keys = spawn_keys if spawn_keys is not None else sorted(plan.queues)
        streams = np.random.SeedSequence([seed, run_index]).spawn(1 + len(keys))
        self.links: dict = {}
        if load:
            for i, e in enumerate(keys):
                q = plan.queues.get(e)
                if q is not None and q.rho > 0:
                    self.links[e] = link_queue(env, q, np.random.Generator(np.random.PCG64(streams[1 + i])), hold)
        self.start_at = background_warmup([lq.plan for lq in self.links.values()])
        self.warm, measured = lengths(plan, warmup, steps)
        self.total = self.warm + measured
        self.active = [i for i, d in enumerate(plan.dcs) if d.workers > 0]
        dc_streams = streams[0].spawn(len(plan.dcs))
        self.rngs = [np.random.Generator(np.random.PCG64(s)) for s in dc_streams]
        self.noisy = {i for i in self.active if jitter and plan.dcs[i].jitter > 0 and plan.dcs[i].kind is not None}
        self.trig = [set(triggers(sy, self.total)) for sy in self.sp.syncs]
        # ready = layer: the n-th sync of a sync's triggers is fragment n mod F's
        self.nth = [{t: n for n, t in enumerate(triggers(sy, self.total))} for sy in self.sp.syncs]
        self.instances: dict[tuple, _Instance] = {}
        self.last: dict[tuple, _Instance] = {}  # the latest instance on each sync's link (FIFO)
        self.due: dict[tuple[int, int], list[_Instance]] = {}  # (dc, step) -> instances it waits for there
        self.ends: dict[int, list[float]] = {i: [] for i in self.active}  # each dc's slowest worker's end of each step
        self.waits: dict[tuple[int, int], float] = {}  # (sync, step) -> the longest wait a dc had for it
        self.crowded = False
        self.busy0: dict = {}

    # ---- jitter ---------------------------------------------------------------------------------

    def draws(self, i: int):
        """Each step's jitter of dc i's workers, DRAW_ROWS steps drawn at a time."""
        d = self.plan.dcs[i]
        shape_rows = (DRAW_ROWS, d.workers)
        rng = self.rngs[i]
        while True:
            with np.errstate(over="ignore", invalid="ignore"):
                if d.kind == "exponential":
                    x = rng.standard_exponential(shape_rows)
                elif d.kind == "uniform":
                    x = rng.random(shape_rows)
                else:
                    x = np.exp(d.sigma * rng.standard_normal(shape_rows))
            for row in x:
                yield d.jitter * row

    # ---- syncs ---------------------------------------------------------------------------------

    def instance(self, k: int, t: int, i: int) -> _Instance:
        sy = self.sp.syncs[k]
        key = (k, t, i) if sy.per_dc else (k, t)
        inst = self.instances.get(key)
        if inst is None:
            members = [i] if sy.per_dc else list(self.active)
            deadline = t + sy.steps_delay
            inst = self.instances[key] = _Instance(k, t, deadline, members, self.env.event())
            for j in members:
                self.due.setdefault((j, deadline), []).append(inst)
        return inst

    def release(self, inst: _Instance, i: int, base: float, straggle: float, ref: float | None = None):
        """dc i's release of the instance, its slowest worker at `base`; the job starts with the last;
        `ref` where its delay counts from, when not `base` (a fragment ready per layer before the step's end)."""
        env = self.env
        if base > env.now:
            yield env.timeout(base - env.now)
        sy, chain = self.sp.syncs[inst.k], self.plan.chains[i]
        if sy.window > 0:
            w = chain.compute
            times = base + chain.makespan - w + w * np.arange(1, sy.buckets + 1) / sy.buckets
        else:
            times = np.full(1, base)
        inst.arrived[i] = times
        inst.ref = max(inst.ref, (base if ref is None else ref) + (chain.makespan if sy.window > 0 else 0.0))
        inst.straggle = max(inst.straggle, straggle)
        if len(inst.arrived) == len(inst.members):
            env.process(self.job(inst))

    def job(self, inst: _Instance):
        env, sy = self.env, self.sp.syncs[inst.k]
        release = np.max(np.stack(list(inst.arrived.values())), axis=0)
        key = (inst.k, inst.members[0]) if sy.per_dc else (inst.k,)
        prev = self.last.get(key)
        self.last[key] = inst
        if prev is not None and not prev.done.processed:
            yield prev.done
        if env.now > release[0] * (1 + REL) + REL:
            inst.piled = True
        first = max(env.now, float(release[0]))
        only = f"{self.plan.dcs[inst.members[0]].name}." if sy.per_dc else None
        free = math.fsum(ph.time for ph in sy.bucket)
        queues = [[self.links.get(e) if only is None or (e[0].startswith(only) and e[1].startswith(only)) else None for e in ph.loaded] for ph in sy.bucket]
        if not any(lq for lqs in queues for lq in lqs):
            # no bucket meets a queue: each starts at the later of its release and the previous one's
            # end and takes its phases' time, computed bucket by bucket without an event each
            t = env.now
            for r in release.tolist():
                t = (r if r > t else t) + free
            yield env.timeout(t - env.now)
        else:
            for r in release.tolist():
                if r > env.now:
                    yield env.timeout(r - env.now)
                t0 = env.now
                for ph, lqs in zip(sy.bucket, queues):
                    yield from run_phase(env, lqs, ph)
                inst.queueing += (env.now - t0) - free
        inst.end = env.now
        self.span(sy.name, first, env.now)
        inst.done.succeed()

    def wait(self, inst: _Instance, end: np.ndarray, i: int, s: int):
        if not inst.done.processed:
            yield inst.done
        before = float(end.max())
        sy = self.sp.syncs[inst.k]
        if sy.steps_delay > 0 and (sy.exposed or 0.0) > 0:  # did its delay last longer than its steps?
            # the closed form's steps: the inner step and what every-step syncs expose in it (inner = dc)
            beside = sum(o.per_step or 0.0 for o in self.sp.syncs if o is not sy and o.every == 1)
            slack = sy.steps_delay * (self.plan.chains[i].step + beside)
            self.crowded = self.crowded or before - inst.ref > slack * (1 + 1e-9) + 1e-12
        out = np.maximum(end, inst.end)
        key = (inst.k, s)
        self.waits[key] = max(self.waits.get(key, 0.0), max(0.0, inst.end - before))
        return out

    # ---- one dc's workers -------------------------------------------------------------------------

    def workers(self, i: int):
        env, plan, sp = self.env, self.plan, self.sp
        chain, n = plan.chains[i], plan.dcs[i].workers
        clock = np.full(n, self.start_at)
        acc = np.zeros(n)  # each worker's jitter since the last sync that levelled it
        draws = self.draws(i) if i in self.noisy else None
        syncs = list(enumerate(sp.syncs))
        for s in range(1, self.total + 1):
            d = next(draws) if draws is not None else np.zeros(n)
            acc = acc + d
            pipe = clock + d
            end = pipe + chain.makespan
            for k, sy in syncs:  # buckets released during the backward pass
                if sy.window > 0 and s in self.trig[k]:
                    inst = self.instance(k, s, i)
                    yield from self.release(inst, i, float(pipe.max()), float(acc.max()))
                    acc = self._reset(acc, inst)
            for inst in list(self.due.get((i, s), [])):  # the update waits for them
                if sp.syncs[inst.k].window > 0:
                    end = yield from self.wait(inst, end, i, s)
            end = end + chain.update
            for k, sy in syncs:  # released whole after the update, in order: the inner sync before the outer
                if sy.window == 0 and s in self.trig[k]:
                    inst = self.instance(k, s, i)
                    early = sy.early[self.nth[k][s] % len(sy.early)] if sy.early else 0.0
                    yield from self.release(inst, i, float(end.max()) - early, float(acc.max()), float(end.max()))
                    acc = self._reset(acc, inst)
                if sy.window == 0:
                    for inst in [x for x in self.due.get((i, s), []) if x.k == k]:
                        end = yield from self.wait(inst, end, i, s)
            due = self.due.pop((i, s), [])
            end = end + math.fsum(sp.syncs[inst.k].block for inst in due)
            clock = end
            self.ends[i].append(float(clock.max()))

    def _reset(self, acc: np.ndarray, inst: _Instance) -> np.ndarray:
        """A sync waited for by every dc (at once, no delay) is a barrier: the jitter since counts from it.
        A dc's own inner sync levels its workers."""
        sy = self.sp.syncs[inst.k]
        if sy.per_dc:
            return np.full_like(acc, acc.max())
        return np.zeros_like(acc)

    # ---- the run -----------------------------------------------------------------------------------

    def launch(self):
        """Start the dcs' processes; the event that fires when every one has run its steps."""
        env = self.env
        procs = [env.process(self.workers(i)) for i in self.active]
        env.process(self._start_measuring())
        return env.all_of(procs)

    def execute(self) -> RunResult:
        main = self.launch()
        events = 0
        while not main.triggered:
            self.env.step()
            events += 1
        return self.result(events)

    def span(self, name: str, start: float, end: float) -> None:
        """A sync's instance ran on its link from `start` to `end` (a recorder's hook: trace.py)."""

    def _start_measuring(self):
        if self.start_at > 0:
            yield self.env.timeout(self.start_at)
        for e, lq in self.links.items():
            lq.measuring = True
            self.busy0[e] = lq.busy(self.env.now)

    def result(self, events: int) -> RunResult:
        measured = self.total - self.warm
        t0 = max((self.ends[i][self.warm - 1] for i in self.active), default=self.start_at) if self.warm else self.start_at
        t1 = max((self.ends[i][-1] for i in self.active), default=self.start_at)
        mine = [inst for inst in self.instances.values() if self.warm < inst.trigger <= self.total]
        strag = math.fsum(inst.straggle for inst in mine if not self.sp.syncs[inst.k].per_dc)
        queue = math.fsum(inst.queueing for inst in mine if inst.done.processed)
        exposed = {}
        for k, sy in enumerate(self.sp.syncs):
            exposed[sy.name] = math.fsum(w for (j, s), w in self.waits.items() if j == k and self.warm < s <= self.total) / measured
        flags = []
        if any(inst.piled for inst in self.instances.values()):
            flags.append(PILED)
        if self.crowded:
            flags.append(CROWDED)
        stats = []
        window = t1 - t0
        span = t1 - self.start_at  # the links are measured from the training's start
        for e, lq in self.links.items():
            use = (lq.busy(self.env.now) - self.busy0.get(e, 0.0)) / span if span > 0 else math.nan
            bg = lq.bg_wait / lq.bg_count if lq.bg_count else math.nan
            sync = lq.sync_wait / lq.sync_count if lq.sync_count else math.nan
            stats.append(LinkStats(e, lq.plan.link, lq.plan.rho, lq.plan.service, use, bg, lq.bg_count, sync, lq.sync_count))
        return RunResult(
            step=window / measured,
            steps=measured,
            stragglers=strag / measured,
            queueing=None if self.plan.overlap else queue / measured,
            links=stats,
            events=events,
            background=sum(lq.starts for lq in self.links.values()),
            exposed=exposed,
            flags=tuple(flags),
        )


def run(
    plan: SchemePlan,
    seed: int,
    run_index: int,
    steps: int,
    warmup: int,
    load: bool = True,
    jitter: bool = True,
    spawn_keys=None,
    hold: bool = False,
) -> RunResult:
    """Simulate one scheme step by step for one seed (engine.run's arguments and result);
    deterministic in (seed, run_index)."""
    return _StepRun(plan, seed, run_index, steps, warmup, load, jitter, spawn_keys, hold).execute()


__all__ = ["run", "lengths", "triggers", "PILED", "CROWDED"]
