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
            ok = True
            for n in (stmt.x, stmt.y):
                ok &= self.ns.expect(n, "scheme")
            ok &= self.ns.expect(stmt.over, "param")
            if ok and stmt.x.text == stmt.y.text:
                self.sink.error("CT415", "a break-even compares two different schemes", stmt.span)
                ok = False
            on = stmt.on.text if stmt.on is not None else S.BREAKEVEN_ON[0]
            if on not in S.BREAKEVEN_ON:
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

__all__ = ["Checker", "Span"]
