"""Run every scheme of a spec over K seeds and summarise: `simulate(spec, ...)`.

Settings come from the command line, else the spec's `simulation` block, else
the defaults of that block's schema (100 measured steps after 10 of warm-up,
10 seeds). Each seed runs every scheme (common random numbers); per scheme the
K per-seed means become an `Estimate` with a t interval (stats.py).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ctdsl import limits
from ctdsl.language import schema as S
from ctdsl.language.enums import SimLatency
from ctdsl.model import expr as E
from ctdsl.model.entities import Spec
from ctdsl.results import display as results_display
from ctdsl.simulate import display, engine, pool
from ctdsl.simulate import tasks as T
from ctdsl.simulate.budget import check_budget, check_jobs, check_rounds
from ctdsl.simulate.plan import Edge, SchemePlan, build_plans, loaded_edges
from ctdsl.simulate.stats import Estimate, estimate

Progress = Callable[[int, int, str], None]  # (done, total, what)
OnSeed = Callable[["SimResult", int, int], None]  # (every run finished so far, runs done, runs in all)


@dataclass(frozen=True)
class Settings:
    steps: int
    seeds: int
    warmup: int
    seed: int = 0  # base seed: run k of a scheme uses SeedSequence([seed, k])
    latency: SimLatency = SimLatency.PROPAGATE  # hold: a loaded link is held during a transfer's latency too
    engine: str = "auto"  # auto: the numpy engine where it models the plan exactly, else SimPy; simpy; numpy


def settings(spec: Spec, steps: int | None = None, seeds: int | None = None, warmup: int | None = None, seed: int = 0) -> Settings:
    """Command-line values first, then the spec's simulation block, then the schema's defaults."""
    env = spec.defaults()
    block = spec.simulation
    out = {}
    for key, given in (("steps", steps), ("seeds", seeds), ("warmup", warmup)):
        if given is not None:
            out[key] = int(given)
            continue
        expr = getattr(block, key) if block is not None else None
        if expr is not None:
            out[key] = int(round(E.evaluate(expr, env)))
        else:
            out[key] = int(S.KINDS["simulation"][key].default)
    latency = block.latency if block is not None else SimLatency.PROPAGATE
    return Settings(out["steps"], out["seeds"], out["warmup"], seed, latency)


@dataclass
class LinkSummary:
    edge: Edge
    link: str
    rho: float
    service: float
    md1_wait: float  # closed form
    utilisation: Estimate
    background_wait: Estimate
    sync_wait: Estimate | None  # None when no sync job fell in any measured window


@dataclass
class SchemeSim:
    plan: SchemePlan
    runs: list[engine.RunResult]
    step: Estimate
    stragglers: Estimate
    queueing: Estimate | None
    time_to_target: Estimate | None
    links: list[LinkSummary] = field(default_factory=list)
    seeds: list[int] | None = None  # the run index of each of `runs`; None: 0, 1, ... in order
    engine: str = "simpy"  # the engine that ran it: simpy, or numpy (its events count transfers)
    engine_note: str | None = None  # why SimPy ran it where the numpy engine was asked for
    syncs: dict[str, Estimate] | None = None  # step by step: each sync's wait per step

    @property
    def seed_list(self) -> list[int]:
        return list(self.seeds) if self.seeds is not None else list(range(len(self.runs)))

    @property
    def events(self) -> int:
        return sum(r.events for r in self.runs)

    def __repr__(self) -> str:
        return display.scheme_sim_repr(self)

    @property
    def growth(self) -> float:
        """Simulated step over the closed-form step with no load and no jitter."""
        return self.step.mean / self.plan.free_step if self.plan.free_step else math.nan


@dataclass
class SimResult:
    spec: Spec
    settings: Settings
    schemes: dict[str, SchemeSim]
    stopped: str | None = None  # why the runs stopped before every seed of every scheme ran

    @property
    def events(self) -> int:
        return sum(s.events for s in self.schemes.values())

    def __repr__(self) -> str:
        return display.sim_repr(self)

    def _repr_html_(self) -> str:
        return results_display.render("simulation", "html", self)

    def _repr_markdown_(self) -> str:
        return results_display.render("simulation", "markdown", self)

    def kept(self) -> str:
        """The seeds this result holds, by scheme: "scheme 'a' seeds 0-9, scheme 'b' seed 0"."""
        parts = []
        for name, s in self.schemes.items():
            parts.append(f"scheme '{name}' " + seed_ranges(s.seed_list))
        return ", ".join(parts) or "no seed"


def seed_ranges(seeds: list[int]) -> str:
    """[0, 1, 2, 5] -> "seeds 0-2, 5"; [0] -> "seed 0"; [] -> "no seed"."""
    if not seeds:
        return "no seed"
    spans: list[list[int]] = []
    for k in sorted(seeds):
        if spans and k == spans[-1][1] + 1:
            spans[-1][1] = k
        else:
            spans.append([k, k])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return ("seed " if len(seeds) == 1 else "seeds ") + text


def spawn_keys(spec: Spec) -> list[Edge]:
    """Every loaded edge of the spec, in one order: edge i always draws from stream i, whichever
    schemes are simulated (so --scheme X gives X the numbers it has in a full run)."""
    return loaded_edges(spec)


Backend = Callable[[list[T.Task], "pool.Fn | None", "pool.Admit"], Iterator[tuple[T.Task, engine.RunResult]]]


def simulate(
    spec: Spec,
    cfg: Settings,
    names: list[str] | None = None,
    progress: Progress | None = None,
    load: bool = True,
    jitter: bool = True,
    plans: dict[str, SchemePlan] | None = None,
    on_seed: OnSeed | None = None,
    jobs: int = 1,
    backend: Backend | None = None,
    stop: Callable[[], bool] | None = None,
    execute: "pool.Fn | None" = None,
) -> SimResult:
    """Every scheme over every seed, as (scheme, seed) tasks over `jobs` processes (pool.py), or on
    `backend` (a Dask client's, cluster.py). `on_seed`, when given, gets the runs finished so far after
    each one; `stop()` true: no further run starts, the result holds the runs finished. The result is
    assembled in task order: the same numbers for any `jobs` and any backend. A run that fails raises
    TaskError naming it, its `partial` the result of the runs finished."""
    plans = plans if plans is not None else build_plans(spec, names)
    if load:  # CT608 before anything runs
        check_budget(spec, plans, cfg.steps, cfg.warmup)
    else:
        check_rounds(spec, plans)
        check_jobs(spec, plans, cfg.steps, cfg.warmup)
    work = T.make_tasks(plans, cfg.seed, cfg.seeds, cfg.steps, cfg.warmup, load, jitter, spawn_keys(spec), cfg.latency is SimLatency.HOLD, engine=cfg.engine)
    runs = Collector(spec, cfg, plans)

    def each(task: T.Task, result: engine.RunResult) -> None:
        runs.add(task.scheme, task.run, result)
        if progress is not None:
            progress(runs.done, len(work), task.scheme)
        if on_seed is not None:
            on_seed(runs.result(), runs.done, len(work))

    try:
        over = run_tasks(work, each, jobs, backend, stop, execute)
    except T.TaskError as err:
        err.partial = runs.result()
        raise
    res = runs.result()
    if over and runs.done < len(work):
        res.stopped = runs.why_stopped(len(work))
    return res


def run_tasks(
    work: list[T.Task],
    each: Callable[[T.Task, engine.RunResult], None],
    jobs: int = 1,
    backend: Backend | None = None,
    stop: Callable[[], bool] | None = None,
    execute: "pool.Fn | None" = None,
) -> bool:
    """Every task, each result handed to `each` as it arrives; no further task starts once `stop()` is
    true or the wall budget is spent. True when the wall budget stopped it."""
    start, over = time.monotonic(), []

    def admit() -> bool:
        if stop is not None and stop():
            return False
        if time.monotonic() - start > limits.MAX_SIM_WALL_SECONDS:
            over.append(True)
            return False
        return True

    source = backend(work, execute, admit) if backend is not None else pool.stream(work, jobs, execute, admit)
    try:
        for task, result in source:
            each(task, result)
    finally:  # now, not when the generator is collected: a Ctrl-C in `each` cancels the runs at once
        source.close()
    return bool(over)


class Collector:
    """The runs finished so far, by scheme and seed, summarised in seed order (each scheme again only
    when a run of it arrives)."""

    def __init__(self, spec: Spec, cfg: Settings, plans: dict[str, SchemePlan]):
        self.spec, self.cfg, self.plans = spec, cfg, plans
        self.runs: dict[str, dict[int, engine.RunResult]] = {n: {} for n in plans}
        self.summaries: dict[str, SchemeSim] = {}
        self.done = 0

    def add(self, scheme: str, k: int, result: engine.RunResult) -> None:
        self.runs[scheme][k] = result
        self.summaries.pop(scheme, None)
        self.done += 1

    def result(self) -> SimResult:
        out = {}
        for name, by_seed in self.runs.items():
            if not by_seed:
                continue
            if name not in self.summaries:
                seeds = sorted(by_seed)
                summary = summarise(self.plans[name], [by_seed[k] for k in seeds], seeds)
                hold = self.cfg.latency is SimLatency.HOLD
                summary.engine = T.engine_of(self.plans[name], self.cfg.engine, hold)
                summary.engine_note = T.engine_note(self.plans[name], self.cfg.engine, hold)
                self.summaries[name] = summary
            out[name] = self.summaries[name]
        return SimResult(self.spec, self.cfg, out)

    def why_stopped(self, total: int) -> str:
        short = [f"scheme '{n}' has {len(r)} of {self.cfg.seeds} seeds" for n, r in self.runs.items() if 0 < len(r) < self.cfg.seeds]
        left = [n for n, r in self.runs.items() if not r]
        return (
            f"stopped after {limits.MAX_SIM_WALL_SECONDS:g} s (the wall budget): {self.done} of {total} runs done"
            + "".join(f"; {s}" for s in short)
            + (f", not simulated: {', '.join(left)}" if left else "")
        )


def summarise(plan: SchemePlan, runs: list[engine.RunResult], seeds: list[int] | None = None) -> SchemeSim:
    step = estimate([r.step for r in runs])
    queueing = None if plan.overlap else estimate([r.queueing for r in runs])
    ttt = step.scaled(plan.steps_to_target) if plan.steps_to_target is not None else None
    links = []
    for i, first in enumerate(runs[0].links if runs else []):
        per = [r.links[i] for r in runs]
        sync = [p.sync_wait for p in per if not math.isnan(p.sync_wait)]
        q = plan.queues[first.edge]
        links.append(
            LinkSummary(
                first.edge,
                first.link,
                first.rho,
                first.service,
                q.md1_wait,
                estimate([p.utilisation for p in per]),
                estimate([p.background_wait for p in per if not math.isnan(p.background_wait)]),
                estimate(sync) if sync else None,
            )
        )
    out = SchemeSim(plan, runs, step, estimate([r.stragglers for r in runs]), queueing, ttt, links, seeds)
    if runs and all(r.exposed is not None for r in runs):
        out.syncs = {k: estimate([r.exposed[k] for r in runs]) for k in runs[0].exposed}
    return out


__all__ = ["Settings", "settings", "simulate", "SimResult", "SchemeSim", "LinkSummary", "spawn_keys", "Collector", "seed_ranges", "run_tasks"]
