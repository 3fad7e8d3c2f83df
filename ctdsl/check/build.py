"""Pass 4: the typed definitions, each built once with every field and default.

Every field has been typed by then (`blocks.py`); a builder reads the checked
values, works out what follows from them (a model's parameter count from its
shape and its 6P FLOPs per token, a dc's jitter kind, a scheme's default model
and transform cost), reports what does not fit together, and only then builds
the frozen entity. Schemes are built last, once every model is known, so that a
scheme naming no model gets the spec's only one. A scheme whose payload or
collective is missing or unknown is not built: those are reported, and the
checks that need a scheme's collective do not run on it.

Long: one builder of every kind of definition, the sites (data centres of workers or of
replicas, and the replicas) among them; it was once cut into a mixin to stay under 400
lines, which split one concept in two files.
"""

from __future__ import annotations

from ctdsl import limits
from ctdsl.check.blocks import BlockChecker
from ctdsl.check.draft import Draft
from ctdsl.check import shape as SH
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span
from ctdsl.language import schema as S
from ctdsl.language.serving import SERVING_KINDS
from ctdsl.language.enums import Algorithm, Collective, ComputeModel, Counted, Fabric, FragmentOrder, InnerSync, JitterKind, ModuleLatency, Payload, PlacementKind, Precision, Readiness, Recompute, Sharing, SimLatency
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.units import RATE, format_quantity

# the scheme of a job without one (`Builder._implicit_step`)
IMPLICIT_SCHEME = "step"
IMPLICIT_LABEL = "the step (no scheme: the data-parallel all-reduce in the site, if any)"


class Builder:
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
            if d.kind in SERVING_KINDS:
                continue  # built by ctdsl.check.serving, once models and devices are
            if d.kind == "scheme":
                later.append(block)
            else:
                getattr(self, f"_{d.kind}")(block)
        for block in later:
            self._scheme(block)
        if not later:
            self._implicit_step()

    def _implicit_step(self) -> None:
        """A job without a sync (issue 27 item 6): one site, data parallelism inside it or none,
        and no scheme. Its step is that of an implicit scheme `step`: the dense gradient
        all-reduced in a ring over the dc's workers (none with one replica), once a step, after
        the backward pass, as a written `scheme step { payload = dense; collective =
        ring_allreduce }` would be. Nothing is made where the spec has no dc, several dcs, sites,
        WAN links or not exactly one model of its own (a scheme must then say which)."""
        model, _ = self.draft.default_model()
        dcs = list(self.draft.dcs.values())
        if model is None or len(dcs) != 1 or self.draft.wans or dcs[0].sites is not None:
            return
        dc = dcs[0]
        name = IMPLICIT_SCHEME if IMPLICIT_SCHEME not in self.ns.defs else f"{IMPLICIT_SCHEME}_{dc.name}"
        if name in self.ns.defs:
            return
        self.draft.schemes[name] = M.Scheme(
            name=name, span=dc.span, file=dc.file, spans={}, from_std=False,
            payload=Payload.DENSE, fraction=None, value_bytes=None, block=None, scale=None, index=None, chunk=None, k=None,
            collective=Collective.RING_ALLREDUCE, at=M.Placement(PlacementKind.GPU, None), sum_at=None, loopback=False,
            period=E.num(1), steps=None, overlap=False, cost=E.num(S.DEFAULT_COST[Payload.DENSE]), overhead=E.num(0),
            model=model, sites=None, label=IMPLICIT_LABEL,
        )  # fmt: skip

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
            step=g("step"),
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
            sharing=Sharing(g("sharing") or Sharing.FAIR),  # None: written wrong, reported (CT108)
            price=g("price"),
            efficiency=g("efficiency"),
            in_network=bool(g("in_network")),
            channels=g("channels"),
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
            counted=ModuleLatency(self._get(b, "counted") or ModuleLatency.ONCE),  # None: written wrong, reported (CT108)
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
            bucket=None if g("bucket") == "layer" else g("bucket"),
            bucket_per_layer=g("bucket") == "layer",
            overlap_param_gather=bool(g("overlap_param_gather")),
            fragments=g("fragments"),
            fragment_layers=g("fragment_layers"),
            ready=Readiness(g("ready") or Readiness.STEP),
            fragment_order=FragmentOrder(g("fragment_order") or FragmentOrder.STRIDED),
            step=g("step"),
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

    # ---- data centres ---------------------------------------------------------------

    def _replica(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        one, eight = E.num(1), E.num(8)
        self.draft.replicas[b.name] = M.Replica(
            **self._common(b),
            tp=g("tp") or one,
            pp=g("pp") or one,
            cp=g("cp") or one,
            ep=g("ep") or one,
            gpus_per_node=g("gpus_per_node") or eight,
            scaleup=g("scaleup"),
            scaleup_link=g("scaleup_link"),
            nics=g("nics"),
            first_stage_layers=g("first_stage_layers"),
            last_stage_layers=g("last_stage_layers"),
            zero=g("zero"),
            recompute=Recompute(g("recompute") or Recompute.SELECTIVE),
            recompute_share=g("recompute_share") if "recompute_share" in b.fields else None,
            micro_batch=g("micro_batch"),
            sequence_parallel=g("sequence_parallel") if g("sequence_parallel") is not None else True,
            virtual_stages=g("virtual_stages"),
            compute=ComputeModel(g("compute") or ComputeModel.BLOCK),
            flash=g("flash") if g("flash") is not None else True,
            gemm_precision=Precision(g("gemm_precision") or Precision.BF16),
            attention_precision=Precision(g("attention_precision") or Precision.BF16),
            capacity_factor=g("capacity_factor"),
            pad_to_capacity=bool(g("pad_to_capacity")),
            moe_imbalance=g("moe_imbalance"),
            grouped_gemm=g("grouped_gemm") if g("grouped_gemm") is not None else True,
            algorithm=Algorithm(g("algorithm") or Algorithm.AUTO),
            tp_comm_overlap=bool(g("tp_comm_overlap")),
            overlap_p2p=bool(g("overlap_p2p")),
            tp_async_backward=bool(g("tp_async_backward")),
            loss_scaling=bool(g("loss_scaling")),
        )

    def _dc(self, b: MergedBlock) -> None:
        replica = self._get(b, "replica")
        if replica is not None:
            return self._replica_dc(b, replica)
        if "sites" in b.fields:
            self.sink.error(
                "CT423",
                f"dc '{b.name}' counts alike sites but holds single-device workers, which are unrolled one by one",
                b.fields["sites"].span,
                help=f"give dc '{b.name}' a replica and replicas (a replica whose tp and pp are 1 is one GPU), or declare each site as a dc",
            )
        workers = self._get(b, "workers")
        if E.symbols(workers) if workers is not None else False:
            self.sink.error(
                "CT309",
                f"dc '{b.name}': workers must be a constant; the topology cannot depend on a param",
                b.fields["workers"].value.span,
            )
        self._centre(b, self._at_defaults(workers, 0))

    def _replica_dc(self, b: MergedBlock, replica: str) -> None:
        """A dc of `replicas` replicas, in `sites` alike sites: the counts may be params (nothing is unrolled)."""
        count = self._get(b, "replicas")
        sites = self._get(b, "sites") if "sites" in b.fields else None
        self._centre(
            b, self._at_defaults(count, 0), replica=replica, replicas=count,
            fabric=Fabric(self._get(b, "fabric") or Fabric.RAIL), oversubscription=self._get(b, "oversubscription"),
            sites=sites, n_sites=self._at_defaults(sites, 1),
        )

    def _at_defaults(self, count: E.Expr | None, absent: int) -> int:
        """A count at the params' defaults: `absent` where it is not given or cannot be evaluated (reported)."""
        if count is None:
            return absent
        try:
            return int(round(E.evaluate(count, self.draft.defaults())))
        except E.EvalError:
            return absent

    def _centre(self, b: MergedBlock, workers: int, **replicas) -> None:
        """The dc's entity: its hardware, jitter and prices, and (`replicas`) the fields of a dc of replicas."""
        jitter, kind, sigma = self._dc_jitter(b)
        self.draft.dcs[b.name] = M.DataCentre(
            **self._common(b),
            workers=workers,
            device=self._get(b, "device") or "",
            link=self._get(b, "link") or "",
            switch=self._get(b, "switch") or "",
            pluggable=self._get(b, "pluggable"),
            jitter=jitter,
            jitter_kind=kind,
            jitter_sigma=sigma,
            **replicas,
            **self._money(b),
        )

    def _money(self, b: MergedBlock) -> dict:
        """A site's power price, PUE and grid carbon intensity (docs/codesign.md)."""
        return {k: self._get(b, k) for k in ("power_price", "pue", "carbon_intensity")}

    def _dc_jitter(self, b: MergedBlock) -> tuple[E.Expr | None, JitterKind | None, E.Expr | None]:
        """Per-worker variability: jitter (the scale), its kind, and a lognormal's sigma."""
        f = b.fields
        if "jitter" not in f:
            if "jitter_kind" in f or "jitter_sigma" in f:
                key = "jitter_kind" if "jitter_kind" in f else "jitter_sigma"
                self._error_once(
                    "CT105",
                    f"dc '{b.name}' sets {key} but no jitter, the scale of the extra time",
                    f[key].key.span,
                    secondary=(Label(b.definition.span, f"dc '{b.name}' defined here"),),
                    help="add jitter = 2 s (each worker's step takes its compute time plus jitter x a random draw)",
                )
            return None, None, None
        written = self._get(b, "jitter_kind") if "jitter_kind" in f else None
        kind = JitterKind(written or S.KINDS["dc"]["jitter_kind"].default)
        sigma = None
        if kind is JitterKind.LOGNORMAL:
            if "jitter_sigma" not in f:
                self._error_once(
                    "CT105",
                    f"dc '{b.name}': lognormal jitter needs jitter_sigma",
                    f["jitter_kind"].value.span,
                    secondary=(Label(b.definition.span, f"dc '{b.name}' defined here"),),
                    help="add jitter_sigma = 0.5 (the sigma of the log of the draw)",
                )
            sigma = self._get(b, "jitter_sigma")
        elif "jitter_sigma" in f:
            shown = f["jitter_kind"].value.span if "jitter_kind" in f else f["jitter"].key.span
            self._error_once(
                "CT113",
                f"dc '{b.name}': jitter_sigma does not apply to {kind} jitter",
                f["jitter_sigma"].key.span,
                label="only for jitter_kind = lognormal",
                secondary=(Label(shown, f"jitter is {kind}"),),
                help="remove jitter_sigma, or set jitter_kind = lognormal",
            )
        return self._get(b, "jitter"), kind, sigma
