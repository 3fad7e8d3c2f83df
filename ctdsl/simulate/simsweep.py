"""A simulation sweep: every scheme simulated at each point of a grid of params, beside its closed form.

`ctdsl simulate --sweep name=lo:hi:n[:log]` (the sweep command's grid: the same
parsing, the same checks of each end, `numeric.grid.Grid`). At each point the
spec is checked again with the swept params set to the point's values (the
caller's `spec_at`, as `--set` would), its plans built and its runs' event
budget checked (CT608) before anything runs; then the (point, scheme, seed)
tasks of every point go over the same processes or cluster as a plain run
(runner.run_tasks), and each point's runs are assembled in seed order. Point
p's runs draw from the same streams as a plain run of that point's spec: the
result at a point equals `ctdsl simulate --set` at it, bit for bit.

A grid has at most MAX_SIM_SWEEP_POINTS points (CT608): each is a whole
simulation, and its plans are built from the symbolic costs first.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import prod
from typing import Callable

from ctdsl import limits
from ctdsl import units as U
from ctdsl.diagnostics import Diagnostic
from ctdsl.failure import Failure
from ctdsl.language.enums import SimLatency
from ctdsl.model.entities import Spec
from ctdsl.simulate import engine, pool
from ctdsl.simulate import tasks as T
from ctdsl.simulate.budget import check_budget
from ctdsl.simulate.plan import SchemePlan, build_plans
from ctdsl.simulate.runner import Backend, Collector, OnSeed, Progress, Settings, SimResult, run_tasks, spawn_keys


@dataclass
class SweepPoint:
    values: dict[str, float]  # the swept params at this point, in base units
    plans: dict[str, SchemePlan]
    result: SimResult  # the schemes with at least one finished run


@dataclass
class SimSweep:
    axes: list  # numeric.grid.Axis
    units: dict[str, str]  # param -> the symbol of its base unit
    settings: Settings
    points: list[SweepPoint]
    stopped: str | None = None
    column_names: dict[str, str] = field(default_factory=dict)  # param -> its column's name (the caller's, as `ctdsl sweep` names it)

    @property
    def events(self) -> int:
        return sum(p.result.events for p in self.points)

    def kept(self) -> str:
        n = sum(len(s.runs) for p in self.points for s in p.result.schemes.values())
        return f"{n} runs at {len(self.points)} points" if n else "no seed"

    def rows(self) -> list[dict]:
        """Per point, per scheme: the params, the closed-form step and the simulated one with its interval."""
        out = []
        for p in self.points:
            for name, plan in p.plans.items():
                s = p.result.schemes.get(name)
                est = s.step if s is not None else None
                lo, hi = est.interval if est is not None and est.n >= 2 else (float("nan"), float("nan"))
                out.append(
                    {
                        **p.values,
                        "scheme": name,
                        "closed_form": plan.step,
                        "simulated": est.mean if est is not None else float("nan"),
                        "ci_low": lo,
                        "ci_high": hi,
                        "seeds": est.n if est is not None else 0,
                    }
                )
        return out


def check_grid(spec: Spec, axes: list) -> list[dict[str, float]]:
    """The grid's points (param -> value), the last axis varying fastest as in `numeric.grid.Grid`,
    or Failure (CT608) over MAX_SIM_SWEEP_POINTS. `axes` are `numeric.grid.Axis` (the caller's)."""
    size = prod(a.count for a in axes)
    if size > limits.MAX_SIM_SWEEP_POINTS:
        shape = " x ".join(f"{a.count:,}" for a in axes)
        raise Failure(
            [
                Diagnostic(
                    "CT608",
                    f"a simulation sweep over {shape} = {size:,} points; at most {limits.MAX_SIM_SWEEP_POINTS:,} points are simulated",
                    None,
                    help="sweep fewer points (each is a whole simulation), or sweep the closed forms with ctdsl sweep",
                )
            ]
        )
    return [{a.name: float(v) for a, v in zip(axes, combo)} for combo in itertools.product(*(a.values for a in axes))]


def override_text(value: float, dim: U.Dim) -> str:
    """A point's value as a --set value: the number in base units, exactly (repr), and the base unit."""
    return repr(value) if dim.dimensionless else f"{value!r} {dim.symbol()}"


def sweep(
    spec_at: Callable[[dict[str, float]], Spec],
    axes: list,
    points: list[dict[str, float]],
    cfg: Settings,
    names: list[str] | None = None,
    progress: Progress | None = None,
    on_seed: OnSeed | None = None,
    jobs: int = 1,
    backend: Backend | None = None,
    stop: Callable[[], bool] | None = None,
    execute: pool.Fn | None = None,
) -> SimSweep:
    """Every scheme at every point (see the module's docstring); `on_seed` gets the point's result."""
    work: list[T.Task] = []
    collectors: list[Collector] = []
    found: list[tuple[dict[str, float], dict[str, SchemePlan]]] = []
    units: dict[str, str] = {}
    for i, values in enumerate(points):
        spec = spec_at(values)
        units = {a.name: spec.params[a.name].dim.symbol() for a in axes}
        plans = build_plans(spec, names)
        check_budget(spec, plans, cfg.steps, cfg.warmup)
        keys = spawn_keys(spec)
        work += T.make_tasks(plans, cfg.seed, cfg.seeds, cfg.steps, cfg.warmup, True, True, keys, cfg.latency is SimLatency.HOLD, point=i, start=len(work), engine=cfg.engine)
        collectors.append(Collector(spec, cfg, plans))
        found.append((values, plans))
    done = [0]

    def each(task: T.Task, result: engine.RunResult) -> None:
        c = collectors[task.point]
        c.add(task.scheme, task.run, result)
        done[0] += 1
        if progress is not None:
            progress(done[0], len(work), f"point {task.point + 1} of {len(points)}, {task.scheme}")
        if on_seed is not None:
            on_seed(c.result(), done[0], len(work))

    def gather() -> list[SweepPoint]:
        return [SweepPoint(v, plans, c.result()) for (v, plans), c in zip(found, collectors)]

    try:
        over = run_tasks(work, each, jobs, backend, stop, execute)
    except T.TaskError as err:
        err.partial = SimSweep(list(axes), units, cfg, gather())
        raise
    out = SimSweep(list(axes), units, cfg, gather())
    if over and done[0] < len(work):
        out.stopped = f"stopped after {limits.MAX_SIM_WALL_SECONDS:g} s (the wall budget): {done[0]} of {len(work)} runs done"
    return out


__all__ = ["SimSweep", "SweepPoint", "check_grid", "override_text", "sweep"]
