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
from typing import Callable

from ctdsl import limits
from ctdsl.language import schema as S
from ctdsl.language.enums import SimLatency
from ctdsl.model import expr as E
from ctdsl.model.entities import Spec
from ctdsl.results import display as results_display
from ctdsl.simulate import display, engine
from ctdsl.simulate.budget import check_budget, check_rounds
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
            n = len(s.runs)
            parts.append(f"scheme '{name}' " + ("no seed" if n == 0 else "seed 0" if n == 1 else f"seeds 0-{n - 1}"))
        return ", ".join(parts) or "no seed"


def spawn_keys(spec: Spec) -> list[Edge]:
    """Every loaded edge of the spec, in one order: edge i always draws from stream i, whichever
    schemes are simulated (so --scheme X gives X the numbers it has in a full run)."""
    return loaded_edges(spec)


def simulate(
    spec: Spec,
    cfg: Settings,
    names: list[str] | None = None,
    progress: Progress | None = None,
    load: bool = True,
    jitter: bool = True,
    plans: dict[str, SchemePlan] | None = None,
    on_seed: OnSeed | None = None,
) -> SimResult:
    """Every scheme over every seed; `on_seed`, when given, gets the runs finished so far after each one
    (the schemes done and the one running, each summarised over its seeds so far)."""
    plans = plans if plans is not None else build_plans(spec, names)
    if load:  # CT608 before anything runs
        check_budget(spec, plans, cfg.steps, cfg.warmup)
    else:
        check_rounds(spec, plans)
    keys = spawn_keys(spec)
    total = len(plans) * cfg.seeds
    done = 0
    out: dict[str, SchemeSim] = {}
    start = time.monotonic()
    for name, plan in plans.items():
        runs = []
        for k in range(cfg.seeds):
            runs.append(engine.run(plan, cfg.seed, k, cfg.steps, cfg.warmup, load=load, jitter=jitter, spawn_keys=keys, hold=cfg.latency is SimLatency.HOLD))
            done += 1
            if progress is not None:
                progress(done, total, name)
            if on_seed is not None:
                on_seed(SimResult(spec, cfg, {**out, name: summarise(plan, list(runs))}), done, total)  # a copy: runs grows
            if done < total and time.monotonic() - start > limits.MAX_SIM_WALL_SECONDS:
                out[name] = summarise(plan, runs)
                left = [n for n in plans if n not in out]
                why = (
                    f"stopped after {limits.MAX_SIM_WALL_SECONDS:g} s (the wall budget): {done} of {total} runs done; "
                    f"scheme '{name}' has {len(runs)} of {cfg.seeds} seeds" + (f", not simulated: {', '.join(left)}" if left else "")
                )
                return SimResult(spec, cfg, out, why)
        out[name] = summarise(plan, runs)
    return SimResult(spec, cfg, out)


def summarise(plan: SchemePlan, runs: list[engine.RunResult]) -> SchemeSim:
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
    return SchemeSim(plan, runs, step, estimate([r.stragglers for r in runs]), queueing, ttt, links)


__all__ = ["Settings", "settings", "simulate", "SimResult", "SchemeSim", "LinkSummary", "spawn_keys"]
