"""Checking observations and the fit: `observe` and `fit` statements (the scenarios they
name are checked by `ctdsl.check.scenarios`).

An observation names a known observable (CT108), a scheme (CT101, CT102; without `of`,
the spec's only scheme, else CT119), a scenario if any (CT101), a constant value (CT309)
of the observable's dimension (CT202) within its bound (CT301, CT302), and its source
(CT118). The time to target needs the scheme's `steps` (CT105). The observations name at
most `MAX_OBSERVED_SCENARIOS` scenarios (CT318): solving each is a full check and solve,
so the bound is on the work solve and validate do, checked before any of it (kept here, with
the check; docs/language.md lists it with the back ends' bounds).

A fit names a param with a range to look in, that takes any value in it (not a count:
CT121) and that no scenario sets (CT121); a scenario with exactly one observation (CT120);
one fit a spec (CT122).
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.check.scenarios import ScenarioChecker, constant, source_text
from ctdsl.diagnostics import DiagnosticSink, Label, did_you_mean
from ctdsl.language.enums import Observable
from ctdsl.language.observables import OBSERVABLES
from ctdsl.model.observed import Fit, Observation, Scenario
from ctdsl.syntax import ast

MAX_OBSERVED_SCENARIOS = 128  # scenarios the observations name, each a full check and solve in solve and validate


def check_observed(ns, sink: DiagnosticSink, draft, scenarios: dict[str, Scenario], whole: ScenarioChecker, counts: set[str]) -> None:
    """Check the observations and the fit against the built schemes; fill `draft.scenarios`,
    `draft.observations` and `draft.fits`."""
    whole.check_whole(scenarios, counts)
    draft.scenarios = scenarios
    known = {s.name.text for s in ns.scenarios}
    named: set = set()
    for stmt in ns.observes:
        named.add(stmt.scenario.text if stmt.scenario is not None else None)
        if len(named) > MAX_OBSERVED_SCENARIOS:
            sink.error(
                "CT318",
                f"the observations name more than {MAX_OBSERVED_SCENARIOS} scenarios, each checked and solved in full",
                stmt.span,
                help="split the measurements over several specs (ctdsl validate takes a directory)",
            )
            return
        obs = _observation(ns, sink, draft, stmt, known, whole)
        if obs is not None:
            draft.observations.append(obs)
    for i, stmt in enumerate(ns.fits):
        if i > 0:
            sink.error(
                "CT122",
                "a spec fits one param; this is a second fit",
                stmt.span,
                secondary=(Label(ns.fits[0].span, "the first fit"),),
                help="fit one efficiency on one observation; every other observation tests it",
            )
            continue
        fit = _fit(ns, sink, draft, stmt, known, counts)
        if fit is not None:
            draft.fits.append(fit)


def _unknown_scenario(sink: DiagnosticSink, name: ast.Name, known: set[str]) -> None:
    sink.error(
        "CT101",
        f"unknown scenario '{name.text}'",
        name.span,
        label="not defined",
        help=did_you_mean(name.text, known) or (f"scenarios are: {', '.join(sorted(known))}" if known else "define it: scenario NAME { param = value }"),
    )


def _observation(ns, sink: DiagnosticSink, draft, stmt: ast.Observe, known: set[str], whole: ScenarioChecker) -> Observation | None:
    ok = True
    word = stmt.observable.text
    spec = OBSERVABLES.get(word) if word in set(Observable) else None
    if spec is None:
        choices = ", ".join(Observable)
        sink.error(
            "CT108",
            f"an observation is one of {choices}, not '{word}'",
            stmt.observable.span,
            label="not an observable",
            help=did_you_mean(word, list(Observable)),
        )
        ok = False
    scheme = _subject(ns, sink, draft, stmt)
    ok &= scheme is not None
    if stmt.scenario is not None and stmt.scenario.text not in known:
        _unknown_scenario(sink, stmt.scenario, known)
        ok = False
    if stmt.source is None:
        sink.error(
            "CT118",
            "an observation says where it was measured: add source \"...\"",
            stmt.span,
            label="no source",
            help='e.g. ... = 3.5665 s source "vTrain data/ground_truth_multi.csv, row 1"',
        )
        ok = False
    value = _observed_value(sink, stmt, spec) if spec is not None else None
    if not ok or value is None or spec is None:
        return None
    if spec.name is Observable.TIME_TO_TARGET and draft.schemes[scheme].steps is None:
        s = draft.schemes[scheme]
        sink.error(
            "CT105",
            f"the time to target of scheme '{scheme}' needs its steps to target",
            stmt.observable.span,
            secondary=(Label(s.span, "scheme defined here"),),
            help=f"give scheme '{scheme}' its steps to target (steps = N), or observe its step_time",
        )
        return None
    return Observation(
        spec.name,
        scheme,
        stmt.scenario.text if stmt.scenario is not None else None,
        value,
        source_text(whole.sources, stmt.value),
        stmt.source.text,
        stmt.span,
    )


def _subject(ns, sink: DiagnosticSink, draft, stmt: ast.Observe) -> str | None:
    if stmt.subject is not None:
        if not ns.expect(stmt.subject, "scheme"):
            return None
        return stmt.subject.text if stmt.subject.text in draft.schemes else None
    schemes = list(draft.schemes)
    if len(schemes) == 1:
        return schemes[0]
    sink.error(
        "CT119",
        f"this observation names no scheme, and the spec has {len(schemes) or 'no'} scheme{'s' if len(schemes) != 1 else ''}",
        stmt.observable.span,
        label="of which scheme?",
        help=f"name it: observe {stmt.observable.text} of {schemes[0]} ..." if schemes else "define the scheme the measurement ran",
    )
    return None


def _observed_value(sink: DiagnosticSink, stmt: ast.Observe, spec) -> float | None:
    got = constant(sink, stmt.value, "an observed value")
    if got is None:
        return None
    typed, value = got
    if typed.dim != spec.dim:
        sink.error(
            "CT202",
            f"an observed {spec.name} must be {spec.dim.describe()}, not {typed.dim.describe()}",
            stmt.value.span,
            label=typed.dim.describe(),
            help=f"e.g. observe {spec.name} ... = {spec.example}",
        )
        return None
    if spec.bound == "fraction" and not 0 < value <= 1:
        sink.error("CT302", f"an observed {spec.name} is a fraction in (0, 1], not {value:g}", stmt.value.span, help=f"e.g. {spec.example}, or 41 %")
        return None
    if spec.bound == "positive" and value <= 0:
        sink.error("CT301", f"an observed {spec.name} must be above 0, not {U.format_quantity(value, spec.dim)}", stmt.value.span)
        return None
    return value


def _fit(ns, sink: DiagnosticSink, draft, stmt: ast.Fit, known: set[str], counts: set[str]) -> Fit | None:
    ok = ns.expect(stmt.param, "param")
    name = stmt.param.text
    p = draft.params.get(name) if ok else None
    if ok and p is not None:
        if p.lo is None:
            sink.error(
                "CT121",
                f"param '{name}' has no range to fit it in",
                stmt.param.span,
                label="no range",
                secondary=(Label(p.span, "param declared here"),),
                help=f"give {name} a range: add `in LOW .. HIGH` after its default",
            )
            ok = False
        elif name in counts:
            sink.error(
                "CT121",
                f"param '{name}' is a count (a whole number), which a fit cannot solve for",
                stmt.param.span,
                label="a count",
                help="fit an efficiency, a continuous param; set a count in each scenario",
            )
            ok = False
        for s in draft.scenarios.values():
            if name in s.values:
                sink.error(
                    "CT121",
                    f"scenario '{s.name}' sets '{name}', which the fit solves for and holds for every observation",
                    s.spans[name],
                    secondary=(Label(stmt.param.span, "fitted here"),),
                    help=f"remove {name} from scenario '{s.name}'",
                )
                ok = False
    elif p is None:
        ok = False
    scenario = stmt.scenario.text
    if scenario not in known:
        _unknown_scenario(sink, stmt.scenario, known)
        return None
    found = [i for i, o in enumerate(draft.observations) if o.scenario == scenario]
    if len(found) != 1:
        sink.error(
            "CT120",
            f"a fit meets one observation, and scenario '{scenario}' has {len(found) or 'none'}",
            stmt.scenario.span,
            label=f"{len(found)} observations",
            help=f"add an observation in it (observe step_time in {scenario} ...)" if not found else "fit on a scenario with one observation",
        )
        return None
    if not ok:
        return None
    return Fit(name, scenario, found[0], stmt.span)


__all__ = ["check_observed", "MAX_OBSERVED_SCENARIOS"]
