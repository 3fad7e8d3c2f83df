"""CTL014, CTL015, CTL016: serving deployments whose link, batch or SLO cannot work as written.

Each rule reads the serving definitions at the params' defaults with plain arithmetic
(lint does not import sympy): the step rooflines and the capacities of docs/serving.md,
as `ctdsl.symbolic.serving_steps` states them, for a dense model (tests/lint check them
against solve's closed forms). Where the figure here is a bound, it is the one that
cannot raise a false finding:

- a hand-off link's capacity is 1 / (latency + bytes sent / bandwidth): a module that
  streams with the transfer only adds to that time, so the link is at most this fast;
- a decode pool's capacity is the closed form's, instances x b / (T_dec(b, c) x (output -
  1)) with b = min(max_batch, floor(KV capacity / (prompt + output))) at c = prompt +
  output / 2, with its tp and pp traffic when the instance names a scale-up link;
- the least TTFT is one prefill of the mean prompt on an idle instance, whole (chunks only
  add to it), plus the hand-off on an idle link (layer by layer: its last layer's share);
  the least TPOT one decode step of a lone sequence at its shortest context.

Mixture-of-experts models are left to solve: which experts a step reads depends on its
batch, so a step time here would not be a bound either way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Severity
from ctdsl.language.enums import Counted
from ctdsl.language.serving import FP4_BITS, FP8_BITS, HandoffMode, KvPayload
from ctdsl.language.tolerances import below
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, quantity, shown_label, times
from ctdsl.model import payload as PL
from ctdsl.model import serving as MS


@dataclass(frozen=True)
class Steps:
    """An instance's step rooflines in floats (docs/serving.md, 'An instance's steps')."""

    compute_rate: float  # g peak efficiency, FLOP/s
    memory_rate: float  # g mem_bw mem_efficiency, B/s
    overhead: float
    matmul: float  # M
    streamed: float  # M v (or P v tied)
    weights: float  # P v
    row: float  # d v
    kv: float  # B per token
    layers: float
    width: float
    room: float  # g memory kv_memory
    max_batch: float
    tp: float
    pp: float
    link_bw: float | None
    link_latency: float

    def _time(self, flops: float, nbytes: float, tokens: float) -> float:
        return max(flops / self.compute_rate, nbytes / self.memory_rate) + self.overhead + self.comm(tokens)

    def comm(self, tokens: float) -> float:
        if self.link_bw is None:
            return 0.0
        act = tokens * self.row
        ring = 2 * (self.tp - 1) / self.tp * act / self.link_bw + 2 * (self.tp - 1) * self.link_latency
        return 2 * self.layers * ring + (self.pp - 1) * (self.link_latency + act / self.link_bw)

    def prefill(self, s: float) -> float:
        """One prompt of s tokens, whole."""
        flops = 2 * self.matmul * s + 2 * self.layers * self.width * s * (s + 1)
        return self._time(flops, self.streamed + s * (self.row + self.kv), s)

    def decode(self, b: float, c: float) -> float:
        """One decode step of b sequences at context c."""
        flops = 2 * self.matmul * b + 4 * self.layers * self.width * b * (c + 1)
        return self._time(flops, self.streamed + b * self.row + b * (c + 1) * self.kv, b)

    @property
    def kv_tokens(self) -> float:
        return math.floor((self.room - self.weights) / self.kv)

    def batch(self, s: float, o: float) -> float:
        """The largest decode batch of requests of s + o tokens: max_batch or what the KV cache holds."""
        return min(self.max_batch, math.floor(self.kv_tokens / (s + o)))


def steps(ctx: Context, inst: MS.Instance) -> Steps | None:
    """An instance's steps, or None where a figure is missing or the model is a mixture of experts."""
    spec = ctx.spec
    model, dev = spec.models.get(inst.model), spec.devices.get(inst.device)
    if model is None or dev is None or not PL.full_shape(model) or PL.is_moe(model):
        return None
    val = ctx.value
    sh = lambda k: val(model.shape[k])  # noqa: E731
    got = dict(
        v=val(model.bytes_per_value), P=val(model.params), d=sh("width"), V=sh("vocab"), L=sh("layers"), kv=val(PL.kv_bytes_per_token(model)),
        peak=val(dev.peak), eff=val(dev.efficiency), bw=val(dev.mem_bw), mem=val(dev.memory),
        tp=val(inst.tp), pp=val(inst.pp), mu=val(inst.mem_efficiency), oh=val(inst.overhead), km=val(inst.kv_memory), mb=val(inst.max_batch),
    )
    if any(x is None for x in got.values()) or not got["kv"]:
        return None
    g = got["tp"] * got["pp"]
    matmul = got["P"] if model.tied else got["P"] - got["V"] * got["d"]
    link = spec.links.get(inst.scaleup_link) if inst.scaleup_link else None
    link_bw = val(link.bandwidth) if link is not None else None
    return Steps(
        compute_rate=g * got["peak"] * got["eff"], memory_rate=g * got["bw"] * got["mu"], overhead=got["oh"],
        matmul=matmul, streamed=matmul * got["v"], weights=got["P"] * got["v"], row=got["d"] * got["v"], kv=got["kv"],
        layers=got["L"], width=got["d"], room=g * got["mem"] * got["km"], max_batch=got["mb"], tp=got["tp"], pp=got["pp"],
        link_bw=link_bw or None, link_latency=(val(link.latency) or 0.0) if link is not None else 0.0,
    )


def sent_bytes(ctx: Context, h: MS.Handoff, kv: float) -> float | None:
    """The bytes a hand-off sends for `kv` bytes of KV cache, as its payload says."""
    model = ctx.spec.models[ctx.spec.serving.instances[ctx.spec.serving.pools[h.source].instance].model]
    v = ctx.value(model.bytes_per_value)
    if not v:
        return None
    if h.payload is KvPayload.FP8:
        return kv * float(FP8_BITS) / 8 / v
    if h.payload is KvPayload.FP4:
        return kv * float(FP4_BITS) / 8 / v
    if h.payload is KvPayload.BAND:
        f = ctx.value(h.fraction) if h.fraction is not None else 1.0
        return None if f is None else kv * f
    return kv


def _wire(ctx: Context, h: MS.Handoff, sent: float) -> float | None:
    """The least time the hand-off holds its link or route: latency + bytes / bandwidth, a route's latency
    each segment's once (the route-counted links' alone where there are any) and its narrowest bandwidth."""
    links = [ctx.spec.links.get(n) for n in h.route]
    if None in links:
        return None
    whole = list({l.name: l for l in links if l.counted is Counted.ROUTE}.values())
    bws = [ctx.value(l.bandwidth) for l in links]
    lats = [ctx.value(l.latency) for l in (whole or links)]
    if None in lats or not all(bws):
        return None
    return sum(lats) + sent / min(bws)


def _over(h: MS.Handoff) -> str:
    return f"link '{h.link}'" if len(h.route) == 1 else "route " + " -> ".join(f"'{n}'" for n in h.route)


def _lengths(ctx: Context, w: MS.Workload) -> tuple[float, float] | None:
    s, o = ctx.value(w.prompt), ctx.value(w.output)
    return None if not s or not o else (s, o)


def decode_capacity(ctx: Context, pool: MS.Pool, s: float, o: float) -> float | None:
    """Requests/s a decode pool drains: instances x b / (T_dec(b, prompt + output / 2) x (output - 1))."""
    st = steps(ctx, ctx.spec.serving.instances[pool.instance])
    n = ctx.value(pool.instances)
    if st is None or not n:
        return None
    b = st.batch(s, o)
    if b < 1:
        return None
    return n * b / (st.decode(b, s + o / 2) * max(1.0, o - 1))


# ---- CTL014 -------------------------------------------------------------------------------


@rule(
    "CTL014",
    "slow-kv-handoff",
    Severity.WARNING,
    "A KV hand-off whose link carries fewer requests a second than the decode pool it feeds can drain.",
    bad="""
    handoff e25 { from = prefill; to = decode; link = eth25g }   # 671 MB a request: 4.66 req/s, the decode pool 28.8
    """,
    good="""
    handoff e25 { from = prefill; to = decode; link = eth25g; payload = fp4 }   # or link = ib_ndr
    """,
)
def slow_kv_handoff(ctx: Context) -> Iterator[Hit]:
    """
    A hand-off carries each request's KV cache from a prefill pool to a decode pool over
    its link. The link serves at most 1 / (latency + bytes sent / bandwidth) requests a
    second (a streaming module only adds to the time), and the decode pool drains its
    instances x b / (decode step x (output - 1)), the closed forms of docs/serving.md at
    the workload's mean lengths and the params' defaults. When the link's figure is
    below the decode pool's, the decode GPUs wait for the wire: the link, not a pool,
    sets the rate the path sustains. Compressing the hand-off (FP8, FP4 with block
    scales), a faster link or fewer decode instances balance them. Reported at the
    hand-off's link, once for each workload whose requests take it; mixture-of-experts
    models are left to `ctdsl solve`, which prints every capacity and the binding one.
    """
    sv = ctx.spec.serving
    if not sv:  # no serving blocks
        return
    for path in sv.paths:
        h = sv.handoffs.get(path.handoff) if path.handoff else None
        if h is None or not is_user(ctx, h):
            continue
        w, dpool = sv.workloads[path.workload], sv.pools[path.decode]
        lengths = _lengths(ctx, w)
        pst = steps(ctx, sv.instances[sv.pools[h.source].instance])
        if lengths is None or pst is None:
            continue
        s, o = lengths
        sent = sent_bytes(ctx, h, s * pst.kv)
        wire = _wire(ctx, h, sent) if sent is not None else None
        drain = decode_capacity(ctx, dpool, s, o)
        if not wire or drain is None:
            continue
        carry = 1 / wire
        if not below(carry, drain):
            continue
        yield Hit(
            f"hand-off '{h.name}': {_over(h)} carries at most {carry:.3g} req/s of workload '{w.name}' "
            f"({quantity(sent, U.DATA)} a request), below the {drain:.3g} req/s decode pool '{dpool.name}' drains",
            ctx.at(h, "link", "route"),
            label=f"{times(drain / carry)} slower than the decode pool",
            secondary=shown_label(ctx, ctx.at(dpool, "instances", "instance"), f"{drain:.3g} req/s"),
            notes=("the link's figure is latency + bytes / bandwidth; the decode pool's its largest batch over (output - 1) steps (docs/serving.md)",),
            help="compress the hand-off (payload = fp8, or fp4), use a faster link, or give the decode pool fewer instances",
        )


# ---- CTL015 -------------------------------------------------------------------------------


@rule(
    "CTL015",
    "batch-over-kv",
    Severity.WARNING,
    "An instance's max_batch whose KV cache does not fit its memory share: the batch can never be that large.",
    bad="""
    instance node { device = accel; model = llama70b; tp = 4; max_batch = 256 }   # 194 requests of 2,304 tokens fit
    """,
    good="""
    instance node { device = accel; model = llama70b; tp = 4; max_batch = 192 }
    """,
)
def batch_over_kv(ctx: Context) -> Iterator[Hit]:
    """
    A decode step holds at most `max_batch` sequences, and each holds the KV cache of
    its prompt and output, (prompt + output) x 2 L g d_h v bytes. When max_batch such
    requests need more than the instance's memory share leaves beside the weights
    (memory x tp x pp x kv_memory - P v), the batch stops at what fits: max_batch is
    never reached, and the decode capacity is that of the smaller batch (the closed
    forms and the simulation take min(max_batch, what fits)). Reported where max_batch
    is written, for an instance that decodes some workload's requests (a decode or a
    colocated pool), with the batch that fits at the workload's mean lengths; a
    single request that does not fit is the checker's error CT360.
    """
    sv = ctx.spec.serving
    if not sv:  # no serving blocks
        return
    seen: set[str] = set()
    for path in sv.paths:
        pool = sv.pools[path.decode or path.entry]
        inst = sv.instances[pool.instance]
        span = ctx.own_span(inst, "max_batch")
        if inst.name in seen or span is None or not is_user(ctx, inst):
            continue
        model = ctx.spec.models.get(inst.model)
        dev = ctx.spec.devices.get(inst.device)
        w = sv.workloads[path.workload]
        lengths = _lengths(ctx, w)
        vals = [ctx.value(x) for x in (model.params, model.bytes_per_value, PL.kv_bytes_per_token(model), dev.memory, inst.tp, inst.pp, inst.kv_memory, inst.max_batch)] if model and dev and PL.full_shape(model) else [None]
        if lengths is None or any(x is None for x in vals):
            continue
        p, v, kv, mem, tp, pp, km, mb = vals
        left = mem * tp * pp * km - p * v
        need = mb * sum(lengths) * kv
        if left <= 0 or not below(left, need):
            continue
        seen.add(inst.name)
        fit = math.floor(math.floor(left / kv) / sum(lengths))
        yield Hit(
            f"instance '{inst.name}': a batch of {mb:g} requests of workload '{w.name}' ({sum(lengths):,.0f} tokens each) needs "
            f"{quantity(need, U.DATA)} of KV cache, and {quantity(left, U.DATA)} is left beside the weights",
            span,
            label=f"at most {fit:,} fit",
            notes=(f"the decode batch stops at {fit:,}: the capacity and the simulation use min(max_batch, what fits)",),
            help=f"set max_batch = {fit}, or give the instance more memory (tp, pp, kv_memory, a device with more)",
        )


# ---- CTL016 -------------------------------------------------------------------------------


@rule(
    "CTL016",
    "unreachable-slo",
    Severity.WARNING,
    "An SLO target below what one request takes on idle hardware: no rate meets it, so the goodput is 0.",
    bad="""
    slo chat { ttft = 50 ms; tpot = 25 ms }   # Llama-3-70B's 2,048-token prefill on 4 x H100: 134 ms
    """,
    good="""
    slo chat { ttft = 1 s; tpot = 25 ms }
    """,
)
def unreachable_slo(ctx: Context) -> Iterator[Hit]:
    """
    With no queue at all, a request's TTFT is at least one prefill of its prompt (whole:
    chunks only add to it) plus, disaggregated, its hand-off on an idle link (layer by
    layer, the last layer's share), and its TPOT at least one decode step of a lone
    sequence at its shortest context, prompt + 1; its end-to-end latency at least TTFT +
    (output - 1) TPOT at those bounds. A target below its bound cannot be met at any
    rate, so the goodput is 0 and sweeping the rate will not find one: the target's
    unit, the hardware or the lengths are off. Reported at the target, once for each
    workload whose mean request is too slow; mixture-of-experts models are left out.
    """
    sv = ctx.spec.serving
    if not sv:  # no serving blocks
        return
    seen: set[tuple[str, str, str]] = set()
    for path in sv.paths:
        w = sv.workloads[path.workload]
        slo = sv.slos.get(w.slo) if w.slo else None
        if slo is None or not is_user(ctx, slo):
            continue
        lengths = _lengths(ctx, w)
        pst = steps(ctx, sv.instances[sv.pools[path.entry].instance])
        dst = steps(ctx, sv.instances[sv.pools[path.decode or path.entry].instance])
        if lengths is None or pst is None or dst is None:
            continue
        s, o = lengths
        ttft = pst.prefill(s)
        h = sv.handoffs.get(path.handoff) if path.handoff else None
        if h is not None:
            sent = sent_bytes(ctx, h, s * pst.kv)
            wire = _wire(ctx, h, sent) if sent is not None else None
            if wire is None:
                continue
            ttft += wire / pst.layers if h.mode is HandoffMode.LAYERWISE else wire
        tpot = dst.decode(1, s + 1)
        least = {"ttft": ttft, "tpot": tpot, "e2e": ttft + max(0.0, o - 1) * tpot}
        for key, bound in least.items():
            target = ctx.value(getattr(slo, key))
            if target is None or not below(target, bound) or (slo.name, key, w.name) in seen:
                continue
            seen.add((slo.name, key, w.name))
            what = {"ttft": "one prefill" + (" and its hand-off" if h is not None else ""), "tpot": "one decode step of a lone sequence", "e2e": "TTFT and the decode steps"}[key]
            yield Hit(
                f"slo '{slo.name}': {key} target {quantity(target, U.TIME)} is below the {quantity(bound, U.TIME)} {what} of workload "
                f"'{w.name}' takes on idle hardware",
                ctx.at(slo, key),
                label=f"{times(bound / target)} too tight",
                secondary=shown_label(ctx, ctx.at(w, "prompt"), f"{s:,.0f} tokens"),
                notes=("no rate meets it: the goodput is 0 (docs/serving.md, Goodput)",),
                help=f"a target of at least {quantity(bound, U.TIME)}, faster hardware (tp, a faster device) or shorter requests",
            )


__all__ = ["Steps", "batch_over_kv", "decode_capacity", "sent_bytes", "slow_kv_handoff", "steps", "unreachable_slo"]
