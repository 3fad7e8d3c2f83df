"""Checks that need the whole model: sizes, the WAN statements, the topology, and
then completeness (`complete.py`) and where each scheme's work may run
(`placement.py`).

- The topology stays within the modelled sizes (workers per dc, workers, dcs).
- The WAN statements name dcs and a link, each direction once; the graph built
  from them must let every worker reach every other.
- The graph is built here, once, when nothing before it failed; the checker
  hands it on with the `Spec` (`spec.topology`).
"""

from __future__ import annotations

from ctdsl import limits
from ctdsl.check.blocks import BlockChecker
from ctdsl.check.complete import Completeness
from ctdsl.check.draft import Draft
from ctdsl.check.names import Namespace
from ctdsl.check.placement import PlacementCheck
from ctdsl.check.replicas import ReplicaCheck
from ctdsl.check.variants import VariantCheck, wan_count
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.model import graph as G
from ctdsl.model.topology import Topology


def require_runnable(spec: M.Spec, sink: DiagnosticSink) -> None:
    """CT410 for a library file asked to run: schemes, but no dc to run them on.

    A file with no dc at all is a library (schemes, params, models, devices for
    the specs that import it): `check` and `lint` take it as it is; the commands
    that solve, sweep, simulate or draw it need a topology and call this.
    """
    if spec.schemes and not spec.dcs:
        first = next(iter(spec.schemes.values()))
        sink.error(
            "CT410",
            "the spec has schemes but no data centre to run them on (a file without a dc is a library)",
            first.span,
            help="run a spec that imports this file and defines its dc blocks and wan links",
        )


def check_topology(spec: Draft, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker) -> Topology | None:
    """The topology of a draft whose definitions check, or None (with errors reported)."""
    return _TopologyCheck(spec, ns, sink, blocks).run()


class _TopologyCheck:
    def __init__(self, spec: Draft, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker):
        self.spec, self.ns, self.sink = spec, ns, sink
        self.complete = Completeness(spec, ns, sink, blocks)

    def run(self) -> Topology | None:
        spec = self.spec
        self._sizes(spec, self.sink)
        for dc in spec.dcs.values():
            self.complete.dc(dc)
        self._wans()
        ReplicaCheck(spec, self.ns, self.sink).run()
        for d in self.ns.of_kind("scheme"):
            block = self.ns.merged(d.name)
            if block is not None:
                self.complete.scheme(block)
        for scheme in spec.schemes.values():
            if scheme.name not in self.ns.defs:  # the implicit scheme of a job without one
                self.complete.implicit(scheme)
        placement = PlacementCheck(spec, self.sink)
        for scheme in spec.schemes.values():
            if scheme.sites is None:  # a scheme on a variant is placed on its variant's sites
                placement.scheme(scheme)
        variants = self._variants()
        if self.sink.has_errors:
            return None
        topology = G.build_graph(spec)
        self._connected(topology)
        # a variant keeps the dcs and the WAN connections (it only replaces their links), so every
        # dc reaches every other on it as on the declared sites: its graph needs no second search
        for name, tables in variants.items():
            graph = G.build_graph(tables)
            spec.variants[name] = M.Sites(name, tables.dcs, tuple(tables.wans), graph, self.ns.defs[name].span)
        return topology

    def _variants(self) -> dict:
        """Each variant resolved and checked (`variants.py`): name -> its dcs and WAN links."""
        check = VariantCheck(self.spec, self.ns, self.sink, self.complete.blocks)
        out: dict = {}
        names = self.ns.names_of("variant")
        if len(names) > limits.MAX_VARIANTS:
            extra = self.ns.defs[names[limits.MAX_VARIANTS]]
            self.sink.error(
                "CT623",
                f"the spec has {len(names)} variants of the sites; at most {limits.MAX_VARIANTS} are checked",
                extra.span,
                label=f"variant number {limits.MAX_VARIANTS + 1}",
                help="split the study into several specs, or share hardware between schemes",
            )
            return out
        for name in names:
            tables = check.resolve(name)
            if tables is None:
                continue
            on = [s for s in self.spec.schemes.values() if s.sites == name]
            sink = check.check(name, tables, self.complete, on)
            self._sizes(tables, sink)
            out[name] = tables
        return out

    # ---- sizes ------------------------------------------------------------------

    def _sizes(self, spec, sink) -> None:
        total = 0
        over = None  # the dc that takes the total over the limit
        for dc in spec.dcs.values():
            if dc.replica:  # replicas are counted, never unrolled: any number is modelled
                continue
            total += dc.workers
            if total > limits.MAX_WORKERS and over is None:
                over = dc
            if dc.workers > limits.MAX_WORKERS_PER_DC:
                sink.error(
                    "CT606",
                    f"dc '{dc.name}' has {dc.workers} workers; at most {limits.MAX_WORKERS_PER_DC} are modelled",
                    dc.spans.get("workers", dc.span),
                    help="model a representative slice: costs per worker do not change with copies",
                )
        if over is not None:
            sink.error(
                "CT606",
                f"the topology has {total} workers; at most {limits.MAX_WORKERS} are modelled",
                over.span,
                label=f"the workers of dc '{over.name}' take the total over {limits.MAX_WORKERS}",
                help="model a representative slice: costs per worker do not change with copies",
            )
        if len(spec.dcs) > limits.MAX_DCS:
            extra = list(spec.dcs.values())[limits.MAX_DCS]
            sink.error(
                "CT606",
                f"the topology has {len(spec.dcs)} dcs; at most {limits.MAX_DCS} are modelled",
                extra.span,
                label=f"dc number {limits.MAX_DCS + 1}",
            )

    # ---- WAN statements ---------------------------------------------------------

    def _wans(self) -> None:
        seen: dict[tuple[str, str], Span] = {}
        for stmt in self.ns.wans:
            ok = True
            for n in (stmt.a, stmt.b):
                ok &= self.ns.expect(n, "dc")
            ok &= self.ns.expect(stmt.link, "link")
            if not ok:
                continue
            ring = stmt.a.text == stmt.b.text  # a dc of several sites: each site to the next, in a ring
            block = self.ns.merged(stmt.a.text) if ring else None
            if ring and (block is None or "sites" not in block.fields):
                self.sink.error(
                    "CT413",
                    f"a WAN link joins two different dcs, not '{stmt.a.text}' to itself",
                    stmt.span,
                    help="only a dc of replicas that stands for several alike sites (sites = 4) is joined to itself, each site to the next",
                )
                continue
            count = wan_count(self.sink, self.complete.blocks.reader, stmt)
            if stmt.count is not None and count is None:
                continue
            dirs = [(stmt.a.text, stmt.b.text)] + ([(stmt.b.text, stmt.a.text)] if stmt.both and not ring else [])
            for a, b in dirs:
                if (a, b) in seen:
                    self.sink.error(
                        "CT414",
                        f"the WAN from '{a}' to '{b}' is declared twice",
                        stmt.span,
                        secondary=(Label(seen[(a, b)], "first declared here"),),
                        help="declare each direction once; '<->' declares both",
                    )
                    continue
                seen[(a, b)] = stmt.span
                self.spec.wans.append(M.WanLink(a, b, stmt.link.text, stmt.span, count))
            user = f"the WAN {stmt.a.text} {'<->' if stmt.both else '->'} {stmt.b.text}"
            self.complete.wan_link(stmt.link.text, stmt.link.span, user)

    # ---- graph --------------------------------------------------------------------

    def _connected(self, topology: Topology) -> None:
        spec = self.spec
        dcs = list(spec.dcs)
        if len(dcs) < 2:
            return
        sw = {dc: G.switch_id(spec, dc) for dc in dcs}
        reach = {dc: topology.reachable(sw[dc]) for dc in dcs}
        linked = {w.a for w in spec.wans} | {w.b for w in spec.wans}
        for a in dcs:
            for b in dcs:
                if a != b and sw[b] not in reach[a]:
                    # point at a dc that no WAN statement names, if there is one
                    if b not in linked:
                        span, label, other, other_label = spec.dcs[b].span, "no WAN link reaches it", spec.dcs[a].span, f"dc '{a}'"
                    else:
                        span, label, other, other_label = spec.dcs[a].span, f"no route to dc '{b}'", spec.dcs[b].span, f"dc '{b}'"
                    self.sink.error(
                        "CT412",
                        f"workers in dc '{a}' cannot reach dc '{b}'",
                        span,
                        label=label,
                        secondary=(Label(other, other_label),),
                        help=f"add a WAN link: wan {a} <-> {b} = NAME" if b not in linked or a not in linked
                        else f"add a WAN link in that direction: wan {a} -> {b} = NAME",
                    )
                    return
        self._transit(topology, dcs, sw)

    def _transit(self, topology: Topology, dcs: list[str], sw: dict[str, str]) -> None:
        """CT424: the ring goes dc after dc, the sites of one dc in a row; a route between two
        dcs that are next in it must not cross a dc of several sites, whose sites it would cross."""
        spec = self.spec
        several = {sw[d]: d for d in dcs if G.several_sites(spec.dcs[d])}
        if not several:
            return
        for i, a in enumerate(dcs):
            b = dcs[(i + 1) % len(dcs)]
            via = next((several[n] for n in topology.route(sw[a], sw[b])[1:-1] if n in several), None)
            if via is None:
                continue
            self.sink.error(
                "CT424",
                f"the route from dc '{a}' to dc '{b}' passes through dc '{via}', which stands for several sites: "
                "which of them it crosses is not modelled",
                spec.dcs[via].spans.get("sites", spec.dcs[via].span),
                label="several sites",
                secondary=(Label(spec.dcs[a].span, f"dc '{a}'"), Label(spec.dcs[b].span, f"dc '{b}'")),
                help=f"add a WAN link: wan {a} <-> {b} = NAME (the ring goes dc after dc in the order they are written)",
            )
            return

