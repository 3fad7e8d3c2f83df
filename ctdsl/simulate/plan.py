"""What the simulation runs: numbers taken from the same model the solver uses.

For every scheme, `build_plans` costs it as `solve` does (`symbolic.costs.cost`, in
the context of its sites: its ledger of terms, the syncs with the router's phases,
transfers, routes and per-edge loads) and evaluates what it needs at the params'
defaults (`convert.value`), so that the simulation and the closed forms start from the
same numbers; the closed form's figures are read from the ledger by key (the step, the
queueing and straggler terms and how far to trust them), the over-subscription bound
from queueing.py:

- per dc, a worker's deterministic compute time b and its jitter (scale, kind,
  sigma);
- the transform time and the fixed overhead per sync, the sync period H, overlap;
- per phase: its number of steps, the time of one step with no queueing (the
  symbolic step time, evaluated), and for each transfer its route latency, the
  largest bytes / bandwidth over its unloaded edges and the bytes / bandwidth
  of each loaded edge it crosses (bytes of every transfer of the step that
  shares that edge);
- per loaded edge: its background utilisation rho, service time S, latency and sharing
  (fair: processor sharing; fifo: first come, first served).

`free_spec` is the same spec with every load and jitter removed: its closed
forms are what the simulation must reproduce exactly when it runs without them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ctdsl.language.components import ComponentKey
from ctdsl.language.enums import Sharing
from ctdsl.model.entities import Spec
from ctdsl.results.scheme import ClosedFormNote
from ctdsl.simulate import stepplan as SP
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic.context import Context, contexts
from ctdsl.symbolic.convert import Env, Symbols, value
from ctdsl.symbolic.costs import SchemeCost, cost
from ctdsl.symbolic.routing import Phase

Edge = tuple[str, str]


@dataclass(frozen=True)
class DcPlan:
    name: str
    workers: int
    base: float  # compute per step, s
    jitter: float  # scale, s
    kind: str | None  # exponential | uniform | lognormal
    sigma: float | None


@dataclass(frozen=True)
class TransferPlan:
    latency: float  # links and switches on the route
    unloaded: float  # max over its unloaded edges of step bytes / bandwidth
    loaded: tuple[tuple[int, float], ...]  # (index into PhasePlan.loaded, step bytes / bandwidth)


@dataclass(frozen=True)
class PhasePlan:
    name: str
    steps: int
    free_step: float  # one step with no queueing: the symbolic step time
    time: float  # the whole phase with no queueing: steps x free_step, evaluated symbolically
    loaded: tuple[Edge, ...]  # loaded edges its transfers cross
    service: tuple[float, ...]  # per loaded edge: step bytes / bandwidth
    transfers: tuple[TransferPlan, ...]  # distinct transfers that cross a loaded edge


@dataclass(frozen=True)
class QueuePlan:
    edge: Edge
    link: str
    rho: float
    service: float  # S = transfer / bandwidth
    md1_wait: float
    latency: float = 0.0  # the edge's latency: how much longer a transfer holds it with `latency = hold`
    sharing: Sharing = Sharing.FIFO  # how the link serves its flows (the spec's `sharing`; fair: fair_link.py)


@dataclass
class SchemePlan:
    name: str
    label: str
    period: float
    overlap: bool
    transform: float
    phases: list[PhasePlan]
    dcs: list[DcPlan]
    queues: dict[Edge, QueuePlan]  # loaded edges this scheme's sync crosses
    steps_to_target: float | None
    # closed forms at the defaults
    step: float  # the solver's step time, with queueing and stragglers when the spec sets them
    free_step: float  # the step time with no load and no jitter
    queueing: float  # the queueing components, per step
    stragglers: float  # the stragglers component, per step
    closed_forms: tuple[ClosedFormNote, ...] = ()  # the ledger's queueing and straggler terms, with how far to trust them
    bound: float | None = None  # long-run lower bound on the step from over-subscribed links
    costs: SchemeCost | None = field(default=None, repr=False)
    overhead: float = 0.0  # the scheme's fixed time per sync, s
    chains: tuple[SP.ChainPlan, ...] = ()  # each dc's replica chain (a timeline, or a sync simulated step by step)
    step_plan: SP.StepPlan | None = None  # set: the step is simulated step by step (steps.py), not in rounds

    @property
    def compute(self) -> float:
        return max(d.base for d in self.dcs) if self.dcs else 0.0

    @property
    def workers(self) -> int:
        return sum(d.workers for d in self.dcs)


def with_dcs(spec: Spec, change) -> Spec:
    """The spec with `change(dc)` for every dc, of the declared sites and of each variant."""
    variants = {n: dataclasses.replace(v, dcs={k: change(d) for k, d in v.dcs.items()}) for n, v in spec.variants.items()}
    return dataclasses.replace(spec, dcs={k: change(d) for k, d in spec.dcs.items()}, variants=variants)


def free_spec(spec: Spec) -> Spec:
    """The spec with no background load on any link and no jitter in any dc (of any variant)."""
    links = {k: dataclasses.replace(v, load=None, transfer=None) for k, v in spec.links.items()}
    calm = with_dcs(spec, lambda d: dataclasses.replace(d, jitter=None, jitter_kind=None, jitter_sigma=None))
    return dataclasses.replace(calm, links=links)


def loaded_edges(spec: Spec) -> list[Edge]:
    """Every directed edge whose link sets a load, on the declared sites or a variant's, in one
    fixed order (the random streams')."""
    out = set()
    for sites in (spec.sites, *spec.variants.values()):
        for e in sites.topology.edges():
            link = spec.link_of(e)
            if link is not None and link.loaded:
                out.add(e.key)
    return sorted(out)


def build_plans(spec: Spec, names: list[str] | None = None) -> dict[str, SchemePlan]:
    """Each scheme's plan, costed on the sites it runs on (the declared ones, or its variant's)."""
    symbols = Symbols(spec)
    env = Env(symbols.defaults())
    free = free_spec(spec)
    ctxs, calm = contexts(spec, symbols), contexts(free, symbols)
    plans = {}
    for name, scheme in spec.schemes.items():
        if names is not None and name not in names:
            continue
        ctx = ctxs[scheme.sites]
        plans[name] = _plan(ctx, cost(ctx, scheme), cost(calm[scheme.sites], free.schemes[name]), env)
    return plans


def _plan(ctx: Context, c: SchemeCost, free: SchemeCost, env: Env) -> SchemePlan:
    spec = ctx.spec
    s = c.scheme
    dcs = []
    for dc in spec.dcs.values():
        # one worker's compute: a device's, or a replica's over its GPUs (its share of a split batch)
        base = value(c.per_dc[dc.name], env)
        jitter = value(ctx.sym(dc.jitter), env) if dc.jitter is not None else 0.0
        sigma = value(ctx.sym(dc.jitter_sigma), env) if dc.jitter_sigma is not None else None
        dcs.append(DcPlan(dc.name, dc.workers * dc.n_sites, base, jitter, dc.jitter_kind if jitter > 0 else None, sigma))  # every site's replicas
    queues: dict[Edge, QueuePlan] = {}
    for e, le in c.queues.items():
        q = le.queue
        queues[e] = QueuePlan(e, q.link, value(q.rho, env), value(q.service, env), value(q.wait, env), value(ctx.edges[e].latency, env), q.sharing)
    phase_plan = lambda ph: _phase_plan(ctx, ph, queues, env)  # noqa: E731
    phases = [phase_plan(ph) for ph in c.phases]
    chains: tuple[SP.ChainPlan, ...] = ()
    steps = None
    if c.timeline is not None or SP.needs_steps(c):
        chains = SP.chains(ctx, c, env)
        dcs = [dataclasses.replace(d, base=ch.step) for d, ch in zip(dcs, chains)]  # the simulated schedule, then the optimiser
        if SP.needs_steps(c):
            steps = SP.step_plan(ctx, c, env, phase_plan)
    ledger = c.ledger
    step = value(c.step_time, env)
    bounds = [Q.long_run_bound(value(le.queue.rho, env), value(le.busy, env), step) for le in c.queues.values()]
    bounds = [b for b in bounds if b is not None and b != float("inf")]
    straggler = ledger.get(ComponentKey.STRAGGLERS)
    closed = tuple(ClosedFormNote(t.id, t.closed_form.formula, t.closed_form.status, t.closed_form.note) for t in ledger if t.closed_form is not None)
    return SchemePlan(
        name=s.name,
        label=s.label or s.name,
        period=value(c.period, env),
        overlap=s.overlap,
        transform=value(c.transform.time, env),
        phases=phases,
        dcs=dcs,
        queues={e: q for e, q in queues.items() if q.rho > 0},
        steps_to_target=value(c.steps, env) if c.steps is not None else None,
        step=step,
        free_step=value(free.step_time, env),
        queueing=sum(value(t.value, env) for t in ledger.of(ComponentKey.QUEUEING)),
        stragglers=value(straggler.value, env) if straggler is not None else 0.0,
        closed_forms=closed,
        bound=max(bounds) if bounds else None,
        costs=c,
        overhead=value(c.overhead, env),
        chains=chains,
        step_plan=steps,
    )


def _phase_plan(ctx: Context, ph: Phase, queues: dict, env: Env) -> PhasePlan:
    """A symbolic phase as numbers: its free step, and its transfers over the loaded edges in `queues`."""
    loaded = tuple(e for e in ph.waits if e in queues and queues[e].rho > 0)
    index = {e: i for i, e in enumerate(loaded)}
    service = tuple(value(ph.loads[e] / ctx.edges[e].bandwidth, env) for e in loaded)
    transfers: dict[TransferPlan, None] = {}
    if loaded:
        for t, lat in zip(ph.transfers, ph.route_latency):
            crossed = tuple((index[e], service[index[e]]) for e in t.edges if e in index)
            if not crossed:
                continue
            rest = [value(ph.loads[e] / ctx.edges[e].bandwidth, env) for e in t.edges if e not in index]
            transfers[TransferPlan(value(lat, env), max(rest, default=0.0), crossed)] = None
    return PhasePlan(
        ph.name,
        ph.steps if isinstance(ph.steps, int) else int(round(value(ph.steps, env))),  # a count of replicas
        value(ph.free_step_time, env),
        value(ph.steps * ph.free_step_time, env),
        loaded,
        service,
        tuple(transfers),
    )


__all__ = ["build_plans", "free_spec", "with_dcs", "loaded_edges", "SchemePlan", "PhasePlan", "TransferPlan", "DcPlan", "QueuePlan"]
