"""One scheme's costs in one context: its step as a ledger of terms, and what follows from the step.

`cost(ctx, scheme)` reads top to bottom, each step a function of its own module:

1. bytes: the dense size D = v P and the payload c a worker originates (ctdsl.model.payload);
2. compute: a worker's FLOPs and compute time per dc (counts.py);
3. the training step's timeline, where the dcs hold replicas of a model with its shape
   and `seq` (timeline.py): recomputation, model-parallel traffic, bubble, optimiser;
4. the syncs (exposure.py): the collective's phases, routed over the graph (routing.py,
   groups.py), every H steps, and with `inner = dc` an inner sync every step; what a step
   waits for of a sync that overlaps the backward pass or later steps;
5. the transform (transform.py): a roofline on the GPU, a pluggable's pipelined stages,
   or a switch's ingest;
6. the stragglers' wait, when a dc sets jitter (stragglers.py);
7. the ledger (ledger.py): every component of the step as a `Term`, in the order the
   tables show them (inner step, transform, syncs, queueing, overhead, stragglers), and
   the step composed from them by the ledger's one rule: compute side + (transform +
   plain sync + overhead) / H + exposed and every-step syncs, or the max of the two sides
   with `overlap = true`;
8. what follows from the step and the syncs: bytes on every link and what the busiest
   worker sends (sync_bytes.py), the loaded links crossed, and the energy per step by
   part (energy.py); time and energy to target are steps x the step's.

Money (money.py), utilisation and targets (targets.py), break-evens (breakeven.py) and
the result tree (assemble.py) read the `SchemeCost` this returns; nothing changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import Charge, ComponentKey, Place
from ctdsl.language.enums import LinkKind, PlacementKind
from ctdsl.model import payload as PL
from ctdsl.model.entities import Scheme
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import overlaps as OV
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic import stragglers as ST
from ctdsl.symbolic import sync_bytes as SB
from ctdsl.symbolic import timeline as TL
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.energy import energy_parts
from ctdsl.symbolic.exposure import Sync, SyncPlan
from ctdsl.symbolic.ledger import ClosedForm, Exposure, Ledger, Term, Where
from ctdsl.symbolic.routing import Edge, EdgeTerms, Phase
from ctdsl.symbolic.transform import Transform, transform

K = ComponentKey

EXPOSURE_RULE = "max(0, max(B tau - w (B - 1) / B, tau) - slack) x F / every, and at least F B tau / every - step where syncs may queue"


@dataclass(frozen=True)
class Sizes:
    """Bytes of one scheme: what is synced, what goes on the wire, and on every link."""

    dense: DimExpr  # D = v P
    payload: DimExpr  # c, what a worker originates per sync
    up: DimExpr  # what a worker sends up to a switch (the dense buffer when the switch transforms it)
    wire: DimExpr  # what the busiest worker sends per sync period
    wan: DimExpr  # bytes per sync period on the busiest WAN edge
    links: Mapping[Edge, DimExpr]  # bytes per sync period on each edge
    wan_edges: tuple[Edge, ...]
    classes: Mapping[str, DimExpr]  # bytes per sync period the links of each class carry (port, intra, wan)


@dataclass(frozen=True)
class SchemeCost:
    """One scheme's costs: its ledger and the records each step of `cost` made."""

    scheme: Scheme
    ledger: Ledger
    step_time: DimExpr  # the ledger's step
    sizes: Sizes
    compute: C.Compute
    per_dc: Mapping[str, DimExpr]  # one worker's deterministic step by dc: compute, or the timeline's inner step
    timeline: TL.Timeline | None  # None: compute as one block
    syncs: tuple[Sync, ...]  # one, or with inner = dc the inner sync and the outer sync
    transform: Transform
    overhead: DimExpr  # the scheme's fixed time per sync, s
    stragglers: ST.Straggler | None
    queues: Mapping[Edge, SB.LoadedEdge]  # loaded edges the syncs cross
    energy: Mapping[str, DimExpr]  # J per step, by part
    steps: DimExpr | None  # steps to target; None: not given
    labels: Mapping[sp.Expr, str]  # a max/min argument -> what it means (the break-even's "what binds")

    @property
    def period(self) -> DimExpr:
        return self.ledger.period

    @property
    def inner(self) -> DimExpr:
        """The inner step: compute and, with the timeline, recompute, model-parallel traffic, bubble, optimiser."""
        return self.ledger.inner

    @property
    def phases(self) -> tuple[Phase, ...]:
        """The phases of the sync every H steps."""
        return self.syncs[-1].phases

    @property
    def every_step(self) -> tuple[Phase, ...]:
        """The phases of the inner sync every step (inner = dc); none otherwise."""
        return self.syncs[0].phases if len(self.syncs) > 1 else ()

    @property
    def time_to_target(self) -> DimExpr | None:
        return self.steps * self.step_time if self.steps is not None else None

    @property
    def bytes_to_target(self) -> DimExpr | None:
        """What the busiest worker sends over the run: steps / H x its bytes per sync period."""
        return self.steps * self.sizes.wire / self.period if self.steps is not None else None

    @property
    def class_bytes_to_target(self) -> dict[str, DimExpr]:
        """What the links of each class carry over the run: steps / H x their bytes per sync period."""
        return {k: self.steps * v / self.period for k, v in self.sizes.classes.items()} if self.steps is not None else {}

    @property
    def energy_per_step(self) -> DimExpr:
        return D.total(self.energy.values(), U.ENERGY)

    @property
    def energy_to_target(self) -> DimExpr | None:
        return self.steps * self.energy_per_step if self.steps is not None else None


def cost(ctx: Context, scheme: Scheme) -> SchemeCost:
    """The scheme's costs in `ctx` (the module docstring's steps, in order)."""
    model = ctx.spec.models[scheme.model]
    labels: dict[sp.Expr, str] = {}
    dense = PL.dense_bytes(model, ctx.formulas)
    payload = PL.payload_bytes(scheme, model, ctx.formulas)
    up = dense if scheme.at.kind == PlacementKind.SWITCH else payload
    plan = SyncPlan(ctx, scheme, model, payload, up, dense)
    compute = C.given(ctx, scheme, model, C.compute(ctx, model, labels), labels)
    timeline = None
    given = scheme.step is not None or model.step is not None
    if TL.applies(ctx.spec, model) and not C.measured(ctx) and not given:
        timeline = TL.build(ctx, model, compute, plan.gather_time(), labels)
    per_dc = timeline.per_dc if timeline is not None else compute.per_dc
    inner = timeline.inner if timeline is not None else compute.time
    # the window a sync hides in with overlap = backward: the last micro-batch's backward pass
    # (without the timeline, the step is one micro-batch: its backward, 2/3 of its compute)
    forward = D.emin(*[st.per_micro[K.COMPUTE] / 3 for st in timeline.dcs.values()]) if timeline is not None else compute.time / 3
    syncs = plan.syncs(timeline.window if timeline is not None else 2 * compute.time / 3, inner, labels, forward)
    for sy in syncs:
        for ph in sy.phases:
            labels.update(ph.bottlenecks)
    shard = C.shard(ctx, model)
    tr = transform(ctx, scheme, dense * shard, up * shard, labels)
    period = ctx.field(scheme, "period")
    overhead = ctx.field(scheme, "overhead")
    strag = ST.wait(ctx, scheme, per_dc)
    terms = [
        *inner_terms(compute, timeline),
        *transform_terms(tr, period),
        *sync_terms(ctx.edges, syncs),
        *queueing_terms(ctx.edges, syncs),
        *overhead_terms(overhead, syncs[-1].fragments, period),
        *straggler_terms(strag),
    ]
    ledger = Ledger(tuple(terms), period, scheme.overlap)
    step = ledger.step(labels)
    links = SB.link_bytes(syncs, period)
    wan_edges = tuple(e for e in links if ctx.edges[e].kind is LinkKind.WAN)
    sizes = Sizes(
        dense, payload, up,
        wire=SB.wire(ctx, syncs[-1].phases, syncs[0].phases if len(syncs) > 1 else (), period),
        wan=D.emax(*[links[e] for e in wan_edges]) if wan_edges else D.zero(U.DATA),
        links=links,
        wan_edges=wan_edges,
        classes=SB.by_class(ctx.edges, links),
    )  # fmt: skip
    energy = energy_parts(ctx, scheme, step, compute, dense, SB.charged_bytes(syncs, period), period, tr.where)
    if timeline is not None:
        energy["model-parallel links"] = SB.traffic_energy(ctx, timeline)
    return SchemeCost(
        scheme=scheme,
        ledger=ledger,
        step_time=step,
        sizes=sizes,
        compute=compute,
        per_dc=per_dc,
        timeline=timeline,
        syncs=syncs,
        transform=tr,
        overhead=overhead,
        stragglers=strag,
        queues=SB.loaded_edges(ctx.edges, syncs),
        energy=energy,
        steps=ctx.field(scheme, "steps") if scheme.steps is not None else None,
        labels=labels,
    )


# ---- the terms, in the order the tables show them -------------------------------------------


def inner_terms(compute: C.Compute, timeline: TL.Timeline | None) -> list[Term]:
    """The inner step: the compute as one block, or the timeline's parts (each the slowest dc's)."""
    if timeline is None:
        return [Term(K.COMPUTE, compute.time, Charge.STEP, Where(Place.GPU), source="FLOPs per step / (peak x efficiency)")]
    return [Term(k, v, Charge.STEP, Where(Place.PIPELINE), exposure=timeline.exposures.get(k), source="timeline.py") for k, v in timeline.components.items()]


def transform_terms(tr: Transform, period: DimExpr) -> list[Term]:
    """The transform, once per sync: on the GPU, in a module's stages, or at a switch."""
    if tr.time == 0:
        return []
    where = Where(tr.place, (tr.on,) if tr.on is not None else ())
    return [Term(K.TRANSFORM, tr.time / period, Charge.PERIOD, where, amount=tr.time, source="transform.py")]


def sync_terms(edges: Mapping[Edge, EdgeTerms], syncs: tuple[Sync, ...]) -> list[Term]:
    """Each sync: its exposed part, where it overlaps something, else each of its phases (the
    sync every H steps once per period, an inner sync every step). A phase that crosses a loaded
    link is charged whole (its amount) and shown without its queueing (its value)."""
    out = []
    outer = syncs[-1]
    for sy in syncs:
        if sy.exposed is not None:
            rule = EXPOSURE_RULE if sy.gather is None else f"{EXPOSURE_RULE}; the parameter all-gather {OV.GATHER_RULE}"
            exposure = Exposure(_behind(sy), sy.window, sy.slack, rule)
            out.append(Term(K.EXPOSED_SYNC, sy.exposed, Charge.STEP, Where(Place.SYNC, (sy.name,)), sy.name, exposure=exposure, source="exposure.py"))
            continue
        for ph in sy.phases:
            across = any(edges[e].kind is LinkKind.WAN for e in ph.loads)
            key = K.SYNC_ACROSS_SITES if across else K.SYNC_IN_SITE
            where = Where(Place.PHASE, tuple(dict.fromkeys(edges[e].link for e in ph.loads)))
            value = ph.steps * ph.free_step_time / sy.every if ph.waits else ph.time / sy.every
            if sy is outer:
                out.append(Term(key, value, Charge.PERIOD, where, ph.name, amount=ph.time, source="routing.py"))
            else:
                out.append(Term(key, value, Charge.STEP, where, ph.name, amount=ph.time / sy.every, source="routing.py"))
    return out


def _behind(sy: Sync) -> str:
    parts = []
    if sy.window != 0:
        parts.append("the backward pass of the last micro-batch")
    if sy.slack != 0:
        parts.append("delay x the inner step")
    if not D.is_one(sy.fragments):
        parts.append("its fragments' schedule")
    if sy.gather is not None:
        parts.append("the next step's first forward pass (the parameter all-gather)")
    return ", ".join(parts)


def queueing_terms(edges: Mapping[Edge, EdgeTerms], syncs: tuple[Sync, ...]) -> list[Term]:
    """The waits of the plain syncs' phases on loaded links (each phase's steps a burst, queueing.py),
    one term per set of links a phase waits on (charged within those phases)."""
    waits: dict[str, DimExpr] = {}
    sharing: dict[str, set] = {}
    for sy in syncs:
        if sy.exposed is not None:
            continue
        for ph in sy.phases:
            if ph.waits:
                links = ", ".join(dict.fromkeys(edges[e].link for e in ph.waits))
                waits[links] = waits.get(links, D.zero(U.TIME)) + ph.steps * ph.queueing / sy.every
                sharing.setdefault(links, set()).update(edges[e].queue.sharing for e in ph.waits)
    return [
        Term(K.QUEUEING, w, Charge.WITHIN, Where(Place.LINK, tuple(links.split(", "))), links, closed_form=ClosedForm(*Q.closed_form(sharing[links])), source="queueing.py")
        for links, w in waits.items()
    ]


def overhead_terms(overhead: DimExpr, fragments: DimExpr, period: DimExpr) -> list[Term]:
    """The scheme's fixed time per sync (one per fragment), once per period."""
    if overhead == 0:
        return []
    return [Term(K.OVERHEAD, overhead * fragments / period, Charge.PERIOD, Where(Place.SCHEME), amount=overhead * fragments, source="the scheme's overhead")]


def straggler_terms(strag: ST.Straggler | None) -> list[Term]:
    """The expected wait for the slowest worker, on the compute side."""
    if strag is None:
        return []
    closed = ClosedForm(strag.formula, strag.status, strag.note)
    return [Term(K.STRAGGLERS, strag.extra, Charge.STEP, Where(Place.BARRIER), closed_form=closed, source="stragglers.py")]


__all__ = ["SchemeCost", "Sizes", "cost", "inner_terms", "transform_terms", "sync_terms", "queueing_terms", "overhead_terms", "straggler_terms"]
