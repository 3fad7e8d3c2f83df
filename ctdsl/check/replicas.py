"""Checks of data centres that hold model-parallel replicas.

A replica is tp x pp x cp GPUs; a dc holds `replicas` of them. The checks, at
the params' defaults (the degrees and counts are whole numbers by then, CT305):

- every dc holds replicas, or none does, and a dc of replicas counts them with
  `replicas`, not `workers` (CT420);
- a replica's GPUs fill whole nodes, or a node holds whole replicas (CT419);
- tp_comm_overlap needs sequence parallelism (CT450);
- a replica divides the model each scheme trains: layers by pp, attention heads
  and key/value heads by tp, routed experts by ep (CT418);
- `compute = operations` needs the model's full shape with `seq` and the device's
  `mem_bw`, and an FP8 precision the device's `peak_fp8` (CT441); the fields only it
  reads, and the MoE execution's on a dense model, would change nothing (CT442, as CT113 refuses
  a bucket without overlap = backward);
- interleaved virtual stages divide the layers of every stage; an uneven first or last
  stage holds v - 1 whole chunks and one shorter one, which may hold only the embedding
  or the LM head, as Llama 3 ran them (CT440);
- the sites pair their shards: GPU j of a replica in one dc syncs with GPU j of
  the replicas in the others, so every dc shards the model alike (the same tp,
  pp, cp and ep) (CT421);
- a dc of several alike sites (`sites`, which a param may set) joins them in a
  ring with a WAN from the dc to itself (CT412 without one), and that ring needs
  at least two sites at the default and at both ends of the count's range (CT422);
- a hierarchical all-gather exchanges every GPU's shard, so a site sends in
  proportion to its GPUs: into a dc of several sites it comes from a dc with as
  many GPUs a site, or its first site would receive what the others do not (CT426).
"""

from __future__ import annotations

from ctdsl import units as U
from ctdsl.check.draft import Draft
from ctdsl.check.fields import points
from ctdsl.check.names import Namespace
from ctdsl.diagnostics import DiagnosticSink, Label
from ctdsl.language import bounds as B
from ctdsl.model import entities as M
from ctdsl.model import expr as E
from ctdsl.model import payload as PL
from ctdsl.model.graph import count_text, replica_counts, several_sites

DEGREES = ("tp", "pp", "cp", "ep")
# replica fields only compute = operations reads (CT442 otherwise), and those of a MoE model's experts
MOE_EXECUTION = ("capacity_factor", "pad_to_capacity", "moe_imbalance", "grouped_gemm")
OPERATIONS_FIELDS = ("flash", "gemm_precision", "attention_precision", "tp_async_backward", *MOE_EXECUTION)
# model shape field -> the degree that must divide it, and what it splits
_DIVIDES = (("layers", "pp", "layers"), ("heads", "tp", "attention heads"), ("kv_heads", "tp", "key/value heads"), ("experts", "ep", "routed experts"))


def _int(expr: E.Expr | None, env: dict[str, float], default: int = 1) -> int | None:
    if expr is None:
        return default
    try:
        return int(round(E.evaluate(expr, env)))
    except E.EvalError:
        return None


def _same_count(a: E.Expr, b: E.Expr) -> bool:
    """Whether two counts are equal whatever the params: the same constant, or the same expression."""
    x, y = E.exact(a), E.exact(b)
    return x == y if x is not None and y is not None else E.render(a) == E.render(b)


class ReplicaCheck:
    def __init__(self, spec: Draft, ns: Namespace, sink: DiagnosticSink):
        self.spec, self.ns, self.sink = spec, ns, sink
        self.env = spec.defaults()
        self._said: set[tuple[str, str]] = set()  # a replica's overlap reported once, however many dcs hold it

    def run(self) -> None:
        dcs = list(self.spec.dcs.values())
        with_rep = [d for d in dcs if d.replica]
        if not with_rep:
            return
        for d in with_rep:
            block = self.ns.merged(d.name)
            if block is not None and "workers" in block.fields:
                self.sink.error(
                    "CT420",
                    f"dc '{d.name}' holds replicas: count them with replicas, not workers",
                    block.fields["workers"].span,
                    help=f"remove workers: the replicas field counts the replicas of '{d.replica}'",
                )
        plain = [d for d in dcs if not d.replica]
        if plain:
            self.sink.error(
                "CT420",
                f"dc '{plain[0].name}' holds single-device workers while dc '{with_rep[0].name}' holds replicas",
                plain[0].span,
                secondary=(Label(with_rep[0].spans.get("replica", with_rep[0].span), "replicas here"),),
                help="give every dc a replica, or none (a replica whose tp and pp are 1 is one GPU)",
            )
            return
        for d in with_rep:
            rep = self.spec.replicas.get(d.replica)
            if rep is not None:
                self._nodes(d, rep)
                self._overlaps(rep)
        self._pairing(with_rep)
        self._sites(with_rep)
        self._gather(with_rep)
        for scheme in self.spec.schemes.values():
            model = self.spec.models.get(scheme.model)
            if model is not None:
                for d in with_rep:
                    rep = self.spec.replicas.get(d.replica)
                    if rep is not None:
                        self._divides(model, rep, d)
                        self._virtual(model, rep)
                        self._operations(model, rep, d)
                        self._experts(model, rep, d)

    def degrees(self, rep: M.Replica) -> dict[str, int | None]:
        """Each degree as a whole number; None where it is not one of at least 1 (CT301 or CT305 at its field)."""
        out = {k: _int(getattr(rep, k), self.env) for k in DEGREES}
        return {k: (v if v is not None and v >= 1 else None) for k, v in out.items()}

    def _overlaps(self, rep: M.Replica) -> None:
        """tp_comm_overlap pipelines the all-gather and reduce-scatter of sequence parallelism (CT450)."""
        if rep.tp_comm_overlap and not rep.sequence_parallel and ("tp_comm_overlap", rep.name) not in self._said:
            self._said.add(("tp_comm_overlap", rep.name))
            self.sink.error(
                "CT450",
                f"replica '{rep.name}' overlaps its tensor-parallel communication without sequence parallelism",
                rep.spans.get("tp_comm_overlap", rep.span),
                label="needs sequence_parallel = true",
                help="set sequence_parallel = true (Megatron's --tp-comm-overlap requires it), or remove tp_comm_overlap",
            )

    def _nodes(self, d: M.DataCentre, rep: M.Replica) -> None:
        deg = self.degrees(rep)
        per_node = _int(rep.gpus_per_node, self.env, 8)
        if None in deg.values() or not per_node:
            return
        gpus = deg["tp"] * deg["pp"] * deg["cp"]
        if gpus % per_node and per_node % gpus:
            self.sink.error(
                "CT419",
                f"replica '{rep.name}' has {gpus} GPUs (tp x pp x cp), which neither fill whole nodes of {per_node} GPUs nor divide one",
                rep.spans.get("gpus_per_node", rep.span),
                label=f"{per_node} GPUs per node",
                secondary=(Label(d.spans.get("replica", d.span), f"dc '{d.name}' holds it"),),
                help="make tp x pp x cp a multiple or a divisor of gpus_per_node",
            )
            return
        replicas = _int(d.replicas, self.env, 0) or 0
        if gpus < per_node and (replicas * gpus) % per_node:
            self.sink.error(
                "CT419",
                f"dc '{d.name}': {replicas} replicas of {gpus} GPUs do not fill whole nodes of {per_node}",
                d.spans.get("replicas", d.span),
                help=f"make replicas a multiple of {per_node // gpus}",
            )

    def _divides(self, model: M.Model, rep: M.Replica, d: M.DataCentre) -> None:
        shape = dict(model.shape or {})
        deg = self.degrees(rep)
        for key, degree, words in _DIVIDES:
            size = _int(shape.get(key), self.env, 0) if key in shape else None
            k = deg.get(degree)
            if key == "layers" and size and k and (rep.first_stage_layers or rep.last_stage_layers):
                if self._uneven(model, rep, size, k):
                    return
                continue
            if not size or not k or size % k == 0:
                continue
            if key == "kv_heads" and k % size == 0:  # fewer KV heads than tp ranks: each is replicated
                continue
            self.sink.error(
                "CT418",
                f"replica '{rep.name}' splits the {size} {words} of model '{model.name}' {k} ways ({degree} = {k}), which does not divide them",
                rep.spans.get(degree, rep.span),
                label=f"{degree} = {k}",
                secondary=(Label(model.spans.get(key, model.span), f"{size} {words}"),),
                help=f"choose {degree} among the divisors of {size}",
            )
            return

    def _operations(self, model: M.Model, rep: M.Replica, d: M.DataCentre) -> None:
        """What `compute = operations` and an FP8 precision read (CT441); the fields it alone reads (CT442)."""
        dev = self.spec.devices.get(d.device)
        unread = [k for k in OPERATIONS_FIELDS if k in rep.spans]
        if str(rep.compute) != "operations" and unread:
            self.sink.error(
                "CT442", f"replica '{rep.name}': {unread[0]} is read only with compute = operations; with compute = block it changes nothing",
                rep.spans[unread[0]], help="add compute = operations, or remove it",
            )
        elif not PL.is_moe(model) and (moe := [k for k in MOE_EXECUTION if k in rep.spans]):
            self.sink.error(
                "CT442", f"replica '{rep.name}': {moe[0]} applies to a MoE model's experts, and model '{model.name}' has none",
                rep.spans[moe[0]], help="remove it, or give the model experts, experts_per_token and expert_mlp",
            )
        if str(rep.compute) != "operations":
            return
        fp8 = [k for k in ("gemm_precision", "attention_precision") if str(getattr(rep, k)) == "fp8"]
        if dev is not None and fp8 and dev.peak_fp8 is None:
            self._ct441(rep, fp8[0], f"{fp8[0]} = fp8 is timed at the device's peak_fp8, which device '{dev.name}' does not give", f"give device '{dev.name}' a peak_fp8, or use bf16")
        if not (PL.full_shape(model) and PL.has(model, "seq")):
            self._ct441(rep, "compute", f"compute = operations times each operation of a layer from its shape, and model '{model.name}' gives no full shape with seq", "give the model its shape (layers, width, heads, kv_heads, mlp, vocab) and seq, or use compute = block")
        elif dev is not None and dev.mem_bw is None:
            self._ct441(rep, "compute", f"compute = operations times the memory-bound operations at the device's mem_bw, which device '{dev.name}' does not give", f"give device '{dev.name}' a mem_bw, or use compute = block")
        if dev is not None and dev.sms is not None and (dev.tile_m is None or dev.tile_n is None):
            self._ct441(rep, "compute", f"compute = operations quantises each GEMM into waves of device '{dev.name}''s sms tiles, and the device gives no tile_m and tile_n", f"give device '{dev.name}' tile_m and tile_n (its GEMM kernels' output tile), or no sms")

    def _ct441(self, rep: M.Replica, key: str, message: str, help: str) -> None:
        self.sink.error("CT441", f"replica '{rep.name}': {message}", rep.spans.get(key, rep.span), help=help)

    def _virtual(self, model: M.Model, rep: M.Replica) -> None:
        """Interleaving: v model chunks a pipeline rank, each of whole layers (CT440). A stage
        of L layers splits into v chunks of L / v (Megatron's `get_num_layers_to_build`); an
        uneven end stage, as Llama 3 ran them (arXiv:2407.21783 section 3.3.2: one layer less
        on the first and on the last stage, "the first model chunk on the first stage has only
        the embedding, and the last model chunk on the last stage has only output projection
        and loss calculation"), holds v - 1 chunks of the other stages' size and one of what is
        left, 0 to that size: a chunk of no layer holds the embedding (first stage) or the LM
        head (last stage), as Megatron-Core's --account-for-embedding-in-pipeline-split and
        --account-for-loss-in-pipeline-split count them. Otherwise a chunk would hold a
        fraction of a layer and the bubble (pp - 1) / v would shrink below what any schedule
        reaches."""
        if rep.virtual_stages is None or not model.shape or "layers" not in model.shape:
            return
        v = _int(rep.virtual_stages, self.env)
        pp = self.degrees(rep).get("pp")
        layers = _int(model.shape["layers"], self.env, 0)
        if not v or v <= 1 or not pp or not layers:
            return
        first = _int(rep.first_stage_layers, self.env, 0) if rep.first_stage_layers else None
        last = _int(rep.last_stage_layers, self.env, 0) if rep.last_stage_layers else None
        ends = [x for x in (first, last) if x is not None]
        middle = pp - len(ends)
        if middle <= 0 or (layers - sum(ends)) % middle:
            return  # CT418 says the stages do not split
        other = (layers - sum(ends)) // middle
        if other % v:
            return self._ct440(model, rep, v, f"the {other} layers of each of its {'other ' if ends else ''}stages", f"choose virtual_stages among the divisors of {other}")
        chunk = other // v
        for what, n in (("first", first), ("last", last)):
            if n is not None and not 0 <= n - (v - 1) * chunk <= chunk:
                return self._ct440(
                    model, rep, v, f"the {n} layers of its {what} stage as {v - 1} chunk{'s' * (v > 2)} of {chunk} and one of 0 to {chunk}",
                    f"give the {what} stage {(v - 1) * chunk} to {v * chunk} layers, or fewer virtual stages",
                )

    def _ct440(self, model: M.Model, rep: M.Replica, v: int, what: str, help: str) -> None:
        self.sink.error(
            "CT440",
            f"replica '{rep.name}': {v} virtual stages cannot hold {what} (model '{model.name}'): every model chunk holds whole layers",
            rep.spans.get("virtual_stages", rep.span),
            label=f"virtual_stages = {v}",
            secondary=(Label(model.spans.get("layers", model.span), "its layers"),),
            help=help,
        )

    def _uneven(self, model: M.Model, rep: M.Replica, layers: int, pp: int) -> bool:
        """Uneven stages: the first and last as given, the pp - 2 others alike (CT418 if they cannot be)."""
        first = _int(rep.first_stage_layers, self.env, 0) if rep.first_stage_layers else None
        last = _int(rep.last_stage_layers, self.env, 0) if rep.last_stage_layers else None
        ends = [x for x in (first, last) if x is not None]
        middle_stages = pp - len(ends)
        rest = layers - sum(ends)
        if middle_stages > 0 and rest > 0 and rest % middle_stages == 0:
            return False
        key = "first_stage_layers" if first is not None else "last_stage_layers"
        self.sink.error(
            "CT418",
            f"replica '{rep.name}': the {layers} layers of model '{model.name}' less {sum(ends)} in the end stages "
            f"do not split evenly over the other {middle_stages} of its {pp} stages",
            rep.spans.get(key, rep.span),
            secondary=(Label(model.spans.get("layers", model.span), f"{layers} layers"),),
            help="choose end-stage layers that leave a multiple of the other stages",
        )
        return True

    def _experts(self, model: M.Model, rep: M.Replica, d: M.DataCentre) -> None:
        """ep folds into the tp x cp x R GPUs of a dc's stage: it must divide them (CT418)."""
        if not model.shape or "experts" not in model.shape:
            return
        deg = self.degrees(rep)
        replicas = _int(d.replicas, self.env, 0) or 0
        if None in deg.values() or not replicas:
            return
        across = deg["tp"] * deg["cp"] * replicas
        if across % deg["ep"]:
            self.sink.error(
                "CT418",
                f"replica '{rep.name}': ep = {deg['ep']} does not divide the {across} GPUs of one stage in dc '{d.name}' "
                f"(tp x cp x replicas), over which the experts of model '{model.name}' are spread",
                rep.spans.get("ep", rep.span),
                label=f"ep = {deg['ep']}",
                secondary=(Label(d.spans.get("replicas", d.span), f"{replicas} replicas"),),
                help="choose ep among the divisors of tp x cp x replicas",
            )

    def _pairing(self, dcs: list[M.DataCentre]) -> None:
        first = dcs[0]
        rep0 = self.spec.replicas.get(first.replica)
        if rep0 is None:
            return
        want = self.degrees(rep0)
        for d in dcs[1:]:
            rep = self.spec.replicas.get(d.replica)
            if rep is None:
                continue
            got = self.degrees(rep)
            if got != want:
                diff = ", ".join(f"{k} {want[k]} against {got[k]}" for k in DEGREES if want[k] != got[k])
                self.sink.error(
                    "CT421",
                    f"dcs '{first.name}' and '{d.name}' shard the model differently ({diff}): their GPUs cannot pair their shards",
                    d.spans.get("replica", d.span),
                    secondary=(Label(first.spans.get("replica", first.span), f"dc '{first.name}'"),),
                    help="the data-parallel sync pairs GPU j of every replica: give every dc the same tp, pp, cp and ep",
                )
                return

    def _sites(self, dcs: list[M.DataCentre]) -> None:
        """A dc of several sites: a ring WAN joins them (CT412), and the ring has two sites or more (CT422)."""
        rings = {w.a: w for w in self.spec.wans if w.a == w.b}
        for d in dcs:
            if d.sites is None:
                continue
            try:
                values = [(when, E.evaluate(d.sites, env)) for when, env in points(d.sites, self.spec.params)]
            except E.EvalError:
                continue  # reported with the field (CT306)
            if any(v <= 0 or v != round(v) for _, v in values):
                continue  # not a count: reported with the field (CT301, CT305)
            span = d.spans.get("sites", d.span)
            ring = rings.get(d.name)
            if ring is not None:
                bound = B.BOUNDS["ring_sites"]
                low = next(((when, v) for when, v in values if not bound.ok(v)), None)
                if low is not None:
                    self.sink.error(
                        bound.code,
                        bound.message.format(owner=d.name, words=bound.words, value=f"{low[1]:g}", when=low[0]),
                        span,
                        label=f"{low[1]:g} site" + ("s" if low[1] != 1 else ""),
                        secondary=(Label(ring.span, "the ring of its sites"),),
                        help=B.bound_help("ring_sites", "sites", None),
                    )
                elif E.symbols(d.sites):  # the page tests other values of its params against it
                    self.spec.bounds.append(M.CheckedBound(d.name, "ring_sites", d.sites, U.ONE, span, B.bound_help("ring_sites", "sites", None), -1))
            elif E.symbols(d.sites) or any(v != 1 for _, v in values):
                self.sink.error(
                    "CT412",
                    f"the sites of dc '{d.name}' cannot reach each other: no WAN joins a site to the next",
                    span,
                    label="several sites",
                    help=f"add wan {d.name} <-> {d.name} = LINK: each site to the next, in a ring",
                )

    def _gather(self, dcs: list[M.DataCentre]) -> None:
        """CT426: hier_allgather into a dc of several sites from a dc with other GPUs a site."""
        gather = next((s for s in self.spec.schemes.values() if s.collective == "hier_allgather"), None)
        if gather is None or len(dcs) < 2 or len(dcs) != len(self.spec.dcs):
            return
        for i, d in enumerate(dcs):
            before = dcs[i - 1]
            if not several_sites(d) or d.replica not in self.spec.replicas or before.replica not in self.spec.replicas:
                continue
            mine, theirs = (replica_counts(self.spec, x.name, site=True)[0] for x in (d, before))
            if _same_count(mine, theirs):
                continue
            mine, theirs = count_text(mine, self.env), count_text(theirs, self.env)
            self.sink.error(
                "CT426",
                f"scheme '{gather.name}' gathers (hier_allgather) from dc '{before.name}' ({theirs} GPUs a site) into the first "
                f"site of dc '{d.name}' ({mine} GPUs a site): that site would receive what its other sites do not, which is not modelled",
                d.spans.get("sites", d.span),
                label="several sites",
                secondary=(Label(gather.spans.get("collective", gather.span), "hier_allgather"),),
                help=f"give dcs '{before.name}' and '{d.name}' the same replicas, or use hier_allreduce, whose sites all send and receive alike",
            )
            return
