"""Checking measurements: `scenario`, `observe` and `fit` statements.

A scenario is a named set of param values. Each value is checked as `--set` checks
one (`ctdsl.check.params`): a constant (CT309) of the param's dimension (CT202),
inside the param's declared range (CT316: an error here, where `--set` only warns,
since the spec declares both), and a whole number of at least 1 where a count is set
to the param directly (CT305, CT301). Every other bound is checked when the spec is
checked in the scenario (`Checker(scenario=NAME)`), as for `--set`: solve and
validate do that for every scenario they solve. A scenario holds fields only
(CT117), each param once (CT106), each naming a param (CT101, CT102); two scenarios
of one name are CT103. Scenario names are a namespace of their own: only `observe`
and `fit` name them.

An observation names a known observable (CT108), a scheme (CT101, CT102; without
`of`, the spec's only scheme, else CT119), a scenario if any (CT101), a constant
value (CT309) of the observable's dimension (CT202) within its bound (CT301, CT302),
and its source (CT118). The time to target needs the scheme's `steps` (CT105). The
observations name at most `limits.MAX_OBSERVED_SCENARIOS` scenarios (CT318): solving
each is a full check and solve.

A fit names a param with a range to look in, that takes any value in it (not a
count: CT121) and that no scenario sets (CT121); a scenario with exactly one
observation (CT120); one fit a spec (CT122).
"""

from __future__ import annotations

from ctdsl import limits
from ctdsl import units as U
from ctdsl.check.exprs import ExprTyper, Typed, constant_value
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.language.enums import Observable
from ctdsl.language.observables import OBSERVABLES
from ctdsl.language.tolerances import REL
from ctdsl.model import expr as E
from ctdsl.model.entities import Param
from ctdsl.model.observed import Fit, Observation, Scenario
from ctdsl.syntax import ast


def scenario_nodes(ns, name: str) -> dict[str, ast.Expr]:
    """The values scenario `name` writes, by param (its first definition; fields only): what
    `Checker(scenario=name)` puts in place of the defaults. KeyError if there is no such scenario."""
    for stmt in ns.scenarios:
        if stmt.name.text == name:
            out: dict[str, ast.Expr] = {}
            for item in stmt.items:
                if isinstance(item, ast.Field) and not isinstance(item.value, (ast.ListValue, ast.StringValue)):
                    out.setdefault(item.key.text, item.value)
            return out
    raise KeyError(name)


def _refuse(sink: DiagnosticSink, what: str):
    def resolve(r: ast.Ref):
        sink.error(
            "CT309",
            f"{what} is a constant, not '{r.dotted}'",
            r.span,
            label="not a constant",
            help="write a number with its unit, e.g. 8 or 150 GB/s",
        )
        return None

    return resolve


def _constant(sink: DiagnosticSink, node: ast.Expr, what: str) -> tuple[Typed, float] | None:
    typed = ExprTyper(sink, _refuse(sink, what)).type(node)
    if typed is None:
        return None
    exact = constant_value(typed)
    if exact is None:  # pragma: no cover  (refs are refused above; ceil and log2 of constants fold)
        return None
    try:
        return typed, E.evaluate(typed.expr, {})
    except E.EvalError as err:
        sink.error("CT306", f"{what} cannot be evaluated: {err}", node.span)
        return None


def _text(sources, node) -> str:
    """The value as written, from the source; a number with its unit where the source is not at hand."""
    span = node.span
    line = sources.line(span.file, span.line) if sources is not None else None
    if line is not None and span.end_line == span.line:
        return line[span.col - 1 : span.end_col - 1]
    if isinstance(node, ast.Number):
        return node.text + (f" {node.unit}" if node.unit else "")
    return ""


class _Scenarios:
    """The scenarios' values, typed against the params (CT101-CT117, CT202, CT309, CT316)."""

    def __init__(self, ns, sink: DiagnosticSink, params: dict[str, Param], sources):
        self.ns = ns
        self.sink = sink
        self.params = params
        self.sources = sources
        self.nodes: dict[tuple[str, str], ast.Field] = {}  # (scenario, param) -> its field

    def check(self) -> dict[str, Scenario]:
        out: dict[str, Scenario] = {}
        first: dict[str, ast.Scenario] = {}
        for stmt in self.ns.scenarios:
            name = stmt.name.text
            if name in first:
                self.sink.error(
                    "CT103",
                    f"scenario '{name}' is defined twice",
                    stmt.name.span,
                    label="defined again here",
                    secondary=(Label(first[name].name.span, "first defined here"),),
                    help="give each scenario its own name",
                )
                continue
            first[name] = stmt
            scenario = self._scenario(stmt)
            if scenario is not None:
                out[name] = scenario
        return out

    def _scenario(self, stmt: ast.Scenario) -> Scenario | None:
        name = stmt.name.text
        values: dict[str, float] = {}
        texts: dict[str, str] = {}
        spans: dict[str, Span] = {}
        seen: dict[str, ast.Field] = {}
        ok = True
        for item in stmt.items:
            if not isinstance(item, ast.Field):
                what = "a WAN statement" if isinstance(item, ast.Wan) else f"a stage '{item.name.text}'"
                self.sink.error(
                    "CT117",
                    f"scenario '{name}' holds {what}; a scenario sets params: param = value",
                    item.span,
                    help="write each param's value on a line of its own, e.g. tp = 2",
                )
                ok = False
                continue
            key = item.key.text
            if key in seen:
                self.sink.error(
                    "CT106",
                    f"scenario '{name}' sets '{key}' twice",
                    item.key.span,
                    label="set again here",
                    secondary=(Label(seen[key].key.span, "first set here"),),
                )
                ok = False
                continue
            seen[key] = item
            value = self._value(name, item)
            if value is None:
                ok = False
                continue
            values[key] = value
            texts[key] = _text(self.sources, item.value)
            spans[key] = item.value.span
            self.nodes[(name, key)] = item
        if not ok:
            return None
        return Scenario(name, values, texts, spans, stmt.name.span)

    def _value(self, scenario: str, item: ast.Field) -> float | None:
        key = item.key.text
        d = self.ns.defs.get(key)
        if d is None:
            self.sink.error(
                "CT101",
                f"scenario '{scenario}' sets unknown param '{key}'",
                item.key.span,
                label="not a param",
                help=did_you_mean(key, self.ns.names_of("param")) or f"params are: {', '.join(self.ns.names_of('param')) or 'none'}",
            )
            return None
        if d.kind != "param":
            self.sink.error(
                "CT102",
                f"a scenario sets params, but '{key}' is a {d.kind}",
                item.key.span,
                secondary=(Label(d.span, f"{d.kind} defined here"),),
                help=f"declare a param for the value and use it in {d.kind} '{key}'",
            )
            return None
        p = self.params.get(key)
        if p is None:  # its own definition failed to check: reported there
            return None
        if isinstance(item.value, (ast.ListValue, ast.StringValue)):
            self.sink.error("CT206", f"scenario '{scenario}' gives '{key}' a {'list' if isinstance(item.value, ast.ListValue) else 'string'}; a param takes a number with its unit", item.value.span)
            return None
        got = _constant(self.sink, item.value, f"a scenario's value of '{key}'")
        if got is None:
            return None
        typed, value = got
        if typed.dim != p.dim:
            self.sink.error(
                "CT202",
                f"param '{key}' is {p.dim.describe()}, but scenario '{scenario}' gives it {typed.dim.describe()}",
                item.value.span,
                label=typed.dim.describe(),
                secondary=(Label(p.span, "param declared here"),),
                help=f"give a value with a unit of {p.dim.describe()}" if p.dim != U.ONE else "give a plain number",
            )
            return None
        if p.lo is not None and not p.lo <= value <= p.hi:
            shown = U.format_quantity(value, p.dim)
            self.sink.error(
                "CT316",
                f"scenario '{scenario}' sets {key} = {shown}, outside its range {U.format_quantity(p.lo, p.dim)} .. {U.format_quantity(p.hi, p.dim)}",
                item.value.span,
                label=shown,
                secondary=(Label(p.span, "param declared here"),),
                help=f"widen the range of {key} if the value is meant",
            )
            return None
        return value

    def check_whole(self, scenarios: dict[str, Scenario], counts: set[str]) -> None:
        """A value of a param that a count is set to directly is a whole number of at least 1 (CT305, CT301)."""
        for s in scenarios.values():
            for key, value in s.values.items():
                if key not in counts:
                    continue
                node = self.nodes[(s.name, key)].value
                if abs(value - round(value)) > REL * max(1.0, abs(value)):
                    self.sink.error(
                        "CT305",
                        f"scenario '{s.name}' sets {key} = {value:g}, but {key} is a count: a whole number",
                        node.span,
                        help="counts of replicas, degrees, layers and micro-batches are whole numbers",
                    )
                elif round(value) < 1:
                    self.sink.error(
                        "CT301",
                        f"scenario '{s.name}' sets {key} = {value:g}, but {key} is a count of at least 1",
                        node.span,
                        label=f"{value:g}",
                    )


def check_scenarios(ns, sink: DiagnosticSink, params: dict[str, Param], sources) -> tuple[dict[str, Scenario], _Scenarios]:
    """The scenarios, typed against the params (run before the blocks: a scenario's values
    take the place of the defaults). The second value checks the counts once they are known."""
    checker = _Scenarios(ns, sink, params, sources)
    return checker.check(), checker


def check_observed(ns, sink: DiagnosticSink, draft, scenarios: dict[str, Scenario], whole: "_Scenarios", counts: set[str]) -> None:
    """Check the observations and the fit against the built schemes; fill `draft.scenarios`,
    `draft.observations` and `draft.fits`."""
    whole.check_whole(scenarios, counts)
    draft.scenarios = scenarios
    known = {s.name.text for s in ns.scenarios}
    named: set = set()
    for stmt in ns.observes:
        named.add(stmt.scenario.text if stmt.scenario is not None else None)
        if len(named) > limits.MAX_OBSERVED_SCENARIOS:
            sink.error(
                "CT318",
                f"the observations name more than {limits.MAX_OBSERVED_SCENARIOS} scenarios, each checked and solved in full",
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


def _observation(ns, sink: DiagnosticSink, draft, stmt: ast.Observe, known: set[str], whole: "_Scenarios") -> Observation | None:
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
        _text(whole.sources, stmt.value),
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
    got = _constant(sink, stmt.value, "an observed value")
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


__all__ = ["check_scenarios", "check_observed", "scenario_nodes"]
