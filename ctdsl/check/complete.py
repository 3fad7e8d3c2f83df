"""Completeness: whatever a dc or a scheme uses must have the fields that use needs.

A device used by a dc needs its efficiency, a scheme's model its tokens, a link
with a background load the size of one background transfer. A definition
nothing uses may stay incomplete. A library preset that lacks a field is
reported where it is used, with a hint to extend it; a user's own definition is
reported where it is defined, with a label where it is used.
"""

from __future__ import annotations

from ctdsl.check.blocks import BlockChecker
from ctdsl.check.draft import Draft
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.language import schema as S
from ctdsl.model import entities as M


class Completeness:
    def __init__(self, spec: Draft, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker):
        self.spec, self.ns, self.sink, self.blocks = spec, ns, sink, blocks
        self._load_reported: set[str] = set()
        self._wan_reported: set[str] = set()

    def _missing(self, kind: str, name: str, keys, use: Span, user: str) -> bool:
        """Report the required fields of definition `name` that are not set."""
        block = self.ns.merged(name)
        if block is None:
            return False
        missing = [k for k in keys if k not in block.fields]
        if missing and block.broken:  # they would come from the base that is unknown: its CT101 says so
            return False
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

    def dc(self, dc: M.DataCentre, own: bool = True) -> None:
        """What a dc uses is complete; `own`: the dc as declared, whose required fields are checked too."""
        block = self.ns.merged(dc.name)
        required = [k for k, f in S.KINDS["dc"].items() if f.required]
        if "replica" in block.fields:  # a dc of replicas counts them, not workers
            required = [k if k != "workers" else "replicas" for k in required]
        missing = [k for k in required if k not in block.fields] if own else []
        if missing:
            self.sink.error(
                "CT105",
                f"dc '{dc.name}' has no {', '.join(missing)}",
                dc.span,
                help="; ".join(f"{k} = {S.KINDS['dc'][k].example}" for k in missing),
            )
        if dc.replica and dc.replica in self.spec.replicas:
            rep = self.spec.replicas[dc.replica]
            if rep.scaleup_link:
                self._missing("link", rep.scaleup_link, ["bandwidth", "latency"], rep.spans["scaleup_link"], f"replica '{rep.name}'")
        user = f"dc '{dc.name}'"
        if dc.device:
            self._missing("device", dc.device, ["peak", "efficiency"], dc.spans["device"], user)
        if dc.link:
            self._missing("link", dc.link, ["bandwidth", "latency"], dc.spans["link"], user)
            self.load(dc.link, dc.spans["link"], user)
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

    def wan_link(self, name: str, use: Span, user: str) -> None:
        """A WAN's link needs what a dc's link needs: its bandwidth and latency, and a transfer size with a load."""
        if name not in self._wan_reported:  # once per link, however many WANs use it
            self._wan_reported.add(name)
            self._missing("link", name, ["bandwidth", "latency"], use, user)
        self.load(name, use, user)

    def load(self, name: str, use: Span, user: str) -> None:
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

    def scheme(self, block: MergedBlock) -> None:
        """A scheme's payload and collective, its payload's fields, and its model's."""
        name, span = block.name, block.definition.span
        missing = [k for k in ("payload", "collective") if k not in block.fields]
        if missing:
            self.sink.error(
                "CT105",
                f"scheme '{name}' has no {' or '.join(missing)}",
                span,
                help="; ".join(f"{k} = {S.KINDS['scheme'][k].example}" for k in missing),
            )
        if "payload" in block.fields:
            payload = self.blocks.value(block, "payload")
            need = [k for k in S.PAYLOAD_REQUIRES.get(payload, ()) if k not in block.fields]
            if need:
                self.sink.error(
                    "CT105",
                    f"scheme '{name}': payload {payload} needs {' and '.join(need)}",
                    block.fields["payload"].value.span,
                    secondary=(Label(span, "scheme defined here"),),
                    help="add " + "; ".join(f"{k} = {S.KINDS['scheme'][k].example}" for k in need),
                )
        # the builder reported a scheme that names no model where the spec has not exactly one
        model = self.spec.models.get(self.blocks.value(block, "model") or self.spec.default_model()[0] or "")
        if model is None:
            return
        use = block.fields["model"].span if "model" in block.fields else span
        self._model(model, use, f"scheme '{name}'")

    def implicit(self, scheme: M.Scheme) -> None:
        """The implicit scheme of a job without one (build.py, `_implicit_step`) trains the spec's
        one model: the fields its step needs, as a written scheme's (a model without tokens
        crashed solve: the fuzz campaign, seed 34, input 29724)."""
        model = self.spec.models.get(scheme.model or "")
        if model is not None:
            self._model(model, scheme.span, "the job's step (it has no scheme)")

    def _model(self, model: M.Model, use: Span, user: str) -> None:
        mb = self.ns.merged(model.name)
        if model.params is None and mb is not None and not mb.broken:
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
        self._missing("model", model.name, ["bytes_per_value", "tokens" if model.batch_tokens is None else "batch_tokens"], use, user)
