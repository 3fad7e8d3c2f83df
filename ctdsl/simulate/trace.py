"""A short recorded simulation run, for the explorer's animation (`ctdsl explore --simulate`)
and the trace `ctdsl simulate --trace` writes (`ctdsl.report.trace_event`).

`record(spec)` runs every scheme for one seed (the spec's base seed 0, run 0: the
first seed `ctdsl simulate` runs) with the spec's simulation settings capped to
MAX_STEPS measured steps after at most MAX_WARMUP warm-up steps, and records,
per scheme, from the start of training (after the background's warm-up):

- each round's start, end and steps (its step time is (end - start) / steps);
- each sync job on each loaded WAN direction: when it joined the queue, went on
  the wire and left it;
- each phase of the collective: its start and end;
- each loaded WAN direction's queue length (waiting + on the wire), as the
  longest queue in each of BINS equal slices of the run.

`base` and `schemes` choose the run (`ctdsl simulate`'s --steps, --warmup,
--seed and --scheme; the caps above still hold).

At most MAX_POINTS queue changes and MAX_JOBS jobs and phases are kept per
scheme (the rest are dropped, and `clipped` says so). The recording does not change the
run: the traced run is the engine's own, with its jobs wrapped and its events
watched from outside (its result equals `engine.run`'s for the same seed).
The output is plain lists and dicts (names raw; the report encodes them).
"""

from __future__ import annotations

from ctdsl.language.enums import SimLatency
from ctdsl.model.entities import Spec
from ctdsl.simulate import engine, steps
from ctdsl.simulate.budget import check_budget
from ctdsl.simulate.plan import build_plans
from ctdsl.simulate.runner import Settings, settings, spawn_keys

MAX_STEPS = 20  # measured steps recorded per scheme
MAX_WARMUP = 2  # warm-up steps before them
MAX_POINTS = 200_000  # queue-length changes kept per scheme (all its loaded directions together)
BINS = 300  # slices of the run, per direction, each drawn as its longest queue
MAX_JOBS = 600  # sync jobs kept per scheme
DIGITS = 9  # significant digits of the drawn times (the step times are kept exact)


def _r(x: float) -> float:
    return float(f"{x:.{DIGITS}g}")


class _Recorder:
    """What a recorded run keeps, whichever engine runs it: rounds, the loaded links' jobs and queue
    lengths, the phases' spans (each list capped; `clipped` says when one was)."""

    def _record(self) -> None:
        self.rounds: list[list[float]] = []  # [start, steps]
        self.jobs: list[list[float]] = []  # [direction index, arrived, start, end]
        self.phase_spans: list[list] = []  # [phase name, start, end]
        self.points: list[list[float]] = []  # [direction index, time, queue length]
        self.clipped = False
        self.edges = list(self.links)
        for i, lq in enumerate(self.links.values()):
            lq.sync_job = self._wrap(i, lq.sync_job)

    def _keep(self, into: list, row: list, cap: int) -> None:
        if len(into) < cap:
            into.append(row)
        else:
            self.clipped = True

    def _wrap(self, i: int, job):
        env = self.env

        def recorded(service):
            arrived = env.now
            wait = yield from job(service)
            self._keep(self.jobs, [i, arrived, arrived + wait, env.now], MAX_JOBS)
            return wait

        return recorded


class TracedRun(_Recorder, engine._SchemeRun):
    """The engine's run of one scheme and seed, recording as it goes (see the module's docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._record()

    def barrier(self, m: int) -> float:
        self.rounds.append([self.env.now, m])
        return super().barrier(m)

    def phase(self, ph):
        t = self.env.now
        yield from super().phase(ph)
        self._keep(self.phase_spans, [ph.name, t, self.env.now], MAX_JOBS)

    def execute(self) -> int:
        return _watch(self, self.env.process(self.training()))


class TracedStepRun(_Recorder, steps._StepRun):
    """The step engine's run of one scheme and seed (steps.py), recorded as TracedRun records the round
    engine's: each step a round of one step (from the slowest worker's end of the step before to its
    end of this one), each sync instance a phase span, the jobs and queues of the loaded links."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._record()
        self.t1 = self.start_at

    def span(self, name: str, start: float, end: float) -> None:
        self._keep(self.phase_spans, [name, start, end], MAX_JOBS)

    def execute(self) -> int:
        main = self.launch()
        events = _watch(self, main)
        ends = [max(self.ends[i][k] for i in self.active) for k in range(self.total)]
        self.rounds = [[start, 1] for start in [self.start_at, *ends[:-1]]]
        self.t1 = ends[-1] if ends else self.start_at
        return events


def _watch(tr, main) -> int:
    """Step the run's events to its end, keeping each loaded direction's queue length as it changes."""
    env, events = tr.env, 0
    last = [None] * len(tr.edges)
    queues = list(tr.links.values())
    while not main.triggered:
        env.step()
        events += 1
        if env.now < tr.start_at:
            continue
        for i, lq in enumerate(queues):
            q = lq.active if hasattr(lq, "active") else len(lq.res.queue) + len(lq.res.users)
            if q != last[i]:
                last[i] = q
                tr._keep(tr.points, [i, env.now, q], MAX_POINTS)
    return events


def traced(plan, *args):
    """The recorder of a plan's run: step by step where `ctdsl simulate` runs it so, else in rounds."""
    return (TracedStepRun if plan.step_plan is not None else TracedRun)(plan, *args)


def _bins(tr: TracedRun, t0: float) -> list[list[int]]:
    """Per direction, the longest queue in each of BINS slices of [t0, t1] (a queue held across a slice counts in it)."""
    width = (tr.t1 - t0) / BINS if tr.t1 > t0 else 1.0
    out = [[0] * BINS for _ in tr.edges]
    held = [0] * len(tr.edges)
    at = [0] * len(tr.edges)  # the slice of each direction's last change
    for i, t, q in tr.points:
        b = min(BINS - 1, int((t - t0) / width))
        row = out[i]
        for k in range(at[i], b):  # the queue held since the last change
            row[k] = max(row[k], held[i])
        row[b] = max(row[b], q, held[i] if at[i] == b else 0)
        held[i], at[i] = q, b
    for i, row in enumerate(out):
        for k in range(at[i], BINS):
            row[k] = max(row[k], held[i])
    return out


def _scheme(plan, tr: TracedRun, res: engine.RunResult) -> dict:
    t0 = tr.start_at
    ends = [r[0] for r in tr.rounds[1:]] + [tr.t1]
    rounds = [[_r(s - t0), _r(e - t0), m, (e - s) / m] for (s, m), e in zip(tr.rounds, ends)]
    return {
        "name": plan.name,
        "label": plan.label or plan.name,
        "closed": plan.step,
        "free": plan.free_step,
        "end": _r(tr.t1 - t0),
        "warm": tr.warm,
        "rounds": rounds,  # [start, end, steps, step time]
        "mean": res.step,
        "steps": res.steps,
        "directions": [{"from": a, "to": b, "link": tr.links[(a, b)].plan.link, "rho": tr.links[(a, b)].plan.rho} for a, b in tr.edges],
        "jobs": [[i, _r(a - t0), _r(s - t0), _r(e - t0)] for i, a, s, e in tr.jobs],
        "phases": [[n, _r(s - t0), _r(e - t0)] for n, s, e in tr.phase_spans],
        "bin": _r((tr.t1 - t0) / BINS),
        "queue": _bins(tr, t0),
        "clipped": tr.clipped,
    }


def record(spec: Spec, base: Settings | None = None, schemes: list[str] | None = None) -> dict:
    """The recorded run of every scheme, or of `schemes` (plain data for the explorer's page and the trace).

    `base`: the simulation's settings (`ctdsl.simulate.runner.settings`; default the spec's).
    """
    base = base or settings(spec)
    steps, warmup = min(base.steps, MAX_STEPS), min(base.warmup, MAX_WARMUP)
    plans = build_plans(spec, schemes)
    check_budget(spec, plans, steps, warmup)
    keys = spawn_keys(spec)
    hold = base.latency is SimLatency.HOLD
    out = []
    for plan in plans.values():
        tr = traced(plan, base.seed, 0, steps, warmup, True, True, keys, hold)
        res = tr.result(tr.execute())
        out.append(_scheme(plan, tr, res))
    return {"seed": base.seed, "run": 0, "steps": steps, "warmup": warmup, "latency": base.latency.value, "schemes": out}


__all__ = ["record", "traced", "TracedRun", "TracedStepRun", "MAX_STEPS", "MAX_WARMUP", "MAX_POINTS", "MAX_JOBS", "BINS"]
