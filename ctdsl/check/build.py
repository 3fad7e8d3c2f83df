"""Pass 4: the typed definitions, each built once with every field and default.

Every field has been typed by then (`blocks.py`); a builder reads the checked
values, works out what follows from them (a model's parameter count from its
shape and its 6P FLOPs per token, a dc's jitter kind, a scheme's default model
and transform cost), reports what does not fit together, and only then builds
the frozen entity. Schemes are built last, once every model is known, so that a
scheme naming no model gets the spec's only one. A scheme whose payload or
collective is missing or unknown is not built: those are reported, and the
checks that need a scheme's collective do not run on it.
"""

from __future__ import annotations

from ctdsl import limits
from ctdsl.check.blocks import BlockChecker
from ctdsl.check.build_sites import SiteBuilder
from ctdsl.check.draft import Draft
from ctdsl.check import shape as SH
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.language import schema as S
from ctdsl.language.enums import Counted, InnerSync, PlacementKind, SimLatency
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.units import RATE, format_quantity


class Builder(SiteBuilder):
    def __init__(self, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker, draft: Draft):
        self.ns = ns
        self.sink = sink
        self.blocks = blocks
        self.draft = draft
        self._reported: set[tuple[str, Span]] = set()

    def build(self) -> None:
        later = []
        for d in self.ns.of_kind(*S.KINDS):
            block = self.ns.merged(d.name)
            if block is None:
                continue
            if d.kind == "scheme":
                later.append(block)
            else:
                getattr(self, f"_{d.kind}")(block)
        for block in later:
            self._scheme(block)

    def _get(self, b: MergedBlock, key: str, stage: str | None = None):
        return self.blocks.value(b, key, stage)

    def _common(self, block: MergedBlock) -> dict:
        d = block.definition
        spans = {k: f.span for k, f in block.fields.items()}
        for sname, st in block.stages.items():
            spans[sname] = st.span
            for k, f in st.fields.items():
                spans[f"{sname}.{k}"] = f.span
        return dict(name=d.name, span=d.span, file=d.file, spans=spans, from_std=d.from_std)

    def _error_once(self, code: str, message: str, span: Span, **kw) -> None:
        """Report a problem once, though several dcs inherit it from one base."""
        if (code, span) not in self._reported:
            self._reported.add((code, span))
            self.sink.error(code, message, span, **kw)

    # ---- models ---------------------------------------------------------------------

    def _model(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        shape = SH.shape_fields(b, g)
        params = g("params") if "params" in b.fields else None
        given = [k for k in shape if k != "seq"]  # seq alone is no shape: it needs one (below)
        if params is not None and given:
            self.sink.error(
                "CT308",
                f"model '{b.name}' gives both params and a shape",
                b.fields["params"].key.span,
                secondary=(Label(b.fields[given[0]].key.span, "shape given here"),),
                help="give params, or the shape it follows from, not both",
            )
            return
        if "tokens" in b.fields and "batch_tokens" in b.fields:
            self.sink.error(
                "CT308",
                f"model '{b.name}' gives both tokens (per worker) and batch_tokens (the whole job's, split by compute)",
                b.fields["batch_tokens"].key.span,
                secondary=(Label(b.fields["tokens"].key.span, "tokens per worker given here"),),
                help="give one: tokens per step per worker, or batch_tokens per step of the whole job",
            )
        if params is None and SH.complete(shape):
            SH.check_shape(self.sink, b, shape, self.draft.defaults())
        SH.needs_shape(self.sink, b, shape)
        model = M.Model(
            **self._common(b),
            params=params,
            bytes_per_value=g("bytes_per_value"),
            tokens=g("tokens"),
            flops_per_token=None,
            shape=shape or None,
            kv_tokens=g("kv_tokens"),
            batch_tokens=g("batch_tokens"),
            **SH.switches(g),
        )
        self.draft.models[b.name] = SH.counted(model, params, g("flops_per_token"))

    # ---- hardware -------------------------------------------------------------------

    def _plain(self, b: MergedBlock, cls):
        """A definition whose fields are its kind's schema fields, one for one."""
        return cls(**self._common(b), **{k: self._get(b, k) for k in S.KINDS[b.kind]})

    def _device(self, b: MergedBlock) -> None:
        self.draft.devices[b.name] = self._plain(b, M.Device)

    def _switch(self, b: MergedBlock) -> None:
        sw = self.draft.switches[b.name] = self._plain(b, M.Switch)
        if sw.total_rate is None or sw.stream_rate is None or "stream_rate" not in b.fields:
            return
        try:
            total, stream = E.evaluate(sw.total_rate, self.draft.defaults()), E.evaluate(sw.stream_rate, self.draft.defaults())
        except E.EvalError:
            return
        if stream > total:  # one stream cannot go faster than all of them together
            self._error_once(
                "CT312",
                f"switch '{b.name}': stream_rate {format_quantity(stream, RATE)} is above total_rate {format_quantity(total, RATE)}",
                b.fields["stream_rate"].value.span,
                secondary=(Label(b.fields["total_rate"].value.span, "the rate all its streams share"),) if "total_rate" in b.fields else (),
                help="total_rate is shared by all the streams the switch takes in at once, stream_rate is each one's: "
                "a stream's rate is at most the total",
            )

    def _link(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        self.draft.links[b.name] = M.Link(
            **self._common(b),
            bandwidth=g("bandwidth"),
            latency=g("latency"),
            energy_per_byte=g("energy_per_bit"),  # written per bit, held per byte (base units)
            distance=g("distance"),
            load=g("load"),
            transfer=g("transfer"),
            counted=Counted(g("counted") or Counted.TRANSFER),  # None: written wrong, reported (CT108)
            price=g("price"),
        )

    def _pluggable(self, b: MergedBlock) -> None:
        stages = {}
        for name in S.STAGES:
            if name not in b.stages:
                continue
            get = lambda k: self._get(b, k, name) if k in S.STAGES[name] else None  # noqa: E731
            stages[name] = M.PluggableStage(
                name=name,
                rate=get("rate"),
                host=get("host"),
                budget=get("budget"),
                performs=get("performs") or (),
                span=b.stages[name].span,
            )
        self.draft.pluggables[b.name] = M.Pluggable(
            **self._common(b),
            stages=stages,
            latency=self._get(b, "latency"),
            power=self._get(b, "power"),
            ops=self._get(b, "ops") or (),
            price=self._get(b, "price"),
            depreciation=self._get(b, "depreciation"),
        )

    def _variant(self, b: MergedBlock) -> None:
        """Resolved once the declared sites are checked (`variants.py`)."""

    # ---- schemes and the simulation ---------------------------------------------------

    def _scheme(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        payload = g("payload") if "payload" in b.fields else None
        if payload is not None:
            self._payload_fields(b, payload)
        model = g("model") or ""
        if not model:
            model, candidates = self.draft.default_model()
            if model is None:
                names = ", ".join(m.name for m in candidates) or "none"
                self.sink.error(
                    "CT411",
                    f"scheme '{b.name}' names no model, and the spec does not define exactly one ({names})",
                    b.definition.span,
                    help="add model = NAME to the scheme, or define one model in the spec",
                )
                model = ""
        collective = g("collective") if "collective" in b.fields else None
        if payload is None or collective is None:
            return  # reported: missing (completeness) or not a payload or collective (CT108)
        at_name = g("at")
        if at_name is None or at_name == "gpu":
            at = M.Placement(PlacementKind.GPU, None)
        else:
            at = M.Placement(PlacementKind(self.ns.defs[at_name].kind), at_name)
        cost = g("cost")
        self.draft.schemes[b.name] = M.Scheme(
            **self._common(b),
            payload=payload,
            fraction=g("fraction"),
            value_bytes=g("bits"),  # written as a width (`bits = 2 b`), held in bytes
            block=g("block"),
            scale=g("scale"),
            index=g("index"),
            chunk=g("chunk"),
            k=g("k"),
            collective=collective,
            at=at,
            sum_at=g("sum_at"),
            loopback=bool(g("loopback")),
            period=g("period"),
            steps=g("steps"),
            overlap=g("overlap") == "true",
            backward=g("overlap") == "backward",
            bucket=g("bucket"),
            fragments=g("fragments"),
            delay=g("delay"),
            inner=InnerSync(g("inner") or InnerSync.NONE),
            cost=cost if cost is not None else E.num(S.DEFAULT_COST[payload]),
            overhead=g("overhead"),
            model=model,
            sites=g("sites"),
            label=g("label"),
            transform_charge=g("transform_charge"),
        )

    def _payload_fields(self, b: MergedBlock, payload) -> None:
        """Fields that belong to another payload kind."""
        for key, payloads in S.PAYLOAD_FIELDS.items():
            if key in b.fields and payload not in payloads:
                self.sink.error(
                    "CT113",
                    f"scheme '{b.name}': {key} does not apply to {S.PAYLOAD_WORDS[payload]}",
                    b.fields[key].key.span,
                    label=f"only for payload = {' or '.join(payloads)}",
                    secondary=(Label(b.fields["payload"].value.span, f"payload is {payload}"),),
                    help=f"remove {key}, or change the payload",
                )

    def _simulation(self, b: MergedBlock) -> None:
        if self.draft.simulation is not None:
            self.sink.error(
                "CT103",
                "a spec has at most one simulation block",
                b.definition.span,
                secondary=(Label(self.draft.simulation.span, "first simulation block"),),
            )
            return
        g = lambda k: self._get(b, k)  # noqa: E731
        sim = M.Simulation(**self._common(b), steps=g("steps"), seeds=g("seeds"), warmup=g("warmup"), latency=SimLatency(g("latency") or SimLatency.PROPAGATE))
        self.draft.simulation = sim
        env = self.draft.defaults()
        for key, most in (("steps", limits.MAX_SIM_STEPS), ("warmup", limits.MAX_SIM_STEPS), ("seeds", limits.MAX_SIM_SEEDS)):
            expr = getattr(sim, key)
            if key not in b.fields or expr is None:
                continue
            try:
                v = E.evaluate(expr, env)
            except E.EvalError:
                continue
            if v > most:
                self.sink.error(
                    "CT608",
                    f"{b.name}.{key} is {v:g}; a simulation runs at most {most:,} {key}",
                    b.fields[key].value.span,
                    help="simulate fewer steps or seeds: the confidence interval narrows as 1/sqrt(seeds)",
                )
        if "warmup" in b.fields and sim.warmup is not None:
            try:
                w = E.evaluate(sim.warmup, env)
            except E.EvalError:
                return
            if w != int(w):
                self.sink.error(
                    "CT305",
                    f"{b.name}.warmup must be a whole number of steps, but it is {w:g}",
                    b.fields["warmup"].value.span,
                    help="e.g. warmup = 20",
                )
