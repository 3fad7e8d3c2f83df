"""The Python API: a thin facade over the pipeline, which the CLI also uses.

    import ctdsl
    study = ctdsl.load("specs/llama70b_wan.ct")   # parse and check, or raise SpecError
    result = study.solve()                        # symbolic costs at the defaults
    result.schemes["dense"].time_to_target

`load` and `check` import neither sympy nor numpy; `solve` does.

A spec's scenarios (`scenario NAME { ... }`) are solved by loading the spec in one:
`ctdsl.load(path, scenario="row_1").solve()`, its values in place of the defaults, checked as
`--set` values are; `Study.observe()` solves each scenario its observations name, once, and
compares (docs/validation.md).

Long: the whole public API in one module (load, check, recheck, sweep_axes, Study), so that a
user reads one page; each piece is a thin call into the pipeline's layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctdsl.check.checker import Checker
from ctdsl.check.loader import Loaded, Unreadable, load as load_files
from ctdsl.check.topology import require_runnable
from ctdsl.diagnostics import Diagnostic, DiagnosticSink, Label, Severity, Sources, Span, render_text, sort_diagnostics
from ctdsl.model.entities import Spec

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping

    from ctdsl.numeric.grid import Axis
    from ctdsl.numeric.sweepdata import SweepResult
    from ctdsl.model.topology import Topology
    from ctdsl.simulate.runner import SimResult
    from ctdsl.results.observed import Observed
    from ctdsl.results.sensitivity import Sensitivity, Tornado
    from ctdsl.results.solution import Solution


class SpecError(Exception):
    """A spec has errors; `diagnostics` lists them all."""

    def __init__(self, diagnostics: list[Diagnostic], sources: Sources):
        self.diagnostics = diagnostics
        self.sources = sources
        super().__init__(self.render())

    def render(self) -> str:
        return "\n\n".join(render_text(d, self.sources) for d in self.diagnostics)


@dataclass
class CheckResult:
    path: str
    spec: Spec | None
    diagnostics: list[Diagnostic]
    sources: Sources
    loaded: Loaded | None = field(default=None, repr=False)
    text: str | None = field(default=None, repr=False)  # the root's text when given, not read from the path

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)


def check(path: str | Path, text: str | None = None, overrides: dict[str, str] | None = None, scenario: str | None = None) -> CheckResult:
    """Parse and check one spec. Raises `Unreadable` if the file cannot be read.

    `overrides` replaces param defaults (`{"wan_bw": "25 GB/s"}`); every check then
    runs at the new values. `scenario` names one of the spec's scenarios whose values
    replace the defaults too (winning over `overrides` for the params it sets); an
    error found at its values carries a note naming it. KeyError if the spec checks
    clean and has no scenario of that name.
    """
    sink = DiagnosticSink()
    loaded = load_files(path, sink, text=text)
    spec = None
    if not loaded.parse_failed:
        checker = Checker(loaded, sink, overrides or {})
        if scenario is not None:
            base = checker.run()  # as written first: a scenario is only looked up in a spec that checks
            if base is None:
                return _checked(str(path), None, sink, loaded.sources, loaded, text)
            if scenario not in base.scenarios:
                raise KeyError(scenario)
            sink = DiagnosticSink()
            checker = Checker(load_files(path, sink, text=text), sink, overrides or {}, scenario)
            spec = checker.run()
            _in_scenario(sink, base.scenarios[scenario])
        else:
            spec = checker.run()
    return _checked(str(path), spec, sink, loaded.sources, loaded, text)


def _checked(path: str, spec: Spec | None, sink: DiagnosticSink, sources: Sources, loaded: Loaded, text: str | None = None) -> CheckResult:
    """What a check found, as `check` and `recheck` return it: the diagnostics in order, the spec
    only when nothing is an error; a --set value outside its declared range (CT311) is dropped
    beside an error, since it matters only to a spec that runs."""
    diagnostics = sort_diagnostics(sink.items)
    if sink.has_errors:
        diagnostics = [d for d in diagnostics if d.code != "CT311"]
    return CheckResult(path, spec if not sink.has_errors else None, diagnostics, sources, loaded, text)


def _in_scenario(sink: DiagnosticSink, scenario) -> None:
    """Note on each error found at a scenario's values which scenario it was (they point at the spec's fields)."""
    note = f"found with the values of scenario '{scenario.name}' in place of the defaults"
    sink.items[:] = [
        replace(d, notes=(*d.notes, note), secondary=(*d.secondary, Label(scenario.span, "this scenario"))) if d.severity is Severity.ERROR else d
        for d in sink.items
    ]


class Study:
    """A checked spec, ready to solve."""

    def __init__(self, result: CheckResult, overrides: dict[str, str] | None = None, scenario: str | None = None):
        assert result.spec is not None
        self.overrides = dict(overrides or {})
        self.scenario = scenario
        self.text = result.text  # a spec checked from text (not its file) is solved in its scenarios from that text
        self.path = result.path
        self.spec: Spec = result.spec
        self.sources = result.sources
        self.diagnostics = result.diagnostics
        self.loaded = result.loaded  # the syntax trees checked: `recheck` checks them again with other values

    def graph(self) -> "Topology":
        """The topology the checker built (its networkx graph is `.graph`)."""
        return self.spec.topology

    def solve(self, overrides: dict[str, str] | None = None, breakevens: bool = True) -> "Solution":
        """Symbolic costs of every scheme; `overrides` maps param names to values with units;
        `breakevens=False` leaves the spec's break-evens unsolved (the solution has none)."""
        from ctdsl.report import notebook  # noqa: F401  (registers how results show themselves)
        from ctdsl.symbolic.solve import solve

        if overrides:
            return self.in_scenario(self.scenario, overrides).solve(breakevens=breakevens)
        return solve(self.spec, breakevens)

    def in_scenario(self, name: str | None, overrides: dict[str, str] | None = None) -> "Study":
        """This spec checked in scenario `name` (None: as written), with `overrides` on top of its own,
        from the syntax trees it was loaded from (not read again: `observe` checks each of a set's
        scenarios from the one parse); SpecError where the scenario's values break a check (each
        error notes the scenario), KeyError for a scenario the spec does not have."""
        if name is not None and name not in self.spec.scenarios:
            raise KeyError(name)
        given = {**self.overrides, **(overrides or {})}
        result = _runnable(_again(self, given, name, noted=True))
        if not result.ok or result.spec is None:
            raise SpecError(list(result.diagnostics), result.sources)
        return Study(result, given, name)

    def observe(self, solution: "Solution | None" = None) -> "Observed":
        """Every observation against its prediction (docs/validation.md): each scenario the
        observations name solved once; with a `fit`, its param solved for on its observation
        first and held for all. `solution`: this study's own, when already solved. Raises
        `Failure`: the errors of a scenario whose values break a check (each noting it), or
        CT317 for a fit without a root."""
        from ctdsl.numeric.observe import fit_param, implied, model_group, predict, value_text
        from ctdsl.language.observables import OBSERVABLES
        from ctdsl.results.observed import Observed, ObservedRow, rank_groups

        spec = self.spec
        fitted: dict[str, str] = {}
        fit = None

        def solved_in(name: str | None, given: dict[str, str]) -> "Solution":
            try:
                return self.in_scenario(name, given).solve()
            except SpecError as exc:  # the scenario's values break a check: reported as a failure of this solve
                from ctdsl.failure import Failure

                raise Failure(exc.diagnostics) from None

        if spec.fits:
            f = spec.fits[0]
            fit = fit_param(solved_in(f.scenario, {}), f, spec.observations[f.observation])
            fitted = {f.param: value_text(fit.value, fit.dim)}
        solved: dict[str | None, "Solution"] = {}
        rows = []
        for i, obs in enumerate(spec.observations):
            if obs.scenario not in solved:
                if obs.scenario is None and not fitted:
                    solved[None] = solution if solution is not None else self.solve()
                else:
                    solved[obs.scenario] = solved_in(obs.scenario, fitted)
            sol = solved[obs.scenario]
            value, why = predict(sol, obs)
            shown, key = model_group(sol, obs.scheme)
            meets = implied(sol, replace(spec.fits[0], scenario=obs.scenario, observation=i), obs) if spec.fits else None
            rows.append(
                ObservedRow(
                    obs.scenario, obs.scheme, str(obs.observable), obs.value, value, OBSERVABLES[obs.observable].dim, obs.text, obs.source,
                    fitted=bool(spec.fits) and spec.fits[0].observation == i, group=shown, group_key=key,
                    better=OBSERVABLES[obs.observable].better, note=why, implied=meets,
                )
            )  # fmt: skip
        return Observed(self.path, tuple(rows), fit, rank_groups(tuple(rows)))

    def sensitivity(self, solution: "Solution | None" = None) -> "Sensitivity":
        """Every quantity's partial derivatives and elasticities with respect to every param (docs/sensitivity.md)."""
        from ctdsl.symbolic.sensitivity import sensitivity

        return sensitivity(solution if solution is not None else self.solve())

    def tornado(self, name: str, solution: "Solution | None" = None) -> "Tornado":
        """Quantity `name` (`adamw.time_to_target`, `breakeven.X.Y.OVER`) at each end of every ranged param's range."""
        from ctdsl.symbolic.tornado import tornado

        return tornado(solution if solution is not None else self.solve(), name)

    def explore(self, path: str | Path | None = None, simulate: bool = False, sensitivity: bool = False) -> str:
        """The interactive explorer (`ctdsl explore`): one offline HTML page; written to `path` when given.
        `simulate`: embed and animate a short recorded simulation run (`ctdsl explore --simulate`);
        `sensitivity`: add a table of the elasticities at the starting values (`ctdsl explore --sensitivity`)."""
        from ctdsl.files import atomic_open
        from ctdsl.report.explore import explorer_html

        sim = None
        if simulate:
            from ctdsl.simulate.trace import record

            sim = record(self.spec)
        sol = self.solve()
        sens = ""
        if sensitivity:
            from ctdsl.report.sensitivity_out import sensitivity_html
            from ctdsl.symbolic.sensitivity import sensitivity as sensitivity_of

            sens = sensitivity_html(sensitivity_of(sol))
        from ctdsl.report.explore.page import opening_comment
        from ctdsl.symbolic.fit import warnings

        text = self.sources.text(self.spec.root) or ""
        diags = sort_diagnostics([*self.diagnostics, *warnings(self.spec, sol.memory)])
        fit = None
        if self.spec.fits:  # the fitted value, as solve's Observed table holds it
            found = self.observe(sol).fit
            fit = (found.param, found.value, found.scenario) if found is not None else None
        html = explorer_html(sol, sim, sens, opening_comment(text), tuple(render_text(d, self.sources) for d in diags), fit)
        if path is not None:
            with atomic_open(path, "w", encoding="utf-8") as fh:
                fh.write(html)
        return html

    def simulate(
        self,
        steps: int | None = None,
        seeds: int | None = None,
        warmup: int | None = None,
        seed: int = 0,
        schemes: list[str] | None = None,
        jobs: int = 1,
        client=None,
        progress=None,
    ) -> "SimResult":
        """Run the SimPy model of every scheme (or `schemes`); settings default to the spec's.

        The (scheme, seed) runs go over `jobs` local processes, or, given a
        `distributed.Client` as `client`, to its cluster as futures; the result is
        the same, bit for bit, either way. `progress(done, total, scheme)` is
        called as each run finishes. A run that raises, or whose worker dies,
        raises `ctdsl.simulate.errors.TaskError` naming it, its `partial` the
        result of the runs that finished.
        """
        from ctdsl.report import notebook  # noqa: F401  (registers how results show themselves)
        from ctdsl.simulate.runner import settings, simulate

        cfg = settings(self.spec, steps, seeds, warmup, seed)
        backend = None
        if client is not None:
            from ctdsl.simulate import cluster

            backend = cluster.backend(client)
        return simulate(self.spec, cfg, schemes, progress=progress, jobs=jobs, backend=backend)

    def sweep(
        self,
        axes: "Mapping[str, tuple | None] | None" = None,
        components: bool = False,
        overrides: dict[str, str] | None = None,
        client=None,
    ) -> "SweepResult":
        """Every scheme over a grid of params, held in memory: `ctdsl sweep`'s columns as numpy arrays.

        `axes` maps a param to `(lo, hi, count)` or `(lo, hi, count, "log")`, the
        ends given with their units as for `--set` ("0.1 GB/s"), or to None for
        the range, count and spacing the spec declares. Without `axes`, the
        params with a sweep in the spec vary (as `ctdsl sweep` does without
        --sweep). An end the spec cannot take raises SpecError, as `load` does.
        Given a `distributed.Client` as `client`, the grid's chunks are evaluated
        on its cluster (a chunked dask.array, `ctdsl[dask]`): the same result.
        """
        from ctdsl.numeric import CompiledForms, Grid
        from ctdsl.numeric.grid import Axis, check_default_grid
        from ctdsl.numeric.sweepdata import collect

        if overrides:
            return self.in_scenario(self.scenario, overrides).sweep(axes, components, client=client)
        spec = self.spec
        if axes is None:
            check_default_grid(spec)
            grid = Grid([Axis.from_param(p) for p in spec.params.values() if p.lo is not None and p.count])
        else:
            for name in axes:
                if name not in spec.params:
                    raise KeyError(f"no param {name!r}; params are: {', '.join(spec.params) or 'none'}")
            requests = [AxisRequest(name) if given is None else AxisRequest(name, str(given[0]), str(given[1]), int(given[2]), *given[3:4]) for name, given in axes.items()]
            grid = Grid(sweep_axes(self, requests))
        if client is not None:
            from ctdsl.numeric.dask_sweep import collect_on

            return collect_on(client, CompiledForms(self.solve()), grid, components)
        return collect(CompiledForms(self.solve()), grid, components)

    def __repr__(self) -> str:
        s = self.spec
        from ctdsl.report.words import count_of

        return f"<Study {self.path}: {count_of(len(s.schemes), 'scheme')}, {count_of(len(s.dcs), 'dc')}, {count_of(len(s.params), 'param')}>"


def recheck(study: Study, overrides: dict[str, str]) -> CheckResult:
    """The study's spec checked again with `overrides` (on top of its own), from the syntax trees
    it was loaded from: not read from disk again, where the file may have changed since."""
    return _again(study, {**study.overrides, **overrides}, study.scenario, noted=False)


def _again(study: Study, overrides: dict[str, str], scenario: str | None, noted: bool) -> CheckResult:
    """The study's syntax trees checked at `overrides` in `scenario` (None: as written); `noted`:
    each error notes the scenario, as `check` notes a scenario's own."""
    loaded = study.loaded
    sources = Sources()
    sources.merge(loaded.sources)
    again = Loaded(loaded.root, loaded.files, sources, loaded.std, loaded.parse_failed)
    sink = DiagnosticSink()
    spec = Checker(again, sink, overrides, scenario).run()
    if noted and scenario is not None:
        _in_scenario(sink, study.spec.scenarios[scenario])
    return _checked(study.path, spec, sink, sources, again, study.text)


@dataclass(frozen=True)
class AxisRequest:
    """One axis of a sweep as asked for: a param's own range, spacing and count (`lo` None), or
    `count` points from `lo` to `hi`, each end a value with its unit as for `--set`. `where` names
    the request in diagnostics (`--sweep wan_bw`), `text` is what was written there."""

    name: str
    lo: str | None = None
    hi: str | None = None
    count: int | None = None
    spacing: str = "lin"
    where: str | None = None
    text: str | None = None


def sweep_axes(study: Study, requests: "list[AxisRequest]") -> "list[Axis]":
    """The axes of a sweep asked for: the one place a requested grid is bounded and its ends read,
    for `ctdsl sweep --sweep`, `ctdsl simulate --sweep` and `Study.sweep`. Raises SpecError with
    every diagnostic (the names were checked by the caller):

    1. the size, from the counts alone, before anything is built: each axis within
       MAX_SWEEP_POINTS and the grid within MAX_GRID_POINTS, the bound a declared sweep has
       (CT607, `ctdsl.numeric.grid.size_problems`);
    2. the ends, read as `--set` values are: the spec checked again with every low end, then
       with every high end (`recheck`: from the trees loaded, not from disk), so that a bad unit
       or a value the spec cannot take is the diagnostic `--set` gives, said of the sweep;
    3. the order: the low end below the high one, a log axis's low end above zero (CT307).
    """
    from ctdsl.numeric.grid import Axis, size_problems

    spec = study.spec
    sources = Sources()
    sources.merge(study.sources)
    for r in requests:
        if r.where is not None and r.text is not None:
            sources.add(r.where, r.text)
    spans = {r.name: _whole(r) for r in requests}
    counts = [(r.name, r.count if r.lo is not None else (spec.params[r.name].count or 11), spans[r.name]) for r in requests]
    problems = size_problems(counts, declared=False)
    if problems:
        raise SpecError(problems, sources)
    explicit = [r for r in requests if r.lo is not None]
    ends: dict[str, dict[str, float]] = {"low": {}, "high": {}}
    for end in ("low", "high") if explicit else ():
        given = {r.name: (r.lo if end == "low" else r.hi) for r in explicit}
        result = recheck(study, given)
        if not result.ok:
            said = ", ".join(f"{name} = {value}" for name, value in given.items())
            for r in explicit:
                text = result.sources.text(f"--set {r.name}")
                if text is not None:
                    sources.add(f"{_label(r)} ({end} end)", text)
            raise SpecError([_of_sweep(d, explicit, end, said) for d in result.diagnostics], sources)
        for r in explicit:
            ends[end][r.name] = float(result.spec.params[r.name].default)
    axes, problems = [], []
    for r in requests:
        if r.lo is None:
            axes.append(Axis.from_param(spec.params[r.name]))
            continue
        lo, hi = ends["low"][r.name], ends["high"][r.name]
        if r.count > 1 and not lo < hi:
            problems.append(Diagnostic("CT307", f"{_label(r)}: the range must go from low to high", spans[r.name], help="write lo:hi:n with lo below hi"))
        elif r.spacing == "log" and lo <= 0:
            problems.append(Diagnostic("CT307", f"{_label(r)}: a log sweep needs a positive low end", spans[r.name], help="use lin, or a low end above zero"))
        else:
            axes.append(Axis(r.name, lo, hi, r.count, r.spacing))
    if problems:
        raise SpecError(sort_diagnostics(problems), sources)
    return axes


def _label(r: AxisRequest) -> str:
    return r.where or f"sweep {r.name}"


def _whole(r: AxisRequest) -> "Span | None":
    """The whole request as written, as a span of its own source."""
    if r.where is None or r.text is None:
        return None
    return Span(r.where, 1, 1, 1, len(r.text) + 1)


def _of_sweep(d: Diagnostic, explicit: "list[AxisRequest]", end: str, given: str) -> Diagnostic:
    """A diagnostic from checking one end of the sweeps, said in the sweep's terms."""
    names = {f"--set {r.name}": f"{_label(r)} ({end} end)" for r in explicit}

    def fix(span):
        return replace(span, file=names[span.file]) if span is not None and span.file in names else span

    return replace(
        d,
        message=d.message.replace("--set", "--sweep"),
        span=fix(d.span),
        secondary=tuple(Label(fix(lab.span), lab.text) for lab in d.secondary),
        notes=tuple(d.notes) + (f"with the {end} end of the sweep: {given}",),
    )


def check_runnable(path: str | Path, text: str | None = None, overrides: dict[str, str] | None = None, scenario: str | None = None) -> CheckResult:
    """`check`, for a spec that is to run: a file without a dc is a library, and checks
    clean, but cannot be solved (CT410 when it has schemes)."""
    return _runnable(check(path, text, overrides, scenario))


def _runnable(result: CheckResult) -> CheckResult:
    """A clean check's result as it is, or without its spec and with CT410 where it is a library (schemes, no dc): it cannot be solved."""
    if result.spec is None:
        return result
    sink = DiagnosticSink()
    require_runnable(result.spec, sink)
    if not sink.items:
        return result
    return CheckResult(result.path, None, sort_diagnostics([*result.diagnostics, *sink.items]), result.sources, result.loaded, result.text)


def sweep_ends(path: str | Path, overrides: dict[str, str], ends: dict[str, tuple[str, str]]) -> dict[str, CheckResult]:
    """The spec checked at each end of the sweeps, `{"low": ..., "high": ...}`: every param of `ends`
    (name -> (low, high), each written as --set writes a value) at that end, the other `overrides`
    as given. The one place a sweep's ends are read: `ctdsl sweep --sweep` and `Study.sweep`."""
    return {end: check(path, overrides={**overrides, **{n: pair[i] for n, pair in ends.items()}}) for i, end in enumerate(("low", "high"))}


def load(path: str | Path, overrides: dict[str, str] | None = None, scenario: str | None = None) -> Study:
    """Parse and check a spec (in `scenario`, when named: its values in place of the defaults);
    raise SpecError (with every diagnostic) if it has errors, KeyError for an unknown scenario."""
    try:
        result = check_runnable(path, None, overrides, scenario)
    except Unreadable as exc:
        raise FileNotFoundError(str(exc)) from None
    if not result.ok:
        raise SpecError(list(result.diagnostics), result.sources)
    return Study(result, overrides, scenario)


__all__ = ["load", "check", "recheck", "sweep_axes", "AxisRequest", "Study", "SpecError", "CheckResult", "Unreadable"]
