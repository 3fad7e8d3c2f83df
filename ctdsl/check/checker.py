"""The checker: loaded syntax trees -> a checked `Spec`, or diagnostics.

It runs in passes and never stops at the first problem:

1. collect every definition into one namespace (duplicates point at both);
2. type params (constants with units, ranges, sweeps; `params.py`);
3. type every field of every block against its kind's schema: unknown fields,
   dimensions, names of the right kind, bounds at the defaults and range ends
   (`blocks.py`, `fields.py`);
4. build the typed definitions, each once, from the checked values (`build.py`);
5. check that what is used is complete, the topology, and where each scheme's
   work runs; build the graph (`topology.py`, `complete.py`, `placement.py`);
   then the same for each variant of the sites, resolved against the declared
   dcs and WAN links, with a graph of its own (`variants.py`);
6. the statements that tie definitions together: break-evens and the baseline;
7. measurements: scenarios (typed against the params before the blocks), observed
   points and the fit (`scenarios.py`, `observed.py`).

Checked "in" a scenario (`scenario=NAME`), the scenario's values take the place of
the params' defaults, as `--set` values do, and every check runs at them.

The passes fill a `Draft`; only when no error was found is it frozen into the
`Spec` that is returned, carrying its topology.
"""

from __future__ import annotations

from dataclasses import replace

from ctdsl.check.blocks import BlockChecker
from ctdsl.check.build import Builder
from ctdsl.check.draft import Draft
from ctdsl.check.fields import FieldReader
from ctdsl.check.loader import Loaded
from ctdsl.check.money import check_money
from ctdsl.check.names import Namespace
from ctdsl.check.observed import check_observed
from ctdsl.check.scenarios import check_scenarios, scenario_nodes
from ctdsl.check.params import ParamChecker
from ctdsl.check.schedule import check_schedules
from ctdsl.check.search import check_searches
from ctdsl.check.serving import check_serving
from ctdsl.check.targets import check_targets
from ctdsl.check.topology import check_topology
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.language import schema as S
from ctdsl.model import entities as M


class Checker:
    def __init__(self, loaded: Loaded, sink: DiagnosticSink, overrides: dict[str, str] | None = None, scenario: str | None = None):
        """`scenario` names a scenario of the spec whose values replace the defaults (KeyError if none has that name)."""
        self.loaded = loaded
        self.overrides = dict(overrides or {})
        self.scenario = scenario
        self.sink = sink
        self.ns = Namespace(sink)
        self.draft = Draft(root=loaded.root, files=[f.path for f in loaded.files])

    def run(self) -> M.Spec | None:
        self.ns.collect(self.loaded.files, self.loaded.std, self.loaded.root)
        if self.ns.too_many:  # a cut namespace would report every later name as unknown: CT621 alone
            return None
        given = scenario_nodes(self.ns, self.scenario) if self.scenario is not None else None
        self.draft.params = ParamChecker(self.loaded, self.sink, self.ns, self.overrides, given).params()
        scenarios, scenario_checker = check_scenarios(self.ns, self.sink, self.draft.params, self.loaded.sources)
        blocks = BlockChecker(self.ns, self.sink, FieldReader(self.ns, self.sink, self.draft.params))
        for d in self.ns.of_kind(*S.KINDS):
            block = self.ns.merged(d.name)
            if block is not None:
                blocks.validate(block)
        Builder(self.ns, self.sink, blocks, self.draft).build()
        check_serving(self.ns, self.sink, blocks, self.draft)
        topology = check_topology(self.draft, self.ns, self.sink, blocks)
        check_money(self.draft, self.sink)
        check_schedules(self.draft, self.sink)
        self._statements()
        check_searches(self.ns, self.sink, self.draft)
        check_targets(self.ns, self.sink, self.draft)
        check_observed(self.ns, self.sink, self.draft, scenarios, scenario_checker, blocks.reader.counts)
        if self.sink.has_errors or topology is None:
            return None
        self.draft.whole = set(blocks.reader.counts)
        # the fields' bounds, then the others (a ring's sites), each numbered as a field of its own
        fields = len(blocks.reader._fields)
        others = [replace(b, field=fields + k) for k, b in enumerate(self.draft.bounds)]
        self.draft.bounds = blocks.reader.bounds + others
        return self.draft.freeze(topology)

    # ---- statements that tie definitions together -------------------------------

    def _statements(self) -> None:
        schemes = self.draft.schemes
        for stmt in self.ns.breakevens:
            kinds = [self.ns.defs[n.text].kind if n.text in self.ns.defs else None for n in (stmt.x, stmt.y)]
            if "handoff" in kinds:
                self._handoff_breakeven(stmt, kinds)
                continue
            ok = True
            for n in (stmt.x, stmt.y):
                ok &= self.ns.expect(n, "scheme")
            ok &= self.ns.expect(stmt.over, "param")
            if ok and stmt.x.text == stmt.y.text:
                self.sink.error("CT415", "a break-even compares two different schemes", stmt.span)
                ok = False
            on = stmt.on.text if stmt.on is not None else S.BREAKEVEN_ON[0]
            if on in S.SERVING_BREAKEVEN_ON and on not in S.BREAKEVEN_ON:
                self.sink.error(
                    "CT478",
                    f"a break-even of two schemes compares their {', '.join(S.BREAKEVEN_ON)} to target, not '{on}', a measure of a serving path",
                    stmt.on.span,
                    help="compare two hand-offs on " + on + " instead, or these schemes on time, energy, cost or co2e",
                )
                ok = False
            elif on not in S.BREAKEVEN_ON:
                choices = ", ".join(S.BREAKEVEN_ON)
                self.sink.error("CT108", f"a break-even compares one of {choices} to target, not '{on}'", stmt.on.span, help=did_you_mean(on, S.BREAKEVEN_ON))
                ok = False
            if ok and stmt.x.text in schemes and stmt.y.text in schemes:
                self.draft.breakevens.append(M.Breakeven(stmt.x.text, stmt.y.text, stmt.over.text, stmt.span, on))
        for i, stmt in enumerate(self.ns.baselines):
            if i > 0:
                self.sink.error(
                    "CT103",
                    "the baseline is named twice",
                    stmt.span,
                    secondary=(Label(self.ns.baselines[0].span, "first named here"),),
                )
                continue
            if self.ns.expect(stmt.scheme, "scheme"):
                self.draft.baseline = stmt.scheme.text

    def _handoff_breakeven(self, stmt, kinds: list[str | None]) -> None:
        """`breakeven h1 vs h2 over p on ttft_p`: two hand-offs compared on a serving path's measure,
        on the paths of the first workload whose requests can take either (docs/serving.md)."""
        names = (stmt.x, stmt.y)
        if kinds[0] != kinds[1]:
            i = kinds.index("handoff")
            other, handoff = names[1 - i], names[i]
            if kinds[1 - i] != "scheme":
                self.ns.expect(other, "handoff")  # CT101 or CT102, with the near names
                return
            self.sink.error(
                "CT476",
                f"a break-even compares two schemes or two hand-offs, not scheme '{other.text}' with hand-off '{handoff.text}'",
                other.span,
                label="a training scheme",
                help="training and serving share no measure: compare two schemes, or two hand-offs",
            )
            return
        ok = self.ns.expect(stmt.over, "param")
        if stmt.x.text == stmt.y.text:
            self.sink.error("CT479", "a break-even compares two different hand-offs", stmt.span)
            ok = False
        on = stmt.on.text if stmt.on is not None else S.SERVING_BREAKEVEN_ON[0]
        if on not in S.SERVING_BREAKEVEN_ON:
            choices = ", ".join(S.SERVING_BREAKEVEN_ON)
            if on in S.BREAKEVEN_ON:
                self.sink.error(
                    "CT475",
                    f"two hand-offs are compared on one of {choices} (a serving path's, at its workload's rate), not '{on}', a measure of training to target",
                    stmt.on.span,
                    help="ttft_p is the TTFT at the SLO's percentile; energy is the energy per output token",
                )
            else:
                self.sink.error("CT108", f"a break-even of hand-offs compares one of {choices}, not '{on}'", stmt.on.span, help=did_you_mean(on, S.SERVING_BREAKEVEN_ON))
            ok = False
        serving = self.draft.serving
        if not ok or serving is None:
            return
        taken: dict[str, set[str]] = {}
        for path in serving.paths:
            if path.handoff is not None:
                taken.setdefault(path.workload, set()).add(path.handoff)
        both = [w for w, hs in taken.items() if {stmt.x.text, stmt.y.text} <= hs]
        if not both:
            def of(h: str) -> str:
                ws = [w for w, hs in taken.items() if h in hs]
                return f"'{h}' carries {', '.join(repr(w) for w in ws)}" if ws else f"no workload's requests take '{h}'"
            self.sink.error(
                "CT477",
                f"no one workload's requests can take both hand-offs: {of(stmt.x.text)}; {of(stmt.y.text)}",
                stmt.span,
                help="two hand-offs are compared on the paths of one workload: hand-offs that leave the pool its requests enter",
            )
            return
        self.draft.breakevens.append(M.Breakeven(stmt.x.text, stmt.y.text, stmt.over.text, stmt.span, on, both[0]))


__all__ = ["Checker", "Span"]
