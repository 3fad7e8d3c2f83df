"""What a scheme syncs, when, and how much of each sync the step waits for.

A scheme has one or two syncs:

- with `inner = none` (the default), its collective over all the replicas (workers),
  every H steps (`period`); H = 1 is plain data parallelism;
- with `inner = dc` and H > 1 (DiLoCo whose workers are the dcs), an **inner sync**
  every step: the dense gradient reduce-scattered and the parameters all-gathered
  inside each dc (the replicas of a dc are one data-parallel group, Megatron's
  distributed optimizer); and an **outer sync** every H steps: each GPU's 1/n slice
  of its shard's outer gradient (the scheme's payload) across the dcs (an all-reduce
  of the slices for hier_allreduce, an exchange for hier_allgather), then the
  updated parameter slices all-gathered inside the dc.

A sync is exposed in full after the step's compute unless the scheme says otherwise
(parallelism.md sections 7, 9 and 11; Douillard's DiLoCo bandwidth simulator makes
the same assumptions: buckets released uniformly over the backward pass, one FIFO
link, a deadline):

- `overlap = backward`: the GPU's dense gradient shard is cut into
  B = ceil(shard / bucket) buckets, released one by one as the backward pass of the
  step's last micro-batch (length w) computes them, at w / B, 2 w / B, ..., w, and
  sent first in, first out, each taking tau (the collective's time for 1/B of the
  payload, latencies included). The last bucket finishes
  max(B tau + Q_B - w (B - 1) / B, tau + Q_1) after the backward pass ends (the
  larger of: the link busy from the first release on, and the last bucket alone),
  where Q_B is what the B buckets wait on loaded links as one burst sent back to
  back and Q_1 what one bucket waits alone (burst.py; zero with no load).
- `delay = tau_d` inner steps (Streaming DiLoCo's overlap; 1 is a one-step delayed
  update): the sync may run on while training goes on, so the step waits only for
  what outlasts tau_d x the step it runs beside (the inner step: compute and
  model-parallel traffic, and with `inner = dc` the inner sync's part of it too).
- `fragments = F` (Streaming DiLoCo): the model is synced in F fragments, each every
  H steps on its own schedule, one fragment sync every H / F steps; each fragment is
  1/F of the payload.

So a sync of one fragment exposes max(0, max(B tau - w (B - 1)/B, tau) - tau_d T)
(with B = 1 and w = 0 without backward overlap), and the step pays F / H of it. With a
delay the syncs could also outrun the link: F syncs of B tau each every H steps need
F B tau / H of every step, so the step pays at least F B tau / H - T (the steady state
of a link that is always busy). A
sync with none of these options is shown phase by phase, each phase / H, as before;
with `overlap = true` the whole sync runs alongside the next H steps of compute,
max(compute, sync / H) (costs.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ctdsl import units as U
from ctdsl.language.enums import Collective, InnerSync, Readiness
from ctdsl.model.entities import Model, Scheme
from ctdsl.symbolic import burst as BU
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import fragments as FR
from ctdsl.symbolic import readiness as RD
from ctdsl.symbolic.convert import value
from ctdsl.symbolic import overlaps as OV
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.groups import GroupPlan, shards
from ctdsl.symbolic.routing import Phase
from ctdsl.symbolic.traffic import positive

SYNC, INNER, OUTER = "sync", "inner sync", "outer sync"  # the names of a scheme's syncs
GATHERS = ("all-gather in each dc", "all-gather of the parameters in each dc")  # the parameter all-gather's phases


@dataclass(frozen=True)
class Sync:
    """One sync of the whole payload and what a step pays for it."""

    name: str  # SYNC, INNER or OUTER: what the sync's exposed part is called
    phases: tuple[Phase, ...]  # the whole sync, all its fragments
    every: DimExpr  # steps per sync: 1 (inner), or H
    exposed: DimExpr | None  # time exposed per step; None: plain, each phase / every
    buckets: DimExpr  # B
    bucket_time: DimExpr | None  # tau: one bucket of one fragment
    fragments: DimExpr  # F
    slack: DimExpr  # tau_d x the inner step
    window: DimExpr  # w: the backward pass it overlaps (0 s: none)
    bucket: tuple[Phase, ...] = ()  # the phases of one bucket of one fragment (an exposed sync's; tau is their time)
    early: tuple[DimExpr, ...] = ()  # ready = layer: how long before the step's end each fragment is ready (readiness.py)
    gather: DimExpr | None = None  # the forward pass the parameter all-gather hid in (overlap_param_gather); None: not overlapped

    @property
    def time(self) -> DimExpr:
        """The whole sync, every fragment and bucket at once."""
        return _sum(self.phases)


def _sum(phases) -> DimExpr:
    return D.total([ph.time for ph in phases], U.TIME)


def _may_queue(F: DimExpr, delay: DimExpr, every: DimExpr) -> bool:
    """Whether a sync may still run when the next one starts: F delay > every at the defaults (or
    a param could make it so: any of them given by one)."""
    x = F * delay - every
    if x.free_symbols:
        return True
    return bool(x.e > 0)


def exposed_time(
    tau: DimExpr, buckets: DimExpr, window: DimExpr, slack: DimExpr, labels: dict | None = None, queued: tuple[DimExpr, DimExpr] | None = None
) -> DimExpr:  # fmt: skip
    """Exposed time of one sync of B buckets of tau each, released over a window w, with a slack;
    `labels` gets what each argument of a max means (the break-even table's "what binds");
    `queued`: (the B buckets' summed waits on loaded links as one burst, one bucket's alone), burst.py."""
    labels = {} if labels is None else labels
    q_all, q_one = queued if queued is not None else (D.zero(U.TIME), D.zero(U.TIME))
    if window == 0 or D.is_one(buckets):
        out = positive(tau + q_all - slack)
        labels.setdefault((tau + q_all - slack).e, "the sync beyond its slack")
        return out
    busy, last = buckets * tau + q_all - window * (buckets - 1) / buckets, tau + q_one
    labels.setdefault(busy.e, "the link, busy from the first bucket on,")
    labels.setdefault(last.e, "the last bucket alone")
    out = D.emax(busy, last)
    return out if slack == 0 else positive(out - slack)


@dataclass(frozen=True)
class SyncPlan:
    """The collectives of one scheme in one context: what each of its syncs sends, for a scale of the payload."""

    ctx: Context
    scheme: Scheme
    model: Model
    payload: DimExpr
    up: DimExpr
    dense: DimExpr

    @property
    def zero3(self) -> bool:
        return C.zero_stage(self.ctx) == 3 if self.ctx.spec.has_replicas else False

    # ---- phases -----------------------------------------------------------------------

    def collective(self, scale=1) -> list[Phase]:
        """The scheme's collective over every replica (worker), for `scale` of the payload."""
        ctx, s = self.ctx, self.scheme
        payload, up = self.payload * scale, self.up * scale
        if not ctx.spec.has_replicas:
            return ctx.router.plan(s.collective, payload, up, s.loopback)
        plan = GroupPlan(ctx)
        zero3 = self.zero3
        out = []
        for sh in shards(ctx, self.model, payload, up, C.shard(ctx, self.model)):
            phases = plan.plan(s.collective, sh, s.loopback)
            if zero3 and s.collective == Collective.HIER_ALLREDUCE:  # parameters stay sharded: no all-gather
                phases = [ph for ph in phases if not ph.name.startswith("all-gather in each dc")]
            out.extend(phases)
        return out

    def inner_phases(self, scale=1) -> list[Phase]:
        """inner = dc, every step: the dense gradient reduce-scattered in each dc, the parameters
        all-gathered (not under ZeRO-3, whose gathers are the timeline's)."""
        ctx = self.ctx
        plan = GroupPlan(ctx)
        zero3 = self.zero3
        out = []
        for sh in shards(ctx, self.model, self.dense * scale, self.dense * scale, C.shard(ctx, self.model)):
            tag = f" ({sh.name})" if sh.name else ""
            n, s = sh.members, sh.payload
            out.append(plan.in_dc("reduce-scatter of the gradients in each dc" + tag, n, lambda d, s=s, n=n: s / n[d], sh.scale, sh.per_node))
            if not zero3:
                out.append(plan.in_dc("all-gather of the parameters in each dc" + tag, n, lambda d, s=s, n=n: s / n[d], sh.scale, sh.per_node))
        return [p for p in out if p is not None]

    def outer_phases(self, scale=1) -> list[Phase]:
        """inner = dc, every H steps: each GPU's slice of the outer gradient across the dcs, then the
        updated parameter slices all-gathered in each dc."""
        ctx, s = self.ctx, self.scheme
        plan = GroupPlan(ctx)
        K = plan.K  # the sites of the ring (groups.py)
        fraction = C.shard(ctx, self.model)
        out = []
        pays = shards(ctx, self.model, self.payload * scale, self.up * scale, fraction)
        params = shards(ctx, self.model, self.dense * scale, self.dense * scale, fraction)
        for sh, par in zip(pays, params):
            tag = f" ({sh.name})" if sh.name else ""
            n, x, p = sh.members, sh.payload, par.payload
            if s.collective == Collective.HIER_ALLREDUCE:
                out.append(plan.across("all-reduce of each slice across dcs" + tag, 2 * (K - 1), lambda d, x=x, n=n: x / (n[d] * K), sh.scale))
            else:
                out.append(plan.across("exchange of each slice across dcs" + tag, K - 1, lambda d, x=x, n=n: x / n[d], sh.scale))
            out.append(plan.in_dc("all-gather of the updated parameters in each dc" + tag, n, lambda d, p=p, n=n: p / n[d], par.scale, par.per_node))
        return [p for p in out if p is not None]

    def own_gradients(self) -> DimExpr:
        """The gradient bytes a GPU holds (what its buckets cut): its dense shard, and a MoE model's
        experts over pp ep, not over tp pp (issue 27: 3,737 buckets for a Mixtral GPU whose own
        weights give 580)."""
        if not self.ctx.spec.has_replicas:
            return self.dense
        parts = shards(self.ctx, self.model, self.dense, self.dense, C.shard(self.ctx, self.model))
        return D.total([sh.payload for sh in parts], U.DATA)

    def gather_time(self) -> DimExpr | None:
        """ZeRO-3: one all-gather of a GPU's parameter shard among its dc's data-parallel ranks."""
        if not self.zero3:
            return None
        ctx = self.ctx
        plan = GroupPlan(ctx)
        phases = []
        for sh in shards(ctx, self.model, self.dense, self.dense, C.shard(ctx, self.model)):
            n, s = sh.members, sh.payload
            phases.append(plan.in_dc("parameter all-gather" + (f" ({sh.name})" if sh.name else ""), n, lambda d, s=s, n=n: s / n[d], sh.scale, sh.per_node))
        return _sum([p for p in phases if p is not None])

    # ---- syncs ------------------------------------------------------------------------

    def syncs(self, window: DimExpr, inner_step: DimExpr, labels: dict, forward: DimExpr | None = None) -> tuple[Sync, ...]:
        """The scheme's syncs; `window` the backward pass of the last micro-batch, `inner_step` the
        step's compute and model-parallel traffic (what a delay is counted in); `labels` gets what
        the arguments of each max mean; `forward` the first micro-batch's forward pass (what the
        parameter all-gather hides in with overlap_param_gather, overlaps.py)."""
        ctx, s = self.ctx, self.scheme
        forward = forward if s.overlap_param_gather else None
        period = ctx.field(s, "period")
        F = FR.count(ctx, s, self.model)
        delay = ctx.field(s, "delay") if s.delay is not None else D.zero(U.ONE)
        backward = window if s.backward else D.zero(U.TIME)
        if s.inner is InnerSync.DC:
            inner = self._sync(INNER, self.inner_phases, D.one(), D.one(), backward, inner_step, labels, forward=forward)
            # the outer sync's steps are inner steps that wait for the inner sync too: what a delay is counted in
            step = inner_step + (inner.exposed if inner.exposed is not None else _sum(inner.phases))
            outer = self._sync(OUTER, self.outer_phases, period, F, D.zero(U.TIME), step, labels, delay, window)
            return (inner, outer)
        return (self._sync(SYNC, self.collective, period, F, backward, inner_step, labels, delay, window, forward),)

    def _sync(
        self, name: str, phases_of: Callable[..., list[Phase]], every: DimExpr, F: DimExpr, window: DimExpr, step: DimExpr,
        labels: dict, delay: DimExpr | None = None, backward: DimExpr | None = None, forward: DimExpr | None = None,
    ) -> Sync:  # fmt: skip
        """One sync every `every` steps of length `step` (without this sync), run on through `delay` of
        them; `backward` the backward pass a fragment ready per layer hides in (readiness.py)."""
        slack = delay * step if delay is not None else D.zero(U.TIME)
        phases = tuple(phases_of())
        plain = window == 0 and slack == 0 and D.is_one(F)
        gathers = [ph for ph in phases if ph.name.startswith(GATHERS)] if forward is not None and slack == 0 and D.is_one(F) else []
        if plain and not gathers:
            return Sync(name, phases, every, None, D.one(), None, F, slack, window)
        B = D.one()
        if window != 0:
            B = self._buckets(F)
        if gathers:  # the parameter all-gather beside the next forward pass, the rest as without it (overlaps.py)
            rest = lambda scale=1: [ph for ph in phases_of(scale) if not ph.name.startswith(GATHERS)]  # noqa: E731
            one = tuple(rest(1 / B))
            tau, queued = self._burst(one, B)
            grads = exposed_time(tau, B, window, slack, labels, queued) if window != 0 else tau + queued[0]
            tau = tau + queued[1]
            t_ag = _sum(gathers)
            exposed = (grads + OV.param_gather(t_ag, self._buckets(F), forward)) / every
            return Sync(name, phases, every, exposed, B, tau, F, slack, window, one, gather=forward)
        one = tuple(phases_of(1 / (F * B)))
        tau, queued = self._burst(one, B)
        layered = self._layered(F, backward)
        early: tuple[DimExpr, ...] = ()
        if layered is not None:
            exposed = RD.exposed(exposed_time(tau, B, window, slack, labels, queued), backward, *layered, every)
            early = tuple(RD.hidden(backward, *layered))
        else:
            exposed = exposed_time(tau, B, window, slack, labels, queued) * F / every
        if slack != 0 and _may_queue(F, delay, every):
            # the link must also keep up: F syncs of B tau each (and their waits) per `every` steps cannot
            # be faster than the link carries them, so a step is at least F (B tau + Q) / every (steady
            # state); only where a sync may still run when the next starts (F delay > every)
            keep_up = F * (B * tau + queued[0]) / every - step
            labels.setdefault(keep_up.e, "the link carrying every sync (they queue)")
            exposed = D.emax(exposed, keep_up)
        return Sync(name, phases, every, exposed, B, tau + queued[1], F, slack, window, one, early)

    def _burst(self, one: tuple[Phase, ...], B: DimExpr) -> tuple[DimExpr, tuple[DimExpr, DimExpr]]:
        """One bucket's phases without waits (tau), and the waits on loaded links of the B buckets
        sent back to back as one burst and of one bucket alone (burst.py)."""
        tau = D.total([ph.steps * ph.free_step_time for ph in one], U.TIME)
        edges = self.ctx.edges
        return tau, (BU.wait(one, edges, B), BU.wait(one, edges))

    def _buckets(self, F: DimExpr) -> DimExpr:
        """B per fragment: ceil(the GPU's own gradients / (F bucket)), or with `bucket = layer` one a
        layer the GPU holds, ceil(L tp shard / F) (L / pp with even stages, the largest stage's
        layers with uneven ones)."""
        ctx, s = self.ctx, self.scheme
        if s.bucket_per_layer:
            tp = ctx.q(ctx.spec.replica.tp, U.ONE) if ctx.spec.has_replicas else D.one()
            return D.ceiling(ctx.shape(self.model, "layers") * tp * C.shard(ctx, self.model) / F)
        return D.ceiling(self.own_gradients() / (F * ctx.field(s, "bucket")))

    def _layered(self, F: DimExpr, backward: DimExpr | None):
        """(L, F, order) where the scheme's fragments are ready per layer (`ready = layer`, several
        fragments, a backward pass to hide in), at the params' defaults; None otherwise."""
        s = self.scheme
        if s.ready is not Readiness.LAYER or backward is None or backward == 0 or D.is_one(F):
            return None
        env = self.ctx.symbols.defaults()
        L = int(round(value(self.ctx.shape(self.model, "layers").e, env)))
        return L, int(round(value(F.e, env))), s.fragment_order


__all__ = ["Sync", "SyncPlan", "exposed_time", "SYNC", "INNER", "OUTER"]
