"""`ctdsl simulate`: the discrete-event model of contention and stragglers, and --validate.

simpy and numpy are imported inside the command (by ctdsl.simulate), so that
`ctdsl check` and `ctdsl lint` never load them.
"""

from __future__ import annotations

import json
import signal
import sys
from contextlib import contextmanager
from enum import Enum
from typing import List, Optional

import typer

from ctdsl import limits
from ctdsl.cli.app import Exit, app, fail_usage, load_or_exit, parse_sets, print_diagnostics, stdout_console
from ctdsl.diagnostics import Diagnostic, Severity, did_you_mean
from ctdsl.diagnostics.terminal import printable


class SimFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


LONG_RUN_EVENTS = 200_000  # above this estimate, a progress bar shows (on a terminal)


@app.command()
def simulate(
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, max=limits.MAX_SIM_STEPS, help="Steps measured per seed, after the warm-up (default: the spec's simulation block, else 100)."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=2, max=limits.MAX_SIM_SEEDS, help="Independent runs (default: the spec's, else 10)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", min=0, max=limits.MAX_SIM_STEPS, help="Steps run and discarded first (default: the spec's, else 10)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Base seed; the same seed gives the same output."),
    scheme: Optional[List[str]] = typer.Option(None, "--scheme", help="Simulate only this scheme (repeatable)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    validate: bool = typer.Option(False, "--validate", help="Compare the simulation with the closed forms; exit 1 if they disagree."),
    format: SimFormat = typer.Option(SimFormat.table, "--format", "-f", help="table, json or csv."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="A progress bar on long runs (on a terminal)."),
    partial: Optional[str] = typer.Option(None, "--partial", metavar="FILE", help="After each finished seed, write every run done so far to FILE (JSON, replaced whole), so that an interrupted run keeps them."),
) -> None:
    """Simulate each scheme's steps in SimPy: shared links with background traffic, stragglers.

    \b
    Examples:
      ctdsl simulate specs/llama70b_wan.ct --set wan_load=0.9
      ctdsl simulate specs/llama70b_wan.ct --steps 200 --seeds 20 --format json
      ctdsl simulate examples/15_contention.ct --validate
      ctdsl simulate specs/llama70b_wan.ct --seeds 200 --partial runs.json
    """
    study = load_or_exit(file, parse_sets(set_))
    spec = study.spec
    if not spec.schemes:
        typer.echo(f"{file}: no schemes to simulate")
        raise typer.Exit(Exit.OK)
    for name in scheme or []:
        if name not in spec.schemes:
            hint = did_you_mean(name, spec.schemes)
            raise fail_usage(f"no scheme '{name}' in {file}" + (f"; {hint}" if hint else ""))

    if validate and partial:
        raise fail_usage("--partial keeps the seeds of a plain run; --validate runs its own")
    from ctdsl.simulate.runner import settings
    from ctdsl.simulate.runner import simulate as run_all

    cfg = settings(spec, steps, seeds, warmup, seed)
    bar = _progress_bar(progress)
    keeper = _Keeper(partial)
    try:
        with _stop_between_seeds(keeper):
            result = _run(spec, cfg, scheme, validate, bar, keeper, run_all)
    except KeyboardInterrupt as exc:
        typer.echo(keeper.message("terminated" if isinstance(exc, _Terminated) else "interrupted"), err=True)
        raise typer.Exit(143 if isinstance(exc, _Terminated) else 130)
    _print(result, format, validate)
    if getattr(result, "stopped", None):  # the wall budget: the seeds done so far were shown
        where = spec.simulation.span if spec.simulation is not None else None
        kept = f"; the runs done are kept in {printable(partial)}" if partial else ""
        diag = Diagnostic("CT608", f"the simulation {result.stopped}{kept}", where, severity=Severity.WARNING, help="simulate fewer --steps or --seeds")
        print_diagnostics([diag], study.sources, err=True)
        raise typer.Exit(Exit.FINDINGS)
    if validate and not result.ok:
        raise typer.Exit(Exit.FINDINGS)


def _run(spec, cfg, scheme, validate: bool, bar, keeper, run_all):
    """The validation, or every run, each finished seed handed to `keeper`."""
    if validate:
        from ctdsl.simulate.validate import validate as run_validation

        with bar as report:
            return run_validation(spec, cfg, report)
    from ctdsl.simulate.plan import build_plans

    plans = build_plans(spec, list(scheme) if scheme else None)
    bar.enabled = bar.enabled and _estimate_events(plans, cfg) > LONG_RUN_EVENTS
    keeper.active = True
    with bar as report:
        return run_all(spec, cfg, progress=report, plans=plans, on_seed=keeper)


class _Terminated(KeyboardInterrupt):
    """SIGTERM: the run stops as with Ctrl-C and says what it kept."""


@contextmanager
def _stop_between_seeds(keeper):
    """Ctrl-C and SIGTERM during the runs: the first asks `keeper` to stop after the seed running now
    (so the stop never lands inside SimPy or a file being written), a second one stops at once."""

    def on_signal(signum, frame):
        if keeper.active and keeper.pending is None:
            keeper.pending = signum
            return
        raise _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    try:
        old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread: leave the signals as they are
        yield
        return
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class _Keeper:
    """After each finished seed: the runs so far, written whole to the --partial file when there is one."""

    def __init__(self, path: str | None):
        self.path = path
        self.last = None  # the SimResult last kept (written, when there is a file)
        self.done = self.total = 0
        self.active = False  # a plain run is going: a signal waits for the end of its seed
        self.pending = None  # the signal that asked to stop

    def __call__(self, res, done: int, total: int) -> None:
        if self.path:
            from ctdsl.files import atomic_open
            from ctdsl.report.simulation_data import partial_json

            try:
                with atomic_open(self.path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(json.dumps(partial_json(res, done, total), indent=2, sort_keys=True) + "\n")
            except OSError as exc:
                raise fail_usage(f"cannot write {printable(self.path)}: {exc.strerror}")
        self.last, self.done, self.total = res, done, total
        if self.pending is not None:
            raise _Terminated() if self.pending == signal.SIGTERM else KeyboardInterrupt()

    def message(self, why: str) -> str:
        if self.last is None:
            return f"{why} before the first seed finished: nothing kept"
        head = f"{why} after {self.done} of {self.total} runs"
        if self.path:
            return f"{head}: kept in {printable(self.path)}: {self.last.kept()}"
        return f"{head} ({self.last.kept()}); nothing kept: --partial FILE keeps the finished seeds"


def _print(result, format: SimFormat, validate: bool) -> None:
    from ctdsl.report import simulation_data, simulation_tables  # deferred: every command imports this module

    if format is SimFormat.json:
        data = simulation_data.validation_json(result) if validate else simulation_data.result_json(result)
        typer.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    if format is SimFormat.csv:
        typer.echo(simulation_data.validation_csv(result) if validate else simulation_data.render_csv(result), nl=False)
        return
    console = stdout_console()
    if validate:
        simulation_tables.render_validation(result, console)
    else:
        simulation_tables.render_rich(result, console)


def _estimate_events(plans, cfg) -> float:
    """A rough count of events: background arrivals over the closed-form run length."""
    total = 0.0
    for p in plans.values():
        span = (cfg.steps + cfg.warmup) * max(p.step, p.bound or 0.0)
        total += cfg.seeds * (4 * span * sum(q.rho / q.service for q in p.queues.values()) + 10 * (cfg.steps + cfg.warmup))
    return total


class _progress_bar:
    """A rich progress bar on stderr when it is a terminal; otherwise nothing."""

    def __init__(self, wanted: bool):
        self.enabled = wanted and sys.stderr.isatty()
        self._progress = None
        self._task = None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            transient=True,
        )
        self._progress.__enter__()
        self._task = self._progress.add_task("simulating", total=None)

        def report(done: int, total: int, what: str) -> None:
            self._progress.update(self._task, completed=done, total=total, description=f"simulating {what}")

        return report

    def __exit__(self, *exc):
        if self._progress is not None:
            self._progress.__exit__(*exc)
        return False
