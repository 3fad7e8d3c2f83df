"""The checker: loaded syntax trees -> a checked `Spec`, or diagnostics.

It runs in passes and never stops at the first problem:

1. collect every definition into one namespace (duplicates point at both);
2. type params (constants with units, ranges, sweeps);
3. type every field of every block against its kind's schema: unknown fields,
   dimensions, names of the right kind, bounds at the defaults and range ends;
4. build the typed definitions, then check that what is used is complete
   (a dc's device must have an efficiency, a scheme's payload its fraction);
5. check the topology and where each scheme's work runs (`topology.py`).

Only when no error was found is a `Spec` returned.
"""

from __future__ import annotations

from fractions import Fraction

from ctdsl import limits
from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.check.exprs import ExprTyper, Typed
from ctdsl.check.fields import FieldReader, check_bound, field_spec
from ctdsl.check.loader import Loaded
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.syntax import ast


class Checker:
    def __init__(self, loaded: Loaded, sink: DiagnosticSink, overrides: dict[str, str] | None = None):
        self.loaded = loaded
        self.overrides = dict(overrides or {})
        self.sink = sink
        self.ns = Namespace(sink)
        self.params: dict[str, M.Param] = {}
        self.reader: FieldReader | None = None
        self.spec = M.Spec(root=loaded.root, files=[f.path for f in loaded.files])
        self._refs: dict[tuple, str | None] = {}
        self._validated: set[str] = set()

    # ---- pass 1 and 2 ----------------------------------------------------------

    def run(self) -> M.Spec | None:
        self.ns.collect(self.loaded.files, self.loaded.std, self.loaded.root)
        for d in self.ns.of_kind("param"):
            p = self._param(d.node)  # type: ignore[arg-type]
            if p is not None:
                self.params[p.name] = p
        self.spec.params = self.params
        self._unknown_overrides()
        self.reader = FieldReader(self.ns, self.sink, self.params)
        for d in self.ns.of_kind(*S.KINDS):
            block = self.ns.merged(d.name)
            if block is not None:
                self._validate(block)
        self._build()
        from ctdsl.check.topology import check_topology

        check_topology(self.spec, self.ns, self.sink)
        self._statements()
        return None if self.sink.has_errors else self.spec

    def _const(self, node: ast.Expr, what: str) -> Typed | None:
        def no_names(ref: ast.Ref) -> None:
            self.sink.error(
                "CT309",
                f"{what} must be a constant, not '{ref.dotted}'",
                ref.span,
                help="a param's default and range are numbers with units, e.g. 12.5 GB/s",
            )
            return None

        typed = ExprTyper(self.sink, no_names).type(node)
        if typed is None:
            return None
        try:
            E.evaluate(typed.expr, {})
        except E.EvalError as err:
            self.sink.error("CT306", f"{what} cannot be evaluated: {err}", node.span)
            return None
        return typed

    def _param(self, node: ast.Param) -> M.Param | None:
        name = node.name.text
        default = self._const(node.default, f"the default of param '{name}'")
        if default is None:
            return None
        unit, scale = None, 1.0
        if isinstance(node.default, ast.Number) and node.default.unit:
            unit = node.default.unit
            scale = float(U.parse_unit(unit).scale)
        value = E.evaluate(default.expr, {})
        overridden = name in self.overrides
        if overridden:
            value = self._override(name, default)
            if value is None:
                return None
        p = M.Param(
            name=name,
            dim=default.dim,
            default=value,
            unit=unit,
            unit_scale=scale,
            display=node.display,
            span=node.name.span,
        )
        if node.display is not None and not _safe_display(node.display):
            end = node.span  # the display string ends the statement
            at = Span(end.file, end.end_line, max(1, end.end_col - len(node.display) - 2), end.end_line, end.end_col)
            self.sink.error(
                "CT310",
                f"display name of '{name}' may use letters, digits, _ ^ {{ }} and \\-commands for Greek letters and \\mathrm",
                at,
                help=r'e.g. "b_{\mathrm{WAN}}"',
            )
        r = node.range
        if r is None:
            return p
        lo = self._const(r.lo, f"the low end of param '{name}'")
        hi = self._const(r.hi, f"the high end of param '{name}'")
        if lo is None or hi is None:
            return p
        for end, t, n in (("low", lo, r.lo), ("high", hi, r.hi)):
            if t.dim != default.dim:
                self.sink.error(
                    "CT207",
                    f"the {end} end of param '{name}' is {t.dim.describe()}, but its default is {default.dim.describe()}",
                    n.span,
                    label=t.dim.describe(),
                    secondary=(Label(node.default.span, default.dim.describe()),),
                )
                return p
        p.lo, p.hi = E.evaluate(lo.expr, {}), E.evaluate(hi.expr, {})
        p.spacing, p.count = r.spacing, r.count
        if p.lo >= p.hi:
            self.sink.error(
                "CT307",
                f"param '{name}': the range must go from low to high",
                r.span,
                label=f"{U.format_quantity(p.lo, p.dim)} .. {U.format_quantity(p.hi, p.dim)}",
                help="write the smaller end first",
            )
        elif not overridden and not p.lo <= p.default <= p.hi:
            self.sink.error(
                "CT307",
                f"param '{name}': default {U.format_quantity(p.default, p.dim)} lies outside its range",
                node.default.span,
                secondary=(Label(r.span, "range"),),
                help="move the default into the range, or widen the range",
            )
        if r.spacing == "log" and p.lo <= 0:
            self.sink.error(
                "CT307",
                f"param '{name}': a log sweep needs a positive low end",
                r.lo.span,
                label=U.format_quantity(p.lo, p.dim),
                help="start the sweep above zero, or sweep with lin",
            )
        if r.count is not None:
            if r.count < 1:
                self.sink.error("CT307", f"param '{name}': a sweep needs at least one point", r.span)
            elif r.count > limits.MAX_SWEEP_POINTS:
                self.sink.error(
                    "CT607",
                    f"param '{name}': {r.count} sweep points is more than {limits.MAX_SWEEP_POINTS}",
                    r.span,
                    help="sweep fewer points; a log sweep covers decades with few",
                )
        return p

    def _override(self, name: str, default: Typed) -> float | None:
        from ctdsl.syntax.parser import parse_expression

        text = self.overrides[name]
        where = f"--set {name}"
        self.loaded.sources.add(where, text)
        node = parse_expression(text, where, self.sink)
        if node is None:
            return None
        typed = self._const(node, f"the value given for '{name}'")
        if typed is None:
            return None
        if typed.dim != default.dim:
            self.sink.error(
                "CT202",
                f"param '{name}' is {default.dim.describe()}, but the value given is {typed.dim.describe()}",
                node.span,
                label=typed.dim.describe(),
                help=f"give a value with a unit of {default.dim.describe()}",
            )
            return None
        return E.evaluate(typed.expr, {})

    def _unknown_overrides(self) -> None:
        for name, text in self.overrides.items():
            if name in self.params or any(d.name == name for d in self.ns.of_kind("param")):
                continue
            where = f"--set {name}"
            self.loaded.sources.add(where, text)
            self.sink.error(
                "CT101",
                f"--set names unknown param '{name}'",
                Span(where, 1, 1, 1, len(text) + 1),
                help=did_you_mean(name, self.ns.names_of("param")) or f"params are: {', '.join(self.ns.names_of('param')) or 'none'}",
            )

    # ---- pass 3: every field of every block -------------------------------------

    def _validate(self, block: MergedBlock) -> None:
        if block.name in self._validated:
            return
        self._validated.add(block.name)
        kind = block.kind
        table = S.KINDS[kind]
        for key, node in block.fields.items():
            spec = table.get(key)
            if spec is None:
                where = f"{kind} '{block.name}'"
                hint = did_you_mean(key, table) or (
                    f"'{key}' is a stage: write {key} {{ ... }}" if key in S.STAGES and kind == "pluggable" else None
                )
                self.sink.error(
                    "CT104",
                    f"{where} has no field '{key}'",
                    node.key.span,
                    label="unknown field",
                    help=hint or f"{kind} fields are: {', '.join(table)}",
                )
                continue
            self._field(block, None, key, spec)
        for stage_name, stage in block.stages.items():
            if kind != "pluggable":
                self.sink.error(
                    "CT104",
                    f"a {kind} has no stages, but '{block.name}' has '{stage_name}'",
                    stage.span,
                    help="stages (port, optics, compute, fpga) belong to a pluggable",
                )
                continue
            if stage_name not in S.STAGES:
                self.sink.error(
                    "CT104",
                    f"pluggable '{block.name}' has no stage '{stage_name}'",
                    stage.span,
                    label="unknown stage",
                    help=did_you_mean(stage_name, S.STAGES) or f"stages are: {', '.join(S.STAGES)}",
                )
                continue
            for key, node in stage.fields.items():
                spec = S.STAGES[stage_name].get(key)
                if spec is None:
                    self.sink.error(
                        "CT104",
                        f"stage {stage_name} of '{block.name}' has no field '{key}'",
                        node.key.span,
                        help=did_you_mean(key, S.STAGES[stage_name])
                        or f"{stage_name} fields are: {', '.join(S.STAGES[stage_name])}",
                    )
                    continue
                self._field(block, stage_name, key, spec)
        for extra in block.extra_stages:
            self.sink.error("CT104", f"stage '{extra.name.text}' cannot nest inside another stage", extra.span)

    def _field(self, block: MergedBlock, stage: str | None, key: str, spec: S.FieldSpec) -> object:
        node = (block.stages[stage].fields if stage else block.fields)[key]
        value = node.value
        if spec.type == "quantity":
            typed = self.reader.read_quantity(block, stage, key, None)
            if typed is not None:
                self.reader.check_bounds(block, stage, key, typed, spec)
            return typed
        if spec.type == "string":
            if not isinstance(value, ast.StringValue):
                self.sink.error("CT206", f"'{key}' takes a string in double quotes", value.span, help=f"e.g. {key} = {spec.example}")
                return None
            return value.text
        if spec.type == "ops":
            if not isinstance(value, ast.ListValue):
                self.sink.error("CT206", f"'{key}' takes a list of operations", value.span, help=f"e.g. {key} = {spec.example}")
                return None
            ops = []
            for item in value.items:
                word = _word(item)
                if word is None or word not in S.OPERATIONS:
                    self.sink.error(
                        "CT108",
                        f"unknown operation {_show(item)}",
                        item.span,
                        help=(did_you_mean(word, S.OPERATIONS) if word else None)
                        or f"operations are: {', '.join(S.OPERATIONS)}",
                    )
                    continue
                ops.append(word)
            return tuple(ops)
        word = _word(value)
        if spec.type == "bool":
            if word not in ("true", "false"):
                self.sink.error("CT206", f"'{key}' is true or false, not {_show(value)}", value.span)
                return None
            return word == "true"
        if spec.type == "enum":
            if word not in spec.choices:
                self.sink.error(
                    "CT108",
                    f"unknown {key} {_show(value)}",
                    value.span,
                    label=f"not a {key}",
                    help=(did_you_mean(word, spec.choices) if word else None)
                    or f"{key} is one of: {', '.join(spec.choices)}",
                )
                return None
            return word
        if spec.type == "ref":
            return self._ref(block, key, spec, value)
        raise AssertionError(spec.type)  # pragma: no cover

    def _ref(self, block: MergedBlock, key: str, spec: S.FieldSpec, value: ast.Value) -> str | None:
        cache = (block.name, key)
        if cache in self._refs:
            return self._refs[cache]
        word = _word(value)
        result = None
        kinds = spec.refs
        if word is None:
            self.sink.error(
                "CT206",
                f"'{key}' names a {' or '.join(kinds)}, not {_show(value)}",
                value.span,
                help=f"e.g. {key} = {spec.example}",
            )
        elif word == "gpu" and "gpu" in kinds:
            result = "gpu"
        elif word in self.ns.refused:
            pass  # its definition was refused as a built-in name: reported there, once
        else:
            d = self.ns.defs.get(word)
            if d is None:
                pool = [x.name for x in self.ns.of_kind(*kinds)] + (["gpu"] if "gpu" in kinds else [])
                self.sink.error(
                    "CT101",
                    f"unknown {' or '.join(k for k in kinds)} '{word}'",
                    value.span,
                    label="not defined",
                    help=did_you_mean(word, pool) or _missing_import_hint(kinds),
                )
            elif d.kind not in kinds and key == "sum_at":
                self.sink.error(
                    "CT402",
                    f"a sum can only run at a switch, but '{word}' is a {d.kind}",
                    value.span,
                    label=f"a {d.kind}",
                    secondary=(Label(d.span, f"{d.kind} '{word}' defined here"),),
                    notes=("a link module sees one worker's stream; it cannot sum across workers",),
                    help="name a switch with sum = true",
                )
            elif d.kind not in kinds:
                self.sink.error(
                    "CT102",
                    f"'{key}' names a {' or '.join(kinds)}, but '{word}' is a {d.kind}",
                    value.span,
                    label=f"a {d.kind}",
                    secondary=(Label(d.span, f"{d.kind} '{word}' defined here"),),
                    help=did_you_mean(word, [x.name for x in self.ns.of_kind(*kinds)]),
                )
            else:
                result = word
        self._refs[cache] = result
        return result

    # ---- pass 4: typed definitions ---------------------------------------------

    def _get(self, block: MergedBlock, key: str, stage: str | None = None):
        fields = block.stages[stage].fields if stage else block.fields
        spec = field_spec(block.kind, stage, key)
        if key not in fields:
            if spec.type == "quantity":
                return E.Num(Fraction(spec.default)) if spec.default is not None else None
            return spec.default
        if spec.type == "quantity":
            typed = self.reader.read_quantity(block, stage, key, None)
            return typed.expr if typed else None
        if spec.type == "ref":
            return self._refs.get((block.name, key))
        return self._field_quiet(block, stage, key, spec)

    def _field_quiet(self, block, stage, key, spec):
        quiet = DiagnosticSink()
        saved, self.sink = self.sink, quiet
        try:
            return self._field(block, stage, key, spec)
        finally:
            self.sink = saved

    def _common(self, block: MergedBlock) -> dict:
        d = block.definition
        spans = {k: f.span for k, f in block.fields.items()}
        for sname, st in block.stages.items():
            spans[sname] = st.span
            for k, f in st.fields.items():
                spans[f"{sname}.{k}"] = f.span
        return dict(name=d.name, span=d.span, file=d.file, spans=spans, from_std=d.from_std)

    def _build(self) -> None:
        for d in self.ns.of_kind(*S.KINDS):
            block = self.ns.merged(d.name)
            if block is None:
                continue
            builder = getattr(self, f"_build_{d.kind}")
            builder(block)

    def _build_model(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        shape = {k: g(k) for k in S.SHAPE_FIELDS if k in b.fields}
        params = g("params") if "params" in b.fields else None
        if params is not None and shape:
            first = next(iter(shape))
            self.sink.error(
                "CT308",
                f"model '{b.name}' gives both params and a shape",
                b.fields["params"].key.span,
                secondary=(Label(b.fields[first].key.span, "shape given here"),),
                help="give params, or the shape it follows from, not both",
            )
            return
        if params is None and len(shape) == len(S.SHAPE_FIELDS) and all(v is not None for v in shape.values()):
            params = self._count_from_shape(b, shape)
        model = M.Model(
            **self._common(b),
            params=params,
            bytes_per_value=g("bytes_per_value"),
            tokens=g("tokens"),
            flops_per_token=g("flops_per_token"),
            shape=shape or None,
            kv_tokens=g("kv_tokens"),
        )
        if model.kv_tokens is not None and len(shape) != len(S.SHAPE_FIELDS):
            self.sink.error(
                "CT105",
                f"model '{b.name}': kv_tokens needs the full shape (layers, width, heads, kv_heads, mlp, vocab)",
                b.fields["kv_tokens"].span,
                help="the KV cache per token is 2 L g (d/h) v bytes: give the shape instead of params",
            )
        if model.flops_per_token is None and params is not None:
            model.flops_per_token = E.num(6) * params
        self.spec.models[b.name] = model

    def _count_from_shape(self, b: MergedBlock, shape: dict[str, E.Expr]) -> E.Expr:
        L, d, h, g, f, V = (shape[k] for k in S.SHAPE_FIELDS)
        env = self.spec.defaults()
        try:
            dv, hv = E.evaluate(d, env), E.evaluate(h, env)
            gv = E.evaluate(g, env)
            if dv % hv:
                self.sink.error(
                    "CT308",
                    f"model '{b.name}': width {dv:g} is not a multiple of heads {hv:g}",
                    b.fields["heads"].value.span,
                    help="the head dimension d/h is a whole number",
                )
            elif gv > hv or hv % gv:
                self.sink.error(
                    "CT308",
                    f"model '{b.name}': heads {hv:g} is not a multiple of kv_heads {gv:g}",
                    b.fields["kv_heads"].value.span,
                    help="each key/value head serves a whole number of query heads",
                )
        except E.EvalError:
            pass
        # P = L(2d^2 + 2 d g d/h + 3 d f) + 2 V d  (domain.md section 2)
        two, three = E.num(2), E.num(3)
        return L * (two * d * d + two * d * g * (d / h) + three * d * f) + two * V * d

    def _plain(self, b: MergedBlock, cls):
        """A definition whose fields are its kind's schema fields, one for one."""
        return cls(**self._common(b), **{k: self._get(b, k) for k in S.KINDS[b.kind]})

    def _build_device(self, b: MergedBlock) -> None:
        self.spec.devices[b.name] = self._plain(b, M.Device)

    def _build_link(self, b: MergedBlock) -> None:
        self.spec.links[b.name] = self._plain(b, M.Link)

    def _build_pluggable(self, b: MergedBlock) -> None:
        stages = {}
        for name in S.STAGES:
            if name not in b.stages:
                continue
            st = b.stages[name]
            get = lambda k: self._get(b, k, name) if k in S.STAGES[name] else None  # noqa: E731
            stages[name] = M.PluggableStage(
                name=name,
                rate=get("rate"),
                host=get("host"),
                budget=get("budget"),
                performs=get("performs") or (),
                span=st.span,
            )
        self.spec.pluggables[b.name] = M.Pluggable(
            **self._common(b),
            stages=stages,
            latency=self._get(b, "latency"),
            power=self._get(b, "power"),
            ops=self._get(b, "ops") or (),
        )

    def _build_switch(self, b: MergedBlock) -> None:
        self.spec.switches[b.name] = self._plain(b, M.Switch)

    def _build_dc(self, b: MergedBlock) -> None:
        workers = self._get(b, "workers")
        n = 0
        if workers is not None:
            try:
                n = int(round(E.evaluate(workers, self.spec.defaults())))
            except E.EvalError:
                n = 0
        if E.symbols(workers) if workers is not None else False:
            self.sink.error(
                "CT309",
                f"dc '{b.name}': workers must be a constant; the topology cannot depend on a param",
                b.fields["workers"].value.span,
            )
        self.spec.dcs[b.name] = M.DataCentre(
            **self._common(b),
            workers=n,
            device=self._get(b, "device") or "",
            link=self._get(b, "link") or "",
            switch=self._get(b, "switch") or "",
            pluggable=self._get(b, "pluggable"),
        )
        self._dc_jitter(b, self.spec.dcs[b.name])

    def _dc_jitter(self, b: MergedBlock, dc: M.DataCentre) -> None:
        """Per-worker variability: jitter (the scale), its kind, and a lognormal's sigma."""
        f = b.fields
        kind = self._get(b, "jitter_kind") if "jitter_kind" in f else None
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
            return
        dc.jitter = self._get(b, "jitter")
        dc.jitter_kind = kind or S.KINDS["dc"]["jitter_kind"].default
        if dc.jitter_kind == "lognormal":
            if "jitter_sigma" not in f:
                self._error_once(
                    "CT105",
                    f"dc '{b.name}': lognormal jitter needs jitter_sigma",
                    f["jitter_kind"].value.span,
                    secondary=(Label(b.definition.span, f"dc '{b.name}' defined here"),),
                    help="add jitter_sigma = 0.5 (the sigma of the log of the draw)",
                )
            dc.jitter_sigma = self._get(b, "jitter_sigma")
        elif "jitter_sigma" in f:
            shown = f["jitter_kind"].value.span if "jitter_kind" in f else f["jitter"].key.span
            self._error_once(
                "CT113",
                f"dc '{b.name}': jitter_sigma does not apply to {dc.jitter_kind} jitter",
                f["jitter_sigma"].key.span,
                label="only for jitter_kind = lognormal",
                secondary=(Label(shown, f"jitter is {dc.jitter_kind}"),),
                help="remove jitter_sigma, or set jitter_kind = lognormal",
            )

    def _error_once(self, code: str, message: str, span: Span, **kw) -> None:
        """Report a problem once, though several dcs inherit it from one base."""
        seen = self.__dict__.setdefault("_reported_once", set())
        if (code, span) not in seen:
            seen.add((code, span))
            self.sink.error(code, message, span, **kw)

    def _build_scheme(self, b: MergedBlock) -> None:
        g = lambda k: self._get(b, k)  # noqa: E731
        payload = g("payload") if "payload" in b.fields else None
        at_name = g("at")
        if at_name is None or at_name == "gpu":
            at = M.Placement("gpu", None)
        else:
            kind = self.ns.defs[at_name].kind
            at = M.Placement(kind, at_name)
        cost = g("cost")
        if cost is None and payload is not None:
            cost = E.num(S.DEFAULT_COST[payload])
        scheme = M.Scheme(
            **self._common(b),
            payload=payload or "dense",
            fraction=g("fraction"),
            bits=g("bits"),
            block=g("block"),
            scale=g("scale"),
            index=g("index"),
            chunk=g("chunk"),
            k=g("k"),
            collective=g("collective") if "collective" in b.fields else "",
            at=at,
            sum_at=g("sum_at"),
            loopback=bool(g("loopback")),
            period=g("period"),
            steps=g("steps"),
            overlap=bool(g("overlap")),
            cost=cost if cost is not None else E.num(0),
            model=g("model") or "",
            label=g("label"),
        )
        if payload is not None:
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
        self.spec.schemes[b.name] = scheme

    def _build_simulation(self, b: MergedBlock) -> None:
        if self.spec.simulation is not None:
            self.sink.error(
                "CT103",
                "a spec has at most one simulation block",
                b.definition.span,
                secondary=(Label(self.spec.simulation.span, "first simulation block"),),
            )
            return
        g = lambda k: self._get(b, k)  # noqa: E731
        self.spec.simulation = M.Simulation(**self._common(b), steps=g("steps"), seeds=g("seeds"), warmup=g("warmup"))
        for key, most in (("steps", limits.MAX_SIM_STEPS), ("warmup", limits.MAX_SIM_STEPS), ("seeds", limits.MAX_SIM_SEEDS)):
            expr = getattr(self.spec.simulation, key)
            if key not in b.fields or expr is None:
                continue
            try:
                v = E.evaluate(expr, self.spec.defaults())
            except E.EvalError:
                continue
            if v > most:
                self.sink.error(
                    "CT608",
                    f"{b.name}.{key} is {v:g}; a simulation runs at most {most:,} {key}",
                    b.fields[key].value.span,
                    help="simulate fewer steps or seeds: the confidence interval narrows as 1/sqrt(seeds)",
                )
        warmup = self.spec.simulation.warmup
        if "warmup" in b.fields and warmup is not None:
            try:
                w = E.evaluate(warmup, self.spec.defaults())
            except E.EvalError:
                return
            if w != int(w):
                self.sink.error(
                    "CT305",
                    f"{b.name}.warmup must be a whole number of steps, but it is {w:g}",
                    b.fields["warmup"].value.span,
                    help="e.g. warmup = 20",
                )

    # ---- statements that tie definitions together -------------------------------

    def _statements(self) -> None:
        schemes = self.spec.schemes
        for stmt in self.ns.breakevens:
            ok = True
            for n in (stmt.x, stmt.y):
                ok &= self._expect(n, "scheme")
            ok &= self._expect(stmt.over, "param")
            if ok and stmt.x.text == stmt.y.text:
                self.sink.error("CT415", "a break-even compares two different schemes", stmt.span)
                ok = False
            if ok and stmt.x.text in schemes and stmt.y.text in schemes:
                self.spec.breakevens.append(M.Breakeven(stmt.x.text, stmt.y.text, stmt.over.text, stmt.span))
        for i, stmt in enumerate(self.ns.baselines):
            if i > 0:
                self.sink.error(
                    "CT103",
                    "the baseline is named twice",
                    stmt.span,
                    secondary=(Label(self.ns.baselines[0].span, "first named here"),),
                )
                continue
            if self._expect(stmt.scheme, "scheme"):
                self.spec.baseline = stmt.scheme.text

    def _expect(self, name: ast.Name, kind: str) -> bool:
        d = self.ns.defs.get(name.text)
        if d is None:
            self.sink.error(
                "CT101",
                f"unknown {kind} '{name.text}'",
                name.span,
                label="not defined",
                help=did_you_mean(name.text, self.ns.names_of(kind)),
            )
            return False
        if d.kind != kind:
            self.sink.error(
                "CT102",
                f"expected a {kind}, but '{name.text}' is a {d.kind}",
                name.span,
                secondary=(Label(d.span, f"{d.kind} defined here"),),
                help=did_you_mean(name.text, self.ns.names_of(kind)),
            )
            return False
        return True


def _word(value: ast.Value) -> str | None:
    if isinstance(value, ast.Ref) and len(value.parts) == 1:
        return value.parts[0].text
    return None


def _show(value: ast.Value) -> str:
    if isinstance(value, ast.Ref):
        return f"'{value.dotted}'"
    if isinstance(value, ast.Number):
        return f"the number {value.text}" + (f" {value.unit}" if value.unit else "")
    if isinstance(value, ast.StringValue):
        return "a string"
    if isinstance(value, ast.ListValue):
        return "a list"
    return "an expression"


def _missing_import_hint(kinds: tuple[str, ...]) -> str | None:
    for kind, module in (("link", "links"), ("device", "devices"), ("model", "models")):
        if kind in kinds:
            return f"is an import missing? The presets are in std.{module}"
    return None


_SAFE_DISPLAY_COMMANDS = {
    "alpha", "beta", "gamma", "delta", "epsilon", "eta", "theta", "kappa", "lambda", "mu", "nu",
    "rho", "sigma", "tau", "phi", "chi", "psi", "omega", "Delta", "Sigma", "Omega", "Phi", "Gamma",
    "mathrm", "text", "mathit", "mathbf", "ell",
}


def _safe_display(text: str) -> bool:
    import re

    if not re.fullmatch(r"[A-Za-z0-9_^{}\\ ,.'-]*", text) or len(text) > 64:
        return False
    return all(cmd in _SAFE_DISPLAY_COMMANDS for cmd in re.findall(r"\\([A-Za-z]+)", text))


__all__ = ["Checker", "Span"]
