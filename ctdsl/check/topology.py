"""Checks that need the whole model: completeness of what is used, the topology,
and where each scheme's work may run.

- Whatever a dc or a scheme uses must be complete: a device used by a dc needs
  its efficiency, a scheme's model its tokens; a library preset that lacks a field
  is reported where it is used, with a hint to extend it.
- The WAN statements name dcs and a link; the graph built from them must let
  every worker reach every other.
- A transform runs where its operations exist: no top-k (comparisons) on a
  pluggable; an in-network sum only at a switch that sums; a module or switch a
  scheme names must be in every worker's path.
"""

from __future__ import annotations

import networkx as nx

from ctdsl import limits
from ctdsl.language import schema as S
from ctdsl.check.names import Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.model import entities as M
from ctdsl.model.graph import build_graph, switch_id


def check_topology(spec: M.Spec, ns: Namespace, sink: DiagnosticSink) -> nx.DiGraph | None:
    c = _TopologyCheck(spec, ns, sink)
    return c.run()


class _TopologyCheck:
    def __init__(self, spec: M.Spec, ns: Namespace, sink: DiagnosticSink):
        self.spec, self.ns, self.sink = spec, ns, sink
        self._load_reported: set[str] = set()

    def run(self) -> nx.DiGraph | None:
        spec = self.spec
        self._sizes()
        for dc in spec.dcs.values():
            self._dc_complete(dc)
        self._wans()
        for scheme in spec.schemes.values():
            self._scheme_complete(scheme)
        for scheme in spec.schemes.values():
            self._placement(scheme)
        if self.sink.has_errors:
            return None
        if spec.schemes and not spec.dcs:
            first = next(iter(spec.schemes.values()))
            self.sink.error(
                "CT410",
                "the spec has schemes but no data centre to run them on",
                first.span,
                help="add a dc block: dc east { workers = 4; device = gpu; link = ib; switch = tor }",
            )
            return None
        g = build_graph(spec)
        self._connected(g)
        return g

    # ---- sizes ------------------------------------------------------------------

    def _sizes(self) -> None:
        spec = self.spec
        total = 0
        over = None  # the dc that takes the total over the limit
        for dc in spec.dcs.values():
            total += dc.workers
            if total > limits.MAX_WORKERS and over is None:
                over = dc
            if dc.workers > limits.MAX_WORKERS_PER_DC:
                self.sink.error(
                    "CT606",
                    f"dc '{dc.name}' has {dc.workers} workers; at most {limits.MAX_WORKERS_PER_DC} are modelled",
                    dc.spans.get("workers", dc.span),
                    help="model a representative slice: costs per worker do not change with copies",
                )
        if over is not None:
            self.sink.error(
                "CT606",
                f"the topology has {total} workers; at most {limits.MAX_WORKERS} are modelled",
                over.span,
                label=f"the workers of dc '{over.name}' take the total over {limits.MAX_WORKERS}",
                help="model a representative slice: costs per worker do not change with copies",
            )
        if len(spec.dcs) > limits.MAX_DCS:
            extra = list(spec.dcs.values())[limits.MAX_DCS]
            self.sink.error(
                "CT606",
                f"the topology has {len(spec.dcs)} dcs; at most {limits.MAX_DCS} are modelled",
                extra.span,
                label=f"dc number {limits.MAX_DCS + 1}",
            )

    # ---- completeness -----------------------------------------------------------

    def _missing(self, kind: str, name: str, keys, use: Span, user: str) -> bool:
        """Report the required fields of definition `name` that are not set."""
        block = self.ns.merged(name)
        if block is None:
            return False
        missing = [k for k in keys if k not in block.fields]
        if not missing:
            return True
        d = block.definition
        field_words = ", ".join(missing)
        example = "; ".join(f"{k} = {S.KINDS[kind][k].example}" for k in missing)
        if d.from_std:
            self.sink.error(
                "CT105",
                f"{kind} '{name}' (a library preset) has no {field_words}, which {user} needs",
                use,
                label=f"uses {kind} '{name}'",
                help=f"extend the preset: {kind} my_{name} : {name} {{ {example} }}",
            )
        else:
            self.sink.error(
                "CT105",
                f"{kind} '{name}' has no {field_words}, which {user} needs",
                d.span,
                label=f"missing {field_words}",
                secondary=(Label(use, "used here"),),
                help=f"add {example}",
            )
        return False

    def _dc_complete(self, dc: M.DataCentre) -> None:
        block = self.ns.merged(dc.name)
        missing = [k for k, f in S.KINDS["dc"].items() if f.required and k not in block.fields]
        if missing:
            self.sink.error(
                "CT105",
                f"dc '{dc.name}' has no {', '.join(missing)}",
                dc.span,
                help="; ".join(f"{k} = {S.KINDS['dc'][k].example}" for k in missing),
            )
        user = f"dc '{dc.name}'"
        if dc.device:
            self._missing("device", dc.device, ["peak", "efficiency"], dc.spans["device"], user)
        if dc.link:
            self._missing("link", dc.link, ["bandwidth", "latency"], dc.spans["link"], user)
            self._load_complete(dc.link, dc.spans["link"], user)
        if dc.pluggable:
            plug = self.spec.pluggables[dc.pluggable]
            if self._missing("pluggable", dc.pluggable, ["ops"], dc.spans["pluggable"], user):
                if "port" not in plug.stages:
                    self.sink.error(
                        "CT105",
                        f"pluggable '{plug.name}' has no port stage, which {user} needs",
                        plug.span,
                        secondary=(Label(dc.spans["pluggable"], "used here"),),
                        help="add port { rate = 25 GB/s; host = 50 GB/s }",
                    )
                for name, st in plug.stages.items():
                    for key, f in S.STAGES[name].items():
                        if f.required and getattr(st, key, None) is None and f"{name}.{key}" not in plug.spans:
                            self.sink.error(
                                "CT105",
                                f"stage {name} of pluggable '{plug.name}' has no {key}",
                                st.span or plug.span,
                                help=f"add {key} = {f.example}",
                            )

    def _load_complete(self, name: str, use: Span, user: str) -> None:
        """A link with a background load needs the size of one background transfer (queueing)."""
        block = self.ns.merged(name)
        if block is None or "load" not in block.fields or "transfer" in block.fields:
            return
        if name in self._load_reported:
            return
        self._load_reported.add(name)
        example = S.KINDS["link"]["transfer"].example
        d = block.definition
        if d.from_std:
            self.sink.error(
                "CT105",
                f"link '{name}' (a library preset) has a background load but no transfer size, which {user} needs",
                use,
                label=f"uses link '{name}'",
                help=f"extend the preset: link my_{name} : {name} {{ transfer = {example} }}",
            )
            return
        self.sink.error(
            "CT105",
            f"link '{name}' has a background load but no transfer size, which {user} needs",
            d.span,
            label="missing transfer",
            secondary=(Label(block.fields["load"].key.span, "load set here"), Label(use, "used here")),
            notes=("the queueing wait of a sync depends on the size of the transfers ahead of it: rho S / (2 (1 - rho)), S = transfer / bandwidth",),
            help=f"add transfer = {example}",
        )

    def _scheme_complete(self, scheme: M.Scheme) -> None:
        block = self.ns.merged(scheme.name)
        missing = [k for k in ("payload", "collective") if k not in block.fields]
        if missing:
            self.sink.error(
                "CT105",
                f"scheme '{scheme.name}' has no {' or '.join(missing)}",
                scheme.span,
                help="; ".join(f"{k} = {S.KINDS['scheme'][k].example}" for k in missing),
            )
        if "payload" in block.fields:
            need = [k for k in S.PAYLOAD_REQUIRES.get(scheme.payload, ()) if k not in block.fields]
            if need:
                self.sink.error(
                    "CT105",
                    f"scheme '{scheme.name}': payload {scheme.payload} needs {' and '.join(need)}",
                    block.fields["payload"].value.span,
                    secondary=(Label(scheme.span, "scheme defined here"),),
                    help="add " + "; ".join(f"{k} = {S.KINDS['scheme'][k].example}" for k in need),
                )
        if not scheme.model:
            ours = [m for m in self.spec.models.values() if not m.from_std]
            root = [m for m in ours if m.file == self.spec.root]
            pick = root if len(root) == 1 else ours
            if len(pick) == 1:
                scheme.model = pick[0].name
            else:
                names = ", ".join(m.name for m in (root or ours)) or "none"
                self.sink.error(
                    "CT411",
                    f"scheme '{scheme.name}' names no model, and the spec does not define exactly one ({names})",
                    scheme.span,
                    help="add model = NAME to the scheme, or define one model in the spec",
                )
                return
        model = self.spec.models.get(scheme.model)
        if model is None:
            return
        use = scheme.spans.get("model", scheme.span)
        user = f"scheme '{scheme.name}'"
        mb = self.ns.merged(model.name)
        if model.params is None and mb is not None:
            shape_missing = [k for k in S.SHAPE_FIELDS if k not in mb.fields]
            if "params" not in mb.fields and shape_missing and not any(
                d.code == "CT308" for d in self.sink.items
            ):
                words = "params" if len(shape_missing) == len(S.SHAPE_FIELDS) else "params or " + ", ".join(shape_missing)
                self.sink.error(
                    "CT105",
                    f"model '{model.name}' has no {words}, which {user} needs",
                    model.span if not model.from_std else use,
                    help="give params = 8.03e9, or the full shape: layers, width, heads, kv_heads, mlp, vocab",
                )
        self._missing("model", model.name, ["bytes_per_value", "tokens"], use, user)

    # ---- WAN statements ---------------------------------------------------------

    def _wans(self) -> None:
        seen: dict[tuple[str, str], Span] = {}
        for stmt in self.ns.wans:
            ok = True
            for n in (stmt.a, stmt.b):
                ok &= self._expect(n, "dc")
            ok &= self._expect(stmt.link, "link")
            if not ok:
                continue
            if stmt.a.text == stmt.b.text:
                self.sink.error(
                    "CT413",
                    f"a WAN link joins two different dcs, not '{stmt.a.text}' to itself",
                    stmt.span,
                )
                continue
            dirs = [(stmt.a.text, stmt.b.text)] + ([(stmt.b.text, stmt.a.text)] if stmt.both else [])
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
                self.spec.wans.append(M.WanLink(a, b, stmt.link.text, stmt.span))
            self._load_complete(stmt.link.text, stmt.link.span, f"the WAN {stmt.a.text} {'<->' if stmt.both else '->'} {stmt.b.text}")

    def _expect(self, name, kind: str) -> bool:
        from ctdsl.diagnostics import did_you_mean

        d = self.ns.defs.get(name.text)
        if d is None or d.kind != kind:
            self.sink.error(
                "CT101" if d is None else "CT102",
                f"unknown {kind} '{name.text}'" if d is None else f"expected a {kind}, but '{name.text}' is a {d.kind}",
                name.span,
                help=did_you_mean(name.text, self.ns.names_of(kind)),
            )
            return False
        return True

    # ---- graph --------------------------------------------------------------------

    def _connected(self, g: nx.DiGraph) -> None:
        spec = self.spec
        dcs = list(spec.dcs)
        if len(dcs) < 2:
            return
        sw = {dc: switch_id(spec, dc) for dc in dcs}
        reach = {dc: nx.descendants(g, sw[dc]) for dc in dcs}
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

    # ---- placement ------------------------------------------------------------------

    def _placement(self, scheme: M.Scheme) -> None:
        spec = self.spec
        at_span = scheme.spans.get("at", scheme.span)
        needs = S.PAYLOAD_NEEDS.get(scheme.payload, ())
        what = S.PAYLOAD_WORDS.get(scheme.payload, scheme.payload)
        coll = scheme.collective
        if scheme.payload in ("topk", "demo") and coll in ("ring_allreduce", "hier_allreduce", "innet_sum"):
            self.sink.error(
                "CT405",
                f"scheme '{scheme.name}': {what} cannot be summed by {coll}",
                scheme.spans.get("collective", scheme.span),
                label="sums values position by position",
                notes=("top-k keeps different positions on each worker, so payloads do not line up",),
                help="gather them instead: collective = hier_allgather",
            )
        if scheme.at.kind == "pluggable":
            plug = spec.pluggables[scheme.at.name]
            lacking = [op for op in needs if op not in plug.ops]
            if lacking:
                self.sink.error(
                    "CT401",
                    f"pluggable '{plug.name}' cannot do {what}: it needs {', '.join(lacking)}",
                    at_span,
                    label=f"runs the transform in '{plug.name}'",
                    secondary=(Label(plug.spans.get("ops", plug.span), f"supports {', '.join(plug.ops) or 'nothing'}"),),
                    notes=("a link module does FFT/DCT, MAC and arithmetic; it cannot compare values",)
                    if "compare" in lacking
                    else (),
                    help="run the transform on the GPU: at = gpu",
                )
            if not needs:
                self.sink.error(
                    "CT401",
                    f"scheme '{scheme.name}' has no transform to run in pluggable '{plug.name}'",
                    at_span,
                    help="a dense payload needs no transform: remove at",
                )
            without = [dc for dc in spec.dcs.values() if dc.pluggable != plug.name]
            if without:
                dc = without[0]
                self.sink.error(
                    "CT406",
                    f"scheme '{scheme.name}' runs in pluggable '{plug.name}', but dc '{dc.name}' "
                    + ("has no pluggable in its ports" if not dc.pluggable else f"has '{dc.pluggable}' in its ports"),
                    at_span,
                    secondary=(Label(dc.span, "not in these workers' path"),),
                    help=f"add pluggable = {plug.name} to dc '{dc.name}'",
                )
        if scheme.at.kind == "switch":
            sw = spec.switches[scheme.at.name]
            if coll != "innet_sum":
                self.sink.error(
                    "CT409",
                    f"scheme '{scheme.name}' transforms at switch '{sw.name}', which needs collective = innet_sum",
                    at_span,
                    secondary=(Label(scheme.spans.get("collective", scheme.span), f"collective is {coll}"),),
                    help="a switch transforms the streams it sums; use innet_sum, or at = gpu",
                )
            lacking = [op for op in needs if op not in sw.ops]
            if lacking:
                self.sink.error(
                    "CT401",
                    f"switch '{sw.name}' cannot do {what}: it needs {', '.join(lacking)}",
                    at_span,
                    secondary=(Label(sw.spans.get("ops", sw.span), f"supports {', '.join(sw.ops) or 'nothing'}"),),
                    help=f"add the operations to the switch (ops = [{', '.join(needs)}]) or run the transform at gpu",
                )
            self._every_dc_has_switch(scheme, sw.name, at_span)
        if scheme.sum_at is not None and coll != "innet_sum":
            self.sink.error(
                "CT402",
                f"scheme '{scheme.name}' places a sum, but its collective {coll} sums on the workers",
                scheme.spans["sum_at"],
                help="sum_at goes with collective = innet_sum",
            )
        if coll == "innet_sum":
            self._innet_sum(scheme)
        if coll in ("hier_allreduce", "hier_allgather"):
            counts = {dc.workers for dc in spec.dcs.values()}
            if len(counts) > 1:
                sizes = ", ".join(f"{dc.name}: {dc.workers}" for dc in spec.dcs.values())
                self.sink.error(
                    "CT408",
                    f"scheme '{scheme.name}': {coll} needs the same number of workers in every dc ({sizes})",
                    scheme.spans.get("collective", scheme.span),
                    help="give every dc the same workers, or use ring_allreduce / allgather",
                )

    def _innet_sum(self, scheme: M.Scheme) -> None:
        spec = self.spec
        target = scheme.sum_at or (scheme.at.name if scheme.at.kind == "switch" else None)
        span = scheme.spans.get("sum_at") or scheme.spans.get("at") or scheme.spans.get("collective", scheme.span)
        if scheme.sum_at is not None:
            self._every_dc_has_switch(scheme, scheme.sum_at, span)
        switches = [spec.switches[dc.switch] for dc in spec.dcs.values() if dc.switch in spec.switches]
        if target is not None:
            switches = [spec.switches[target]]
        for sw in switches:
            if not sw.sum:
                self.sink.error(
                    "CT403",
                    f"scheme '{scheme.name}' sums in the network, but switch '{sw.name}' cannot sum",
                    span,
                    secondary=(Label(sw.span, "switch defined here"),),
                    help=f"set sum = true on switch '{sw.name}' if it aggregates, or use hier_allreduce",
                )
                break
            if scheme.loopback and not sw.loopback:
                self.sink.error(
                    "CT404",
                    f"scheme '{scheme.name}' asks for loopback, but switch '{sw.name}' does not loop a worker's contribution back",
                    scheme.spans.get("loopback", span),
                    secondary=(Label(sw.span, "switch defined here"),),
                    help=f"set loopback = true on switch '{sw.name}'",
                )
                break

    def _every_dc_has_switch(self, scheme: M.Scheme, name: str, span: Span) -> None:
        for dc in self.spec.dcs.values():
            if dc.switch != name:
                self.sink.error(
                    "CT406",
                    f"scheme '{scheme.name}' runs at switch '{name}', but dc '{dc.name}' uses switch '{dc.switch}'",
                    span,
                    secondary=(Label(dc.spans.get("switch", dc.span), "this dc's switch"),),
                    help=f"use switch = {name} in dc '{dc.name}'",
                )
                return


__all__ = ["check_topology"]
