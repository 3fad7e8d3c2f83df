"""Where each scheme's work may run.

A transform runs where its operations exist: no top-k (comparisons) in a
pluggable; a module or switch a scheme names must be in every worker's path;
an in-network sum only at a switch that sums (and loops back, when asked);
payloads that keep different positions on each worker cannot be summed; a
hierarchical collective needs the same number of workers in every dc.
"""

from __future__ import annotations

from ctdsl.check.draft import Draft
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.language import schema as S
from ctdsl.language.enums import Collective, Operation, Payload, PlacementKind
from ctdsl.model import entities as M

_SUMMED = (Collective.RING_ALLREDUCE, Collective.HIER_ALLREDUCE, Collective.INNET_SUM)
_HIERARCHICAL = (Collective.HIER_ALLREDUCE, Collective.HIER_ALLGATHER)


class PlacementCheck:
    def __init__(self, spec: Draft, sink: DiagnosticSink):
        self.spec, self.sink = spec, sink

    def scheme(self, scheme: M.Scheme) -> None:
        coll = scheme.collective
        if scheme.payload in (Payload.TOPK, Payload.DEMO) and coll in _SUMMED:
            self.sink.error(
                "CT405",
                f"scheme '{scheme.name}': {S.PAYLOAD_WORDS.get(scheme.payload, scheme.payload)} cannot be summed by {coll}",
                scheme.spans.get("collective", scheme.span),
                label="sums values position by position",
                notes=("top-k keeps different positions on each worker, so payloads do not line up",),
                help="gather them instead: collective = hier_allgather",
            )
        if scheme.at.kind is PlacementKind.PLUGGABLE:
            self._in_pluggable(scheme)
        if scheme.at.kind is PlacementKind.SWITCH:
            self._at_switch(scheme)
        if scheme.sum_at is not None and coll is not Collective.INNET_SUM:
            self.sink.error(
                "CT402",
                f"scheme '{scheme.name}' places a sum, but its collective {coll} sums on the workers",
                scheme.spans["sum_at"],
                help="sum_at goes with collective = innet_sum",
            )
        if coll is Collective.INNET_SUM:
            self._innet_sum(scheme)
        if coll in _HIERARCHICAL and not any(dc.replica for dc in self.spec.dcs.values()):  # replicas: unequal sites bind by the slowest
            counts = {dc.workers for dc in self.spec.dcs.values()}
            if len(counts) > 1:
                sizes = ", ".join(f"{dc.name}: {dc.workers}" for dc in self.spec.dcs.values())
                self.sink.error(
                    "CT408",
                    f"scheme '{scheme.name}': {coll} needs the same number of workers in every dc ({sizes})",
                    scheme.spans.get("collective", scheme.span),
                    help="give every dc the same workers, or use ring_allreduce / allgather",
                )

    def _in_pluggable(self, scheme: M.Scheme) -> None:
        """A transform in the module of every worker's port, which must offer its operations."""
        at_span = scheme.spans.get("at", scheme.span)
        needs = S.PAYLOAD_NEEDS.get(scheme.payload, ())
        what = S.PAYLOAD_WORDS.get(scheme.payload, scheme.payload)
        plug = self.spec.pluggables[scheme.at.name]
        lacking = [op for op in needs if op not in plug.ops]
        if lacking:
            self.sink.error(
                "CT401",
                f"pluggable '{plug.name}' cannot do {what}: it needs {', '.join(lacking)}",
                at_span,
                label=f"runs the transform in '{plug.name}'",
                secondary=(Label(plug.spans.get("ops", plug.span), f"supports {', '.join(plug.ops) or 'nothing'}"),),
                notes=("a link module does FFT/DCT, MAC and arithmetic; it cannot compare values",)
                if Operation.COMPARE in lacking
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
        without = [dc for dc in self.spec.dcs.values() if dc.pluggable != plug.name]
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

    def _at_switch(self, scheme: M.Scheme) -> None:
        """A transform at a switch: on the streams it sums, with operations it offers."""
        at_span = scheme.spans.get("at", scheme.span)
        needs = S.PAYLOAD_NEEDS.get(scheme.payload, ())
        what = S.PAYLOAD_WORDS.get(scheme.payload, scheme.payload)
        sw = self.spec.switches[scheme.at.name]
        if scheme.collective is not Collective.INNET_SUM:
            self.sink.error(
                "CT409",
                f"scheme '{scheme.name}' transforms at switch '{sw.name}', which needs collective = innet_sum",
                at_span,
                secondary=(Label(scheme.spans.get("collective", scheme.span), f"collective is {scheme.collective}"),),
                help="a switch transforms the streams it sums; use innet_sum, or at = gpu",
            )
        # ops written wrong is None here, and reported at the field: nothing more to say of it
        lacking = [op for op in needs if op not in sw.ops] if sw.ops is not None else []
        if lacking:
            self.sink.error(
                "CT401",
                f"switch '{sw.name}' cannot do {what}: it needs {', '.join(lacking)}",
                at_span,
                secondary=(Label(sw.spans.get("ops", sw.span), f"supports {', '.join(sw.ops) or 'nothing'}"),),
                help=f"add the operations to the switch (ops = [{', '.join(needs)}]) or run the transform at gpu",
            )
        self._every_dc_has_switch(scheme, sw.name, at_span)

    def _innet_sum(self, scheme: M.Scheme) -> None:
        spec = self.spec
        target = scheme.sum_at or (scheme.at.name if scheme.at.kind is PlacementKind.SWITCH else None)
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
