"""`ctdsl simulate`: the discrete-event model of contention and stragglers, and --validate.

simpy and numpy are imported inside the command (by ctdsl.simulate), so that
`ctdsl check` and `ctdsl lint` never load them.

Long: one command, its options and the paths it takes (a training spec's steps, a sweep, a
serving spec's requests, a cluster), which share the option checks and the output writers.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import signal
from contextlib import contextmanager
from enum import Enum
from typing import List, Optional

import typer

from ctdsl import limits
from ctdsl.cli.app import Exit, app, emit, fail_usage, load_or_exit, parse_sets, print_diagnostics, stdout_console
from ctdsl.cli.progress import progress_bar as _progress_bar
from ctdsl.diagnostics import Diagnostic, Severity, did_you_mean
from ctdsl.diagnostics.terminal import json_command_safe, printable
from ctdsl.extras import require


class SimFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    parquet = "parquet"  # a simulation sweep's


LONG_RUN_EVENTS = 200_000  # above this estimate, a progress bar shows (on a terminal)
PARALLEL_EVENTS = 1_000_000  # above this estimate (about 4 s on one core), -j defaults to one process per core
MAX_JOBS = 256  # local processes at most
SERVING_SEEDS = 5  # a serving spec's seeded runs per path, unless --seeds says


class Engine(str, Enum):
    auto = "auto"
    simpy = "simpy"
    numpy = "numpy"


@app.command()
def simulate(
    # long: Typer declares each of the command's options as a parameter, one a line
    file: str = typer.Argument(..., help="Spec file.", metavar="FILE"),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, max=limits.MAX_SIM_STEPS, help="Steps measured per seed, after the warm-up (default: the spec's simulation block, else 100)."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=2, max=limits.MAX_SIM_SEEDS, help="Independent runs (default: the spec's, else 10)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", min=0, max=limits.MAX_SIM_STEPS, help="Steps run and discarded first (default: the spec's, else 10)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Base seed; the same seed gives the same output."),
    scheme: Optional[List[str]] = typer.Option(None, "--scheme", help="Simulate only this scheme (repeatable)."),
    set_: Optional[List[str]] = typer.Option(None, "--set", "-s", help="Override a param: name=value with its unit."),
    validate: bool = typer.Option(False, "--validate", help="Compare the simulation with the closed forms; exit 1 if they disagree."),
    format: SimFormat = typer.Option(SimFormat.table, "--format", "-f", help="table, json or csv; with --sweep: table, csv or parquet."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="A progress bar on long runs (on a terminal)."),
    partial: Optional[str] = typer.Option(None, "--partial", metavar="FILE", help="After each finished seed, write every run done so far to FILE (JSON, replaced whole), so that an interrupted run keeps them."),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1, max=MAX_JOBS, help="Processes that run the (scheme, seed) runs; the results are the same for any number (default: one per core, for a run long enough to gain from it)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", metavar="ADDRESS", help="Run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786); needs ctdsl\\[dask]."),
    # the most is ctdsl.simulate.serving.MAX_REQUESTS (not imported here: check and lint start without sympy)
    requests: int = typer.Option(2000, "--requests", min=100, max=1_000_000, help="A serving spec: requests per seed (the first tenth is the warm-up)."),
    sweep: Optional[List[str]] = typer.Option(None, "--sweep", help="Simulate at each point of name=lo:hi:n[:log] (repeatable: a grid), beside the closed form."),
    output: Optional[str] = typer.Option(None, "--output", "-o", metavar="FILE", help="With --sweep: write the table to FILE (.csv, or .parquet with -f parquet)."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE", help="With --sweep over one param: the closed form and the simulated points with their intervals (.png, .svg, .pdf)."),
    trace: Optional[str] = typer.Option(None, "--trace", metavar="FILE", help="Also write the first seed's run of each scheme (its first 20 steps at most) as a trace for Perfetto's UI or chrome://tracing (Trace Event Format JSON)."),
    engine: Engine = typer.Option(Engine.auto, "--engine", help="auto: the numpy engine (the Lindley recursion over arrays) where it models the run exactly, else SimPy; simpy; numpy (SimPy where it cannot)."),
) -> None:
    """Simulate each scheme's steps (SimPy, or numpy arrays): shared links with background traffic, stragglers.

    \b
    Examples:
      ctdsl simulate specs/llama70b_wan.ct --set wan_load=0.9 --seeds 3 --steps 10
      ctdsl simulate specs/llama70b_wan.ct --steps 200 --seeds 20 --format json
      ctdsl simulate examples/15_contention.ct --validate
      ctdsl simulate specs/llama70b_wan.ct --seeds 20 --partial runs.json
      ctdsl simulate specs/llama70b_wan.ct --seeds 40 -j 2
      ctdsl simulate examples/15_contention.ct --sweep 'rho=0.1:0.8:4' -o s.csv
      ctdsl simulate specs/llama70b_wan.ct --steps 20 --seeds 2 --trace out.json
    """
    study = load_or_exit(file, parse_sets(set_))
    spec = study.spec
    if not spec.schemes and spec.serving:
        _serving(study, seeds, seed, validate, format, requests, sweep or partial or scheduler or trace or output)
        return
    if not spec.schemes and format in (SimFormat.json, SimFormat.csv) and not (validate or sweep or scheme):
        # a data format's reader gets the format's own empty result (no schemes), not a sentence it cannot parse
        _print(_no_schemes(study, steps, seeds, warmup, seed), format, validate)
        raise typer.Exit(Exit.OK)
    if not spec.schemes:
        typer.echo(f"{printable(file)}: no schemes to simulate")
        raise typer.Exit(Exit.OK)
    for name in scheme or []:
        if name not in spec.schemes:
            hint = did_you_mean(name, spec.schemes)
            raise fail_usage(f"no scheme '{name}' in {file}" + (f"; {hint}" if hint else ""))

    if validate and partial:
        raise fail_usage("--partial keeps the seeds of a plain run; --validate runs its own")
    _check_options(validate, jobs, scheduler, sweep, output, plot, format, partial, trace)
    from ctdsl.simulate.runner import settings

    cfg = dataclasses.replace(settings(spec, steps, seeds, warmup, seed), engine=engine.value)
    bar = _progress_bar(progress)
    keeper = _Keeper(partial)
    run = _Run(study, cfg, scheme, jobs, bar, keeper, sweep, parse_sets(set_))
    try:
        with _stop_between_seeds(keeper), _backend(scheduler, study) as backend:
            run.backend = backend
            result = run.validation() if validate else run.sweep() if sweep else run.plain()
            keeper.raise_pending()
    except KeyboardInterrupt as exc:
        typer.echo(keeper.message("terminated" if isinstance(exc, _Terminated) else "interrupted"), err=True)
        raise typer.Exit(143 if isinstance(exc, _Terminated) else 130)
    except Exception as exc:  # a run that failed is reported; anything else is the app's (exit 3)
        from ctdsl.simulate.errors import TaskError  # deferred: `ctdsl check` does not load ctdsl.simulate

        if not isinstance(exc, TaskError):
            raise
        _task_failed(exc, keeper, study)
    if sweep:
        _write_sweep(result, format, output, plot, study)
        return
    if trace:
        _write_trace(study, cfg, scheme, trace)
    _print(result, format, validate)
    if getattr(result, "stopped", None):  # the wall budget: the seeds done so far were shown
        where = spec.simulation.span if spec.simulation is not None else None
        kept = f"; the runs done are kept in {printable(partial)}" if partial else ""
        diag = Diagnostic("CT608", f"the simulation {result.stopped}{kept}", where, severity=Severity.WARNING, help="simulate fewer --steps or --seeds")
        print_diagnostics([diag], study.sources, err=True)
        raise typer.Exit(Exit.FINDINGS)
    if validate and not result.ok:
        raise typer.Exit(Exit.FINDINGS)


def _serving(study, seeds, seed, validate, format, requests, other) -> None:
    """A serving spec: each path simulated request by request beside its closed forms (docs/serving.md)."""
    if other:
        raise fail_usage("a serving spec is simulated path by path: --sweep, --partial, --scheduler, --trace and --output apply to training schemes")
    if format not in (SimFormat.table, SimFormat.json):
        raise fail_usage("a serving simulation prints as a table or json")
    from ctdsl.report.document_rich import print_blocks
    from ctdsl.report.serving_out import serving_sim_json, serving_sim_table
    from ctdsl.simulate.serving import validate as check_path

    sol = study.solve(breakevens=False)  # the paths only: a break-even is solve's, not the simulation's
    n = seeds if seeds is not None else SERVING_SEEDS
    try:
        rows = [(r, check_path(study.spec, r, requests, n, seed)) for r in sol.serving if not r.over_capacity]
    except ValueError as exc:  # a bound of the simulation (ctdsl.simulate.serving), before its work
        raise fail_usage(str(exc))
    if format is SimFormat.json:
        emit(json.dumps(serving_sim_json(rows, requests, n, seed), indent=2, sort_keys=True) + "\n", None, data=True)
    else:
        print_blocks(stdout_console(), [serving_sim_table(rows, requests, n)], mark=" *")
    if validate and not all(c.agrees for _, checks in rows for c in checks):
        raise typer.Exit(Exit.FINDINGS)


def _no_schemes(study, steps, seeds, warmup, seed):
    """The result of a plain run of a spec that has no scheme: the settings, the params, no schemes."""
    from ctdsl.simulate.runner import settings

    run = _Run(study, settings(study.spec, steps, seeds, warmup, seed), None, 1, _progress_bar(False), _Keeper(None), None, [])
    return run.plain()


def _write_trace(study, cfg, schemes, path: str) -> None:
    """The first seed's run of each scheme, recorded again as it ran, as a Trace Event Format file."""
    from ctdsl.files import atomic_open
    from ctdsl.report.trace_event import write_trace
    from ctdsl.simulate.trace import record

    recorded = record(study.spec, cfg, list(schemes) if schemes else None)
    try:
        with atomic_open(path, "w", encoding="utf-8", newline="\n") as fh:
            write_trace(recorded, study.spec.root, fh)
    except OSError as exc:
        raise fail_usage(f"cannot write {printable(path)}: {exc.strerror or exc}")
    typer.echo(f"wrote {printable(path)} (open it in ui.perfetto.dev or chrome://tracing)", err=True)


def _check_options(validate, jobs, scheduler, sweep, output, plot, format, partial, trace=None) -> None:
    if trace and (validate or sweep):
        raise fail_usage("--trace records the runs of a plain simulation: it takes neither --validate nor --sweep")
    if scheduler is not None and jobs is not None:
        raise fail_usage("-j sets the local processes; --scheduler runs on a cluster's: give one")
    if validate and (scheduler or sweep):
        raise fail_usage("--validate runs here, on its own settings: it takes neither --scheduler nor --sweep")
    if not sweep and (output or plot):
        raise fail_usage("-o and --plot write a simulation sweep: give --sweep")
    if sweep and partial:
        raise fail_usage("--partial keeps the seeds of a plain run; a sweep's table is written when it ends")
    if sweep and format is SimFormat.json:
        raise fail_usage("a simulation sweep is a table: -f table, csv or parquet")
    if not sweep and format is SimFormat.parquet:
        raise fail_usage("-f parquet writes a simulation sweep: give --sweep")
    if format is SimFormat.parquet and (not output or output == "-"):
        raise fail_usage("-f parquet writes a file: give -o FILE.parquet")


class _Run:
    """The runs the command asked for: plain, a sweep, or the validation; each finished seed handed to `keeper`."""

    def __init__(self, study, cfg, scheme, jobs, bar, keeper, sweep, sets):
        self.study, self.cfg, self.scheme, self.jobs = study, cfg, list(scheme) if scheme else None, jobs
        self.bar, self.keeper, self.sweeps, self.sets = bar, keeper, sweep, sets
        self.backend = None

    def validation(self):
        from ctdsl.simulate.validate import validate as run_validation

        with self.bar as report:
            return run_validation(self.study.spec, self.cfg, report)

    def _jobs(self, events: float) -> int:
        from ctdsl.simulate.pool import default_jobs

        if self.jobs is not None:
            return self.jobs
        return default_jobs() if events > PARALLEL_EVENTS else 1

    def plain(self):
        from ctdsl.simulate.plan import build_plans
        from ctdsl.simulate.runner import simulate as run_all

        spec, cfg = self.study.spec, self.cfg
        plans = build_plans(spec, self.scheme)
        events = _estimate_events(plans, cfg)
        self.bar.enabled = self.bar.enabled and events > LONG_RUN_EVENTS
        self.keeper.active = True
        with self.bar as report:
            return run_all(spec, cfg, progress=report, plans=plans, on_seed=self.keeper, jobs=self._jobs(events), backend=self.backend, stop=self.keeper.stopping)

    def sweep(self):
        from ctdsl.cli.sweep_cmds import parse_sweep, resolve_axes
        from ctdsl.numeric.columns import unit_suffix
        from ctdsl.simulate import simsweep
        from ctdsl.simulate.pool import default_jobs

        spec = self.study.spec
        axes = resolve_axes(self.study, [parse_sweep(s) for s in self.sweeps], self.sets)
        points = simsweep.check_grid(spec, axes)

        def spec_at(values):
            over = {n: simsweep.override_text(v, spec.params[n].dim) for n, v in values.items()}
            return load_or_exit(self.study.path, {**self.sets, **over}).spec

        self.keeper.active = self.keeper.sweep = True
        with self.bar as report:
            res = simsweep.sweep(spec_at, axes, points, self.cfg, self.scheme, progress=report, on_seed=self.keeper,
                                 jobs=self.jobs or default_jobs(), backend=self.backend, stop=self.keeper.stopping)  # fmt: skip
        res.column_names = {n: n if u == "1" else f"{n}_{unit_suffix(u)}" for n, u in res.units.items()}  # as numeric.columns names them
        return res


@contextmanager
def _backend(address: str | None, study):
    """None (local processes), or the runner backend of a Dask client connected to `address` (closed after)."""
    if address is None:
        yield None
        return
    require("distributed", "--scheduler")
    from ctdsl.simulate import cluster

    try:
        client = cluster.connect(address)
    except cluster.Unreachable as exc:
        diag = Diagnostic("CT801", f"no Dask scheduler answered at {exc.address} within {cluster.CONNECT_TIMEOUT}: {exc.reason}", None,
                          help="start one (dask scheduler), or check the address: tcp://host:8786")  # fmt: skip
        print_diagnostics([diag], study.sources, err=True)
        raise typer.Exit(Exit.USAGE)
    try:
        yield cluster.backend(client)
    finally:
        client.close()


def _task_failed(err, keeper, study) -> None:
    """A run raised, or its worker died: name it, say what was kept, exit 1."""
    kept = err.partial
    if kept is None or kept.kept() == "no seed":
        where = "no run had finished"
    elif keeper.path:
        where = f"the runs finished are kept in {printable(keeper.path)}: {kept.kept()}"
    else:
        where = f"finished: {kept.kept()}; --partial FILE keeps them"
    diag = Diagnostic("CT802", f"the simulation stopped: {err}", None, notes=(where,), help="a bug in ctdsl or a lost worker: run that seed alone with -j 1 to see it")
    print_diagnostics([diag], study.sources, err=True)
    raise typer.Exit(Exit.FINDINGS)


class _Terminated(KeyboardInterrupt):
    """SIGTERM: the run stops as with Ctrl-C and says what it kept."""


def _quiet_event_loops() -> None:
    """A stop that cancels runs under a Dask client: the client's event-loop thread can log the futures
    cancelled beneath it (tornado's "Exception in callback ..." with a traceback, on stderr through
    logging's last resort). The user asked to stop and the command says what it kept; from here on those
    loggers print nothing (seen in a full-suite run on a loaded machine: test_simulate_dask's double Ctrl-C)."""
    for name in ("tornado.application", "tornado.general", "asyncio", "distributed.client", "distributed.utils"):
        logging.getLogger(name).disabled = True


@contextmanager
def _stop_between_seeds(keeper):
    """Ctrl-C and SIGTERM during the runs: the first asks `keeper` to start no further run and let the
    ones running finish (so the stop never lands inside SimPy or a file being written, and the runs kept
    are the first of each scheme), a second one stops at once (the pool's or cluster's runs cancelled)."""

    def on_signal(signum, frame):
        if keeper.active and keeper.pending is None:
            keeper.pending = signum
            return
        if keeper.keeping:  # writing the file: the stop waits for it, so the file and the message agree
            keeper.urgent = signum
            return
        _quiet_event_loops()
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
            # a stop was asked: the command is ending, and a further Ctrl-C must not kill it half-way
            # through its message and exit code (a fast run can be done before the second one lands)
            signal.signal(s, signal.SIG_IGN if keeper.pending is not None else h)


class _Keeper:
    """After each finished seed: the runs so far, written whole to the --partial file when there is one."""

    def __init__(self, path: str | None):
        self.path = path
        self.last = None  # the SimResult last kept (written, when there is a file)
        self.done = self.total = 0
        self.active = False  # a plain run is going: a signal waits for the end of its seed
        self.pending = None  # the signal that asked to stop
        self.sweep = False  # the runs are a sweep's: no file, and its table is written at its end
        self.keeping = False  # writing the file now: a second signal waits for the end of it
        self.urgent = None  # that second signal

    def __call__(self, res, done: int, total: int) -> None:
        self.keeping = True
        try:
            self._keep(res, done, total)
        finally:
            self.keeping = False
        if self.urgent is not None:
            _quiet_event_loops()
            raise _Terminated() if self.urgent == signal.SIGTERM else KeyboardInterrupt()

    def _keep(self, res, done: int, total: int) -> None:
        if self.path:
            from ctdsl.files import atomic_open
            from ctdsl.report.simulation_data import partial_json

            try:
                with atomic_open(self.path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(json_command_safe(json.dumps(partial_json(res, done, total), indent=2, sort_keys=True)) + "\n")
            except OSError as exc:
                raise fail_usage(f"cannot write {printable(self.path)}: {exc.strerror}")
        self.last, self.done, self.total = res, done, total

    def stopping(self) -> bool:
        """Asked before each further run starts: a first Ctrl-C or SIGTERM stops new runs."""
        return self.pending is not None

    def raise_pending(self) -> None:
        """After the runs: the signal that stopped them, as the exception the command reports."""
        if self.pending is not None:
            _quiet_event_loops()
            raise _Terminated() if self.pending == signal.SIGTERM else KeyboardInterrupt()

    def message(self, why: str) -> str:
        if self.sweep:
            return f"{why} after {self.done} of {self.total} runs of the sweep: nothing kept (its table is written when it ends)"
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
        emit(json_command_safe(json.dumps(data, indent=2, sort_keys=True)) + "\n", None, data=True)
        return
    if format is SimFormat.csv:
        emit(simulation_data.validation_csv(result) if validate else simulation_data.render_csv(result), None, data=True)
        return
    console = stdout_console()
    if validate:
        simulation_tables.render_validation(result, console)
    else:
        simulation_tables.render_rich(result, console)


def _write_sweep(result, format: SimFormat, output: str | None, plot: str | None, study) -> None:
    """The sweep's table: to the terminal, as CSV (stdout or -o), as Parquet (-o), and the figure."""
    from ctdsl.cli.app import save_figure
    from ctdsl.files import atomic_open
    from ctdsl.report import simsweep_out

    if plot:
        if len(result.axes) != 1:
            raise fail_usage("--plot draws a sweep over one param")
        save_figure(simsweep_out.figure(result), plot, plot.rsplit(".", 1)[-1].lower())
    binary = format is SimFormat.parquet or (output or "").lower().endswith(".parquet")
    try:
        if binary:
            if not output or output == "-":
                raise fail_usage("-f parquet writes a file: give -o FILE.parquet")
            require("pyarrow", "-f parquet")
            with atomic_open(output, "wb") as fh:
                simsweep_out.write_parquet(result, fh)
        elif output and output != "-":
            with atomic_open(output, "w", encoding="utf-8", newline="") as fh:
                fh.write(simsweep_out.render_csv(result))
        elif format is SimFormat.csv:
            emit(simsweep_out.render_csv(result), None, data=True)
        else:
            simsweep_out.render_rich(result, stdout_console())
    except OSError as exc:
        raise fail_usage(f"cannot write {printable(output or '-')}: {exc.strerror or exc}")
    if output and output != "-":
        typer.echo(f"wrote {printable(output)}", err=True)
    if result.stopped:
        print_diagnostics([Diagnostic("CT608", f"the simulation sweep {result.stopped}", None, severity=Severity.WARNING, help="sweep fewer points, --steps or --seeds")], study.sources, err=True)
        raise typer.Exit(Exit.FINDINGS)


def _estimate_events(plans, cfg) -> float:
    """A rough count of events: background arrivals over the closed-form run length."""
    total = 0.0
    for p in plans.values():
        span = (cfg.steps + cfg.warmup) * max(p.step, p.bound or 0.0)
        total += cfg.seeds * (4 * span * sum(q.rho / q.service for q in p.queues.values()) + 10 * (cfg.steps + cfg.warmup))
    return total
