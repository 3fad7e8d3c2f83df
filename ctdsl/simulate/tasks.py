"""One simulated run as a task: what a worker process or a Dask worker needs, and nothing more.

A `Task` is one (scheme, seed) run, or one (grid point, scheme, seed) run of a
simulation sweep. It carries the scheme's plan with the symbolic parts removed
(`lean`: plain floats, tuples and dataclasses, about a kilobyte pickled), the
settings and the spawn keys, so a worker needs neither the spec file nor sympy
at run time, and the run it makes is the one the calling process would make:
`execute` is a function of the task alone. Run k of a scheme draws from
`SeedSequence([seed, k])` and edge i of the spec from that sequence's stream
1 + i (engine.py), whichever process runs it, in whatever order: results are
bit-identical for any number of processes.

`execute` is the one place a run is started: on the SimPy engine (`engine.run`, or
`steps.run` for a scheme simulated step by step) or the numpy one (`vector.run`), as
`engine_of` picks.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ctdsl.simulate import engine, steps, vector
from ctdsl.simulate.errors import TaskError
from ctdsl.simulate.plan import Edge, SchemePlan


@dataclass(frozen=True)
class Task:
    index: int  # position in the task order: results are assembled by it
    scheme: str
    run: int  # k: the run's stream is SeedSequence([seed, k])
    plan: SchemePlan  # lean: no sympy inside
    seed: int
    steps: int
    warmup: int
    load: bool = True
    jitter: bool = True
    spawn_keys: tuple[Edge, ...] | None = None  # None: the plan's own edges (engine.run's default)
    hold: bool = False
    point: int | None = None  # a simulation sweep's grid point
    engine: str = "auto"  # auto | simpy | numpy (engine_of says which runs)

    def describe(self) -> str:
        """How an error names the task: "scheme 'a' seed 3" (and the grid point of a sweep)."""
        where = f"grid point {self.point}, " if self.point is not None else ""
        return f"{where}scheme '{self.scheme}' seed {self.run}"


def lean(plan: SchemePlan) -> SchemePlan:
    """The plan without its symbolic costs and closed-form terms: what the engine reads, and picklable."""
    return dataclasses.replace(plan, costs=None, closed_forms=())


def make_tasks(
    plans: dict[str, SchemePlan],
    seed: int,
    seeds: int,
    steps: int,
    warmup: int,
    load: bool = True,
    jitter: bool = True,
    spawn_keys: list[Edge] | None = None,
    hold: bool = False,
    point: int | None = None,
    start: int = 0,
    engine: str = "auto",
) -> list[Task]:
    """Every scheme's runs 0..seeds-1, scheme after scheme, numbered from `start`."""
    keys = tuple(spawn_keys) if spawn_keys is not None else None
    out = []
    for name, plan in plans.items():
        slim = lean(plan)
        for k in range(seeds):
            out.append(Task(start + len(out), name, k, slim, seed, steps, warmup, load, jitter, keys, hold, point, engine))
    return out


def engine_of(plan: SchemePlan, choice: str, hold: bool) -> str:
    """Which engine runs a plan: SimPy when asked, else the numpy engine where it models the
    plan exactly (`vector.supports`), SimPy otherwise (`numpy` falls back too, and says so)."""
    if choice == "simpy":
        return "simpy"
    return "numpy" if vector.supports(plan, hold) is None else "simpy"


def engine_note(plan: SchemePlan, choice: str, hold: bool) -> str | None:
    """Why SimPy runs a plan the numpy engine was asked for (`auto` or `numpy`); None otherwise."""
    if choice == "simpy":
        return None
    return vector.supports(plan, hold)


def simpy_run(plan: SchemePlan):
    """The SimPy engine's run for a plan: step by step (steps.py) where its syncs need it, else in rounds."""
    return steps.run if plan.step_plan is not None else engine.run


def execute(task: Task) -> engine.RunResult:
    """Run one task: the one place a run starts, on the engine `engine_of` picks."""
    keys = list(task.spawn_keys) if task.spawn_keys is not None else None
    run = vector.run if engine_of(task.plan, task.engine, task.hold) == "numpy" else simpy_run(task.plan)
    return run(task.plan, task.seed, task.run, task.steps, task.warmup, load=task.load, jitter=task.jitter, spawn_keys=keys, hold=task.hold)


__all__ = ["Task", "TaskError", "lean", "make_tasks", "execute", "engine_of", "engine_note", "simpy_run"]
