"""One generic evaluator: a scheme's costs at the params' defaults, into the frozen result tree.

`scheme_result` walks the scheme's ledger term by term (`term_results`: each term's value
and share of the step, how it is charged, where, and how far to trust it), takes the
binding component by the one rule (`language.components.binding`), and evaluates the
records the rest of the costing made (bytes, phases, syncs, timeline, module, roofline,
energy, money). Every quantity takes its dimension from its cost expression
(`DimExpr`), never from the code that prints it; nothing here derives a cost.
"""

from __future__ import annotations

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import Charge
from ctdsl.language.components import binding as binding_of
from ctdsl.model import payload as PL
from ctdsl.model.entities import Model
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.quantity import Quantity
from ctdsl.results.scheme import (
    BreakPoint,
    ClosedFormNote,
    JobResult,
    LinkUse,
    LoadedLink,
    ModuleResult,
    PhaseQueueing,
    PhaseResult,
    QueueWait,
    RooflineResult,
    SchemeResult,
    StageResult,
    TermResult,
)
from ctdsl.results.solution import MemoryResult, ModelResult
from ctdsl.results.timeline import DcTimeline, SyncResult, TimelineResult, TrafficResult
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.convert import Env, NumericError, value
from ctdsl.symbolic.costs import SchemeCost
from ctdsl.symbolic.counts import job_size
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.exposure import Sync
from ctdsl.symbolic.fit import Fit
from ctdsl.symbolic.ledger import Ledger
from ctdsl.symbolic.money import money
from ctdsl.symbolic.routing import Edge, Phase
from ctdsl.symbolic.targets import mfu, utilisation
from ctdsl.symbolic.timeline import Timeline
from ctdsl.symbolic.transform import rooflines


def quantity(x: DimExpr, env: Env) -> Quantity:
    """The value of a cost term at `env`, nan where it cannot be evaluated."""
    try:
        v = value(x.e, env)
    except (NumericError, ZeroDivisionError, OverflowError):
        v = float("nan")
    return Quantity(x.e, v, x.dim)


def _maybe(x: DimExpr | None, env: Env) -> Quantity | None:
    return quantity(x, env) if x is not None else None


def term_results(ledger: Ledger, step: Quantity, env: Env) -> tuple[TermResult, ...]:
    """Each term of the ledger at `env`: its value per step and share of `step`, its charge and place."""
    out = []
    for t in ledger:
        q = quantity(t.value, env)
        cf = t.closed_form
        out.append(
            TermResult(
                t.id,
                q,
                q.value / step.value if step.value else 0.0,
                t.charge,
                t.where.place,
                t.where.names,
                quantity(t.amount, env) if t.amount is not None else None,
                t.exposure.behind if t.exposure is not None else None,
                ClosedFormNote(t.id, cf.formula, cf.status, cf.note) if cf is not None else None,
                t.source,
            )
        )
    return tuple(out)


def _link_use(ctx: Context, e: Edge, nbytes: DimExpr, env: Env) -> LinkUse:
    a = ctx.edges[e]
    return LinkUse(e[0], e[1], a.link, str(a.kind), quantity(nbytes, env), quantity(a.bandwidth, env), quantity(nbytes / a.bandwidth, env))


def _phase(ctx: Context, c: SchemeCost, ph: Phase, env: Env, every_step: bool = False) -> PhaseResult:
    links = []
    best, best_t = "", -1.0
    for e, load in ph.loads.items():
        lu = _link_use(ctx, e, load, env)
        links.append(lu)
        if lu.time.value > best_t:
            best, best_t = f"{lu.link} {e[0]} -> {e[1]}", lu.time.value
    queueing = None
    if ph.waits:
        waits = []
        for (a, b), w in ph.waits.items():
            q = c.queues[(a, b)].queue
            waits.append(QueueWait(a, b, q.link, value(q.rho, env), quantity(q.transfer, env), quantity(q.service, env), quantity(w, env), str(q.sharing)))
        queueing = PhaseQueueing(quantity(ph.queueing, env), tuple(waits))
    return PhaseResult(
        ph.name,
        _steps(ph.steps, env),
        len(ph.transfers),
        quantity(ph.time, env),
        quantity(ph.step_time, env),
        quantity(ph.latency, env),
        tuple(links),
        best,
        queueing,
        every_step,
    )


def _steps(steps, env: Env) -> int | float:
    """A phase's steps at `env`: a whole number (a count of replicas may set it), or nan."""
    if isinstance(steps, int):
        return steps
    try:
        v = value(steps.e, env)
    except (NumericError, ZeroDivisionError, OverflowError):
        return float("nan")
    return int(round(v)) if abs(v - round(v)) < 1e-9 * max(1.0, abs(v)) else v


def _loaded(c: SchemeCost, step: float, env: Env) -> tuple[LoadedLink, ...]:
    out = []
    for (a, b), le in c.queues.items():
        try:
            rho, busy = value(le.queue.rho, env), value(le.busy, env)
        except (ArithmeticError, ValueError):
            continue
        out.append(LoadedLink(le.queue.link, a, b, rho, busy, Q.long_run_bound(rho, busy, step)))
    return tuple(out)


def scheme_result(ctx: Context, c: SchemeCost, env: Env) -> SchemeResult:
    s = c.scheme
    step = quantity(c.step_time, env)
    terms = term_results(c.ledger, step, env)
    sizes = c.sizes
    payload = quantity(sizes.payload, env)
    dense = quantity(sizes.dense, env)
    at = s.at.kind if s.at.name is None else f"{s.at.kind} {s.at.name}"
    cash = money(ctx, c)
    tr = c.transform
    return SchemeResult(
        name=s.name,
        label=s.label or s.name,
        payload_kind=str(s.payload),
        collective=str(s.collective),
        at=str(at),
        period=value(c.period, env),
        dense=dense,
        payload=payload,
        up=quantity(sizes.up, env),
        wire=quantity(sizes.wire, env),
        wan=quantity(sizes.wan, env),
        ratio=dense.value / payload.value if payload.value else float("inf"),
        terms=terms,
        binding=binding_of({t.id: t.value.value for t in terms}, s.overlap),
        step_time=step,
        steps=value(c.steps, env) if c.steps is not None else None,
        steps_expr=c.steps.e if c.steps is not None else None,
        time_to_target=_maybe(c.time_to_target, env),
        energy_per_step=quantity(c.energy_per_step, env),
        energy_to_target=_maybe(c.energy_to_target, env),
        bytes_to_target=_maybe(c.bytes_to_target, env),
        class_bytes_to_target=FrozenDict({k: quantity(v, env) for k, v in c.class_bytes_to_target.items()}),
        energy_parts=FrozenDict({k: quantity(v, env) for k, v in c.energy.items()}),
        transform=quantity(tr.time, env) if tr.time != 0 else None,
        transform_at=tr.where,
        phases=tuple(_phase(ctx, c, ph, env, True) for ph in c.every_step) + tuple(_phase(ctx, c, ph, env) for ph in c.phases),
        links=tuple(_link_use(ctx, e, nbytes, env) for e, nbytes in sizes.links.items()),
        module=module_result(ctx, c, env) if tr.module is not None else None,
        overlap=s.overlap,
        loaded_links=_loaded(c, step.value, env),
        symbols=ctx.symbols,
        overhead=quantity(c.overhead, env) if c.overhead != 0 else None,
        roofline=roofline_results(ctx, c, env),
        sites=s.sites,
        cost_to_target=_maybe(cash.cost, env),
        co2e_to_target=_maybe(cash.co2e, env),
        cost_parts=FrozenDict({k: quantity(v, env) for k, v in cash.cost_parts.items()}),
        co2e_parts=FrozenDict({k: quantity(v, env) for k, v in cash.co2e_parts.items()}),
        utilisation=quantity(utilisation(c), env),
        mfu=quantity(mfu(ctx, c), env),
        inner=quantity(c.inner, env),
        timeline=timeline_result(c.timeline, env) if c.timeline is not None else None,
        syncs=tuple(sync_result(sy, env) for sy in c.syncs),
        job=job_result(ctx, env),
    )


def job_result(ctx: Context, env: Env) -> JobResult:
    """The job's size (GPUs, nodes, sites) on the sites `ctx` holds."""
    j = job_size(ctx)
    return JobResult(quantity(j.gpus, env), quantity(j.nodes, env), quantity(j.sites, env))


def timeline_result(tl: Timeline, env: Env) -> TimelineResult:
    dcs, traffic = [], []
    for dc, st in tl.dcs.items():
        comps = {k: quantity(v, env) for k, v in st.components.items()}
        dcs.append(
            DcTimeline(
                dc, quantity(st.micro, env), FrozenDict({k: quantity(v, env) for k, v in st.per_micro.items()}),
                FrozenDict(comps), quantity(D.total(list(st.components.values()), U.TIME), env), quantity(st.window, env),
            )
        )
        for t in st.traffic:
            traffic.append(
                TrafficResult(
                    dc, t.kind, t.link.link, t.link.role, quantity(t.per_micro, env), quantity(t.sent, env), quantity(t.busy, env),
                    comps.get(t.kind, quantity(t.time, env)), t.formula,
                )
            )
    first = next(iter(tl.dcs.values()))
    return TimelineResult(_num(first.pp, env), _num(first.v, env), tuple(dcs), tuple(traffic), tuple(tl.notes))


def _num(x: DimExpr, env: Env) -> float:
    try:
        return value(x.e, env)
    except (NumericError, ZeroDivisionError, OverflowError):
        return float("nan")


def sync_result(sy: Sync, env: Env) -> SyncResult:
    return SyncResult(
        sy.name, _num(sy.every, env), quantity(sy.time, env),
        _maybe(sy.exposed, env), _num(sy.buckets, env), _maybe(sy.bucket_time, env), _num(sy.fragments, env),
        quantity(sy.window, env), quantity(sy.slack, env),
    )


def roofline_results(ctx: Context, c: SchemeCost, env: Env) -> tuple[RooflineResult, ...]:
    """Both sides of the roofline of a transform on the GPU, per kind of device."""
    out = []
    for r in rooflines(ctx, c.scheme, c.sizes.dense):
        compute, time = quantity(r.compute, env), quantity(r.time, env)
        memory = _maybe(r.memory, env)
        binds = "memory" if memory is not None and memory.value > compute.value else "compute"
        out.append(
            RooflineResult(
                r.device, tuple(r.dcs), str(r.charge), compute, memory, quantity(r.intensity, env), _maybe(r.ridge, env), binds, time
            )
        )
    return tuple(out)


def module_result(ctx: Context, c: SchemeCost, env: Env) -> ModuleResult:
    m = c.transform.module
    stages = [StageResult(k, quantity(r, env), quantity(m.stream / r, env)) for k, r in m.rates.items()]
    ordered = sorted(stages, key=lambda s: (s.rate.value, list(m.rates).index(s.name)))
    binding = ordered[0].name
    runner = ordered[1].name if len(ordered) > 1 else None
    breaks: list[BreakPoint] = []
    if runner is not None:
        rb, rr = m.rates[binding].e, m.rates[runner].e
        for sym in sorted(rb.free_symbols, key=str):
            info = ctx.symbols.by_symbol.get(sym)
            if info is None:
                continue
            for sol in _solve_for(rb, rr, sym):
                try:
                    v = value(sol, env)
                except NumericError:
                    continue
                if v > 0:
                    breaks.append(BreakPoint(sym.name, sol, v, info.param.dim, runner))
    return ModuleResult(
        pluggable=m.pluggable,
        stream=quantity(m.stream, env),
        stages=tuple(stages),
        binding=binding,
        runner_up=runner,
        breaks=tuple(breaks),
        latency=quantity(m.latency, env),
        time=quantity(m.time, env),
        charged_cost=value(m.charged_cost, env),
        budget_per_byte=quantity(m.budget_per_byte, env) if m.budget is not None else None,
    )


def _solve_for(a: sp.Expr, b: sp.Expr, sym: sp.Symbol) -> list[sp.Expr]:
    """Roots of a = b in sym: directly when the equation is linear in sym (a stage
    rate is usually budget / cost against a constant), else by sympy's solve."""
    num, _ = sp.fraction(sp.together(a - b))
    try:
        poly = sp.Poly(num, sym)
    except sp.PolynomialError:
        poly = None
    if poly is not None and poly.degree() == 1:
        c1, c0 = poly.all_coeffs()
        return [-c0 / c1]
    return list(sp.solve(sp.Eq(a, b), sym))


def memory_result(f: Fit, env: Env) -> MemoryResult:
    """A `fit.Fit` at `env`."""
    return MemoryResult(
        f.model, f.dc, FrozenDict({k: quantity(v, env) for k, v in f.parts.items()}), quantity(f.total, env),
        _maybe(f.capacity, env), f.note,
    )


def model_result(ctx: Context, model: Model, env: Env) -> ModelResult:
    A = ctx.formulas
    kv = PL.kv_bytes_per_token(model, A)
    handoff = None
    if kv is not None and model.kv_tokens is not None:
        handoff = quantity(kv * ctx.field(model, "kv_tokens"), env)
    flops = quantity(PL.compute_flops(model, A), env) if model.tokens is not None else None
    return ModelResult(
        name=model.name,
        params=value(ctx.sym(model.params), env),
        dense=quantity(PL.dense_bytes(model, A), env),
        flops_per_step=flops,
        kv_per_token=quantity(kv, env) if kv is not None else None,
        kv_tokens=value(ctx.sym(model.kv_tokens), env) if model.kv_tokens is not None else None,
        kv_handoff=handoff,
    )
