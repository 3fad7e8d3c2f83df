"""The serving definitions: built from their checked fields, then held together.

Every field has been typed by then (`blocks.py`: units, bounds, names of the right
kind); this pass builds the frozen instances, pools, workloads, hand-offs and SLOs
(ctdsl.model.serving) and reports what does not fit together:

- a required field not given (CT105), a band without its fraction or a fraction
  without a band (CT105, CT113), chunked batching without a chunk (CT105);
- a pool without an instance (CT140); an slo with no target (CT141);
- an instance whose device lacks what the closed forms read, or whose model has no
  shape (the KV cache needs one) (CT142); a parallel layout the model does not divide
  into (CT143);
- a workload entering a decode pool, or a prefill pool no hand-off leaves (CT470,
  CT471); a hand-off whose ends are not a prefill and a decode pool (CT472), or between
  pools that serve different models (CT473);
- weights that do not fit an instance's memory share, or a request's KV cache that
  does not fit beside them (CT360), at the params' defaults.

The paths each workload's requests take are the `Serving.paths`: a colocated pool alone,
or its prefill pool, each hand-off leaving it and the decode pool it reaches.
"""

from __future__ import annotations

from ctdsl.check.blocks import BlockChecker
from ctdsl.check.draft import Draft
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.language import schema as S
from ctdsl.language.serving import SERVING_KINDS, KvPayload, Role
from ctdsl.model import expr as E
from ctdsl.model import payload as PL
from ctdsl.model import serving as M
from ctdsl.units import DATA, format_quantity

# what the closed forms read of an instance's device (docs/serving.md)
DEVICE_NEEDS = ("peak", "efficiency", "mem_bw", "memory")


def check_serving(ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker, draft: Draft) -> None:
    """Build `draft.serving` from the serving blocks (None if the spec has none), reporting what is wrong."""
    defs = ns.of_kind(*SERVING_KINDS)
    if not defs:
        return
    b = _Builder(ns, sink, blocks, draft)
    for d in defs:
        block = ns.merged(d.name)
        if block is not None:
            getattr(b, f"_{d.kind}")(block)
    paths = b.paths()
    b.fits(paths)
    draft.serving = M.Serving(b.instances, b.pools, b.workloads, b.handoffs, b.slos, tuple(paths))


class _Builder:
    def __init__(self, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker, draft: Draft):
        self.ns, self.sink, self.blocks, self.draft = ns, sink, blocks, draft
        self.instances: dict[str, M.Instance] = {}
        self.pools: dict[str, M.Pool] = {}
        self.workloads: dict[str, M.Workload] = {}
        self.handoffs: dict[str, M.Handoff] = {}
        self.slos: dict[str, M.Slo] = {}

    # ---- reading a block ----------------------------------------------------------------

    def _get(self, b: MergedBlock, key: str):
        return self.blocks.value(b, key)

    def _common(self, b: MergedBlock) -> dict:
        d = b.definition
        return dict(name=d.name, span=d.span, file=d.file, spans={k: f.span for k, f in b.fields.items()}, from_std=d.from_std)

    def _required(self, b: MergedBlock) -> bool:
        """Whether every required field is written (CT105 for each that is not); the refs among them resolved."""
        ok = True
        for key, f in S.KINDS[b.kind].items():
            if not f.required:
                continue
            if key not in b.fields:
                self.sink.error(
                    "CT105",
                    f"{b.kind} '{b.name}' needs {key}",
                    b.definition.span,
                    label=f"no {key}",
                    help=f"set it, e.g. {key} = {f.example}",
                )
                ok = False
            elif self._get(b, key) is None:
                ok = False  # written wrong: reported where it was typed
        return ok

    # ---- the kinds ----------------------------------------------------------------------

    def _instance(self, b: MergedBlock) -> None:
        if not self._required(b):
            return
        g = lambda k: self._get(b, k)  # noqa: E731
        if g("batching") == "chunked" and "chunk" not in b.fields:
            self.sink.error("CT105", f"instance '{b.name}' batches chunked prefill but gives no chunk", b.fields["batching"].value.span, label="chunked", help="set the tokens a chunk holds, e.g. chunk = 512")
            return
        inst = M.Instance(
            **self._common(b),
            device=g("device"),
            model=g("model"),
            tp=g("tp"),
            pp=g("pp"),
            ep=g("ep"),
            scaleup_link=g("scaleup_link"),
            max_batch=g("max_batch"),
            prefill_tokens=g("prefill_tokens"),
            kv_memory=g("kv_memory"),
            mem_efficiency=g("mem_efficiency"),
            overhead=g("overhead"),
            batching=g("batching"),
            chunk=g("chunk"),
        )
        if self._instance_parts(b, inst):
            self.instances[b.name] = inst

    def _instance_parts(self, b: MergedBlock, inst: M.Instance) -> bool:
        """The device gives what the closed forms read; the model has a shape that divides over tp, pp and ep."""
        ok = True
        dev = self.draft.devices.get(inst.device)
        at = b.fields["device"].value.span
        missing = [k for k in DEVICE_NEEDS if dev is not None and getattr(dev, k) is None]
        if missing:
            self.sink.error(
                "CT142",
                f"instance '{b.name}' runs on device '{inst.device}', which gives no {', '.join(missing)}",
                at,
                label="needs " + ", ".join(missing),
                help=f"extend it: device {inst.device}_x : {inst.device} {{ " + "; ".join(f"{k} = {S.KINDS['device'][k].example}" for k in missing) + " }",
            )
            ok = False
        model = self.draft.models.get(inst.model)
        if model is not None and not PL.full_shape(model):
            self.sink.error(
                "CT142",
                f"instance '{b.name}' serves model '{inst.model}', which gives no shape: its KV cache and steps need layers, width, heads, kv_heads, mlp and vocab",
                b.fields["model"].value.span,
                label="no shape",
                help="give the model's shape instead of its params, or extend a shape from std.models",
            )
            ok = False
        elif model is not None:
            ok &= self._layout(b, inst, model)
        return ok

    def _layout(self, b: MergedBlock, inst: M.Instance, model) -> bool:
        env = self.draft.defaults()
        try:
            pp, tp, ep = (E.evaluate(getattr(inst, k), env) for k in ("pp", "tp", "ep"))
            layers, heads = E.evaluate(model.shape["layers"], env), E.evaluate(model.shape["kv_heads"], env)
        except E.EvalError:
            return True  # reported where the value was typed
        problems = []
        if layers % pp:
            problems.append(("pp", f"{layers:g} layers do not split into {pp:g} pipeline stages"))
        if ep > 1 and not PL.is_moe(model):
            problems.append(("ep", f"expert parallelism needs a mixture-of-experts model, and '{model.name}' has no experts"))
        elif tp % ep:
            problems.append(("ep", f"ep {ep:g} does not divide tp {tp:g}: the experts are split inside the tp GPUs"))
        if heads % tp and tp % heads:
            problems.append(("tp", f"{heads:g} KV heads do not split over tp {tp:g}"))
        for key, why in problems:
            span = b.fields[key].value.span if key in b.fields else b.definition.span
            self.sink.error("CT143", f"instance '{b.name}': {why}", span, help="choose a layout the model divides into")
        return not problems

    def _pool(self, b: MergedBlock) -> None:
        if not self._required(b):
            return
        inst = self._get(b, "instance")
        if "instance" not in b.fields:
            self.sink.error(
                "CT140",
                f"pool '{b.name}' has no instance",
                b.definition.span,
                label="a pool of nothing",
                help="name the instance its members are: instance = NAME (an instance block)",
            )
            return
        if inst is None:
            return
        self.pools[b.name] = M.Pool(**self._common(b), role=self._get(b, "role"), instance=inst, instances=self._get(b, "instances"))

    def _workload(self, b: MergedBlock) -> None:
        if not self._required(b):
            return
        g = lambda k: self._get(b, k)  # noqa: E731
        self.workloads[b.name] = M.Workload(
            **self._common(b),
            pool=g("pool"),
            arrival=g("arrival"),
            rate=g("rate"),
            prompt=g("prompt"),
            output=g("output"),
            prompt_cv=g("prompt_cv"),
            output_cv=g("output_cv"),
            slo=g("slo"),
        )

    def _handoff(self, b: MergedBlock) -> None:
        if not self._required(b):
            return
        g = lambda k: self._get(b, k)  # noqa: E731
        band = g("payload") == KvPayload.BAND
        if band and "fraction" not in b.fields:
            self.sink.error("CT105", f"hand-off '{b.name}' sends a band but gives no fraction", b.fields["payload"].value.span, label="band", help="set the fraction of values it keeps, e.g. fraction = 1/4")
            return
        if not band and "fraction" in b.fields:
            self.sink.error("CT113", f"hand-off '{b.name}': fraction applies to a band payload only", b.fields["fraction"].key.span, help="payload = band, or remove the fraction")
            return
        if ("link" in b.fields) == ("route" in b.fields):
            both = "link" in b.fields
            self.sink.error(
                "CT474" if both else "CT105",
                f"hand-off '{b.name}' gives both a link and a route" if both else f"hand-off '{b.name}' gives no link",
                b.fields["route"].key.span if both else b.definition.span,
                label="one or the other" if both else "no link or route",
                help="keep one: the route (the links it crosses, in turn) or the link" if both else "name the link it crosses, e.g. link = ib_ndr, or its route, route = [eth100g, wan, eth100g]",
            )
            return
        route = (g("link"),) if "link" in b.fields else g("route")
        if route is None or None in route:
            return  # a name reported where it was written
        plug = self.draft.pluggables.get(g("at") or "gpu")
        if plug is not None and "port" not in plug.stages:  # its line rate is its port's (as a dc's, complete.py)
            self.sink.error(
                "CT105",
                f"pluggable '{plug.name}' has no port stage, which hand-off '{b.name}' needs",
                plug.span,
                secondary=(Label(b.fields["at"].value.span, "used here"),),
                help="add port { rate = 25 GB/s; host = 50 GB/s }",
            )
            return
        self.handoffs[b.name] = M.Handoff(
            **self._common(b),
            source=g("from"),
            target=g("to"),
            link=route[0],
            route=tuple(route),
            mode=g("mode"),
            payload=g("payload"),
            fraction=g("fraction") if band else None,
            at=g("at") or "gpu",
            cost=g("cost"),
            label=g("label"),
        )

    def _slo(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        if not any(k in b.fields for k in ("ttft", "tpot", "e2e")):
            self.sink.error("CT141", f"slo '{b.name}' sets no target", b.definition.span, label="no ttft, tpot or e2e", help="give at least one, e.g. ttft = 1 s; tpot = 25 ms")
            return
        self.slos[b.name] = M.Slo(**self._common(b), ttft=g("ttft") if "ttft" in b.fields else None, tpot=g("tpot") if "tpot" in b.fields else None, e2e=g("e2e") if "e2e" in b.fields else None, percentile=g("percentile"))

    # ---- holding them together ---------------------------------------------------------------

    def _model_of(self, pool: str) -> str | None:
        p = self.pools.get(pool)
        inst = self.instances.get(p.instance) if p is not None else None
        return inst.model if inst is not None else None

    def paths(self) -> list[M.ServingPath]:
        ok_handoffs = [h for h in self.handoffs.values() if self._handoff_ends(h)]
        out = []
        for w in self.workloads.values():
            pool = self.pools.get(w.pool)
            if pool is None or pool.instance not in self.instances:
                continue
            at = w.spans["pool"]
            if pool.role is Role.DECODE:
                self.sink.error("CT470", f"workload '{w.name}' enters decode pool '{pool.name}'", at, secondary=(Label(pool.span, "a decode pool"),), help="requests arrive at a prefill or a colocated pool")
            elif pool.role is Role.COLOCATED:
                out.append(M.ServingPath(w.name, pool.name, None, None))
            else:
                leaving = [h for h in ok_handoffs if h.source == pool.name]
                if not leaving and not any(h.source == pool.name for h in self.handoffs.values()):
                    self.sink.error("CT471", f"workload '{w.name}' enters prefill pool '{pool.name}', and no hand-off leaves it", at, help=f"add one: handoff kv {{ from = {pool.name}; to = DECODE_POOL; link = LINK }}")
                out.extend(M.ServingPath(w.name, pool.name, h.name, h.target) for h in leaving)
        return out

    def _handoff_ends(self, h: M.Handoff) -> bool:
        src, dst = self.pools.get(h.source), self.pools.get(h.target)
        if src is None or dst is None:
            return False  # reported with the pool
        ok = True
        for pool, role, key in ((src, Role.PREFILL, "from"), (dst, Role.DECODE, "to")):
            if pool.role is not role:
                self.sink.error("CT472", f"hand-off '{h.name}' goes {key} {pool.role} pool '{pool.name}'", h.spans[key], secondary=(Label(pool.span, f"a {pool.role} pool"),), help="a hand-off goes from a prefill pool to a decode pool")
                ok = False
        ms, md = self._model_of(src.name), self._model_of(dst.name)
        if ok and ms is not None and md is not None and ms != md:
            self.sink.error(
                "CT473",
                f"hand-off '{h.name}' joins pools of different models: '{src.name}' serves {ms}, '{dst.name}' serves {md}",
                h.spans["to"],
                secondary=(Label(h.spans["from"], f"serves {ms}"),),
                help="a KV cache is read only by the model that wrote it: serve one model in both pools",
            )
            ok = False
        return ok and ms is not None and md is not None

    def fits(self, paths: list[M.ServingPath]) -> None:
        """Weights and one request's KV cache in each instance's memory share, at the defaults (CT360)."""
        env = self.draft.defaults()
        seen = set()
        for p in paths:
            w = self.workloads[p.workload]
            for pool_name in filter(None, (p.entry, p.decode)):
                inst = self.instances[self.pools[pool_name].instance]
                if (inst.name, w.name) in seen:
                    continue
                seen.add((inst.name, w.name))
                self._fit(inst, w, env)

    def _fit(self, inst: M.Instance, w: M.Workload, env: dict) -> None:
        model, dev = self.draft.models.get(inst.model), self.draft.devices.get(inst.device)
        if model is None or dev is None:
            return
        try:
            v = E.evaluate(model.bytes_per_value, env)
            weights = E.evaluate(model.params, env) * v
            room = E.evaluate(dev.memory, env) * E.evaluate(inst.tp, env) * E.evaluate(inst.pp, env) * E.evaluate(inst.kv_memory, env)
            kv = E.evaluate(PL.kv_bytes_per_token(model), env) * (E.evaluate(w.prompt, env) + E.evaluate(w.output, env))
        except (E.EvalError, TypeError):
            return
        show = lambda x: format_quantity(x, DATA)  # noqa: E731
        if weights >= room:
            why = f"the weights of {inst.model} ({show(weights)}) do not fit its {show(room)} (kv_memory x memory x tp x pp)"
        elif weights + kv > room:
            why = f"one request of workload '{w.name}' needs {show(kv)} of KV cache, and {show(room - weights)} is left beside the weights"
        else:
            return
        self.sink.error("CT360", f"instance '{inst.name}': {why}", inst.span, label="does not fit", help="more GPUs (tp, pp), a device with more memory, a larger kv_memory or shorter requests")


__all__ = ["check_serving"]
