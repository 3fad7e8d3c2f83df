"""Checking scenarios: `scenario NAME { PARAM = VALUE; ... }`, a named set of param values.

Each value is checked as `--set` checks one (`ctdsl.check.params`): a constant (CT309)
of the param's dimension (CT202), inside the param's declared range (CT316: an error here,
where `--set` only warns, since the spec declares both), and a whole number of at least 1
where a count is set to the param directly (CT305, CT301; checked once the blocks have
said which params are counts). Every other bound is checked when the spec is checked in
the scenario (`Checker(scenario=NAME)`), as for `--set`: solve and validate do that for
every scenario they solve. A scenario holds fields only (CT117), each param once (CT106),
each naming a param (CT101, CT102); two scenarios of one name are CT103. Scenario names
are a namespace of their own: only `observe` and `fit` name them (`ctdsl.check.observed`).
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.check.exprs import ExprTyper, Typed, constant_value
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.language.tolerances import REL
from ctdsl.model import expr as E
from ctdsl.model.entities import Param
from ctdsl.model.observed import Scenario
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


def constant(sink: DiagnosticSink, node: ast.Expr, what: str) -> tuple[Typed, float] | None:
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


def source_text(sources, node) -> str:
    """The value as written, from the source; a number with its unit where the source is not at hand."""
    span = node.span
    line = sources.line(span.file, span.line) if sources is not None else None
    if line is not None and span.end_line == span.line:
        return line[span.col - 1 : span.end_col - 1]
    if isinstance(node, ast.Number):
        return node.text + (f" {node.unit}" if node.unit else "")
    return ""


class ScenarioChecker:
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
            texts[key] = source_text(self.sources, item.value)
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
        got = constant(self.sink, item.value, f"a scenario's value of '{key}'")
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


def check_scenarios(ns, sink: DiagnosticSink, params: dict[str, Param], sources) -> tuple[dict[str, Scenario], ScenarioChecker]:
    """The scenarios, typed against the params (run before the blocks: a scenario's values
    take the place of the defaults). The second value checks the counts once they are known."""
    checker = ScenarioChecker(ns, sink, params, sources)
    return checker.check(), checker


__all__ = ["ScenarioChecker", "check_scenarios", "constant", "scenario_nodes", "source_text"]
