"""What the simulation runs: numbers taken from the same model the solver uses.

For every scheme, `build_plans` asks the symbolic back end (`CostModel`, with the
router's phases, transfers, routes and per-edge loads) for its expressions and
evaluates them at the params' defaults (`convert.value`), so that the simulation
and the closed forms start from the same numbers:

- per dc, a worker's deterministic compute time b and its jitter (scale, kind,
  sigma);
- the transform time and the fixed overhead per sync, the sync period H, overlap;
- per phase: its number of steps, the time of one step with no queueing (the
  symbolic step time, evaluated), and for each transfer its route latency, the
  largest bytes / bandwidth over its unloaded edges and the bytes / bandwidth
  of each loaded edge it crosses (bytes of every transfer of the step that
  shares that edge);
- per loaded edge: its background utilisation rho, service time S and latency.

`free_spec` is the same spec with every load and jitter removed: its closed
forms are what the simulation must reproduce exactly when it runs without them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ctdsl.language.enums import LinkKind
from ctdsl.model import payload as PL
from ctdsl.model.entities import Spec
from ctdsl.symbolic.convert import Symbols, value
from ctdsl.symbolic.costs import CostModel, SchemeCosts

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
    closed_forms: list = field(default_factory=list)  # ClosedForm from costs.py
    bound: float | None = None  # long-run lower bound on the step from over-subscribed links
    costs: SchemeCosts | None = field(default=None, repr=False)
    overhead: float = 0.0  # the scheme's fixed time per sync, s

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
            link = spec.links.get(e.link) if e.kind in (LinkKind.INTRA, LinkKind.WAN) else None
            if link is not None and link.load is not None and link.transfer is not None:
                out.add(e.key)
    return sorted(out)


def build_plans(spec: Spec, names: list[str] | None = None) -> dict[str, SchemePlan]:
    """Each scheme's plan, costed on the sites it runs on (the declared ones, or its variant's)."""
    symbols = Symbols(spec)
    env = symbols.defaults()
    free = free_spec(spec)
    models: dict[str | None, tuple[CostModel, CostModel]] = {}
    plans = {}
    for name, scheme in spec.schemes.items():
        if names is not None and name not in names:
            continue
        if scheme.sites not in models:
            view, calm = spec.on(spec.sites_of(scheme)), free.on(free.sites_of(scheme))
            models[scheme.sites] = (CostModel(view, view.topology, symbols), CostModel(calm, calm.topology, symbols))
        cm, free_cm = models[scheme.sites]
        plans[name] = _plan(cm, cm.scheme(scheme), free_cm.scheme(free.schemes[name]), env)
    return plans


def _plan(cm: CostModel, c: SchemeCosts, free: SchemeCosts, env) -> SchemePlan:
    spec = cm.spec
    s = c.scheme
    model = spec.models[s.model]
    dcs = []
    for dc in spec.dcs.values():
        # one worker's compute: a device's, or a replica's over its GPUs (its share of a split batch)
        base = value(c.compute_per_dc[dc.name], env)
        jitter = value(cm.sym(dc.jitter), env) if dc.jitter is not None else 0.0
        sigma = value(cm.sym(dc.jitter_sigma), env) if dc.jitter_sigma is not None else None
        dcs.append(DcPlan(dc.name, dc.workers * dc.n_sites, base, jitter, dc.jitter_kind if jitter > 0 else None, sigma))  # every site's replicas
    queues: dict[Edge, QueuePlan] = {}
    for e, le in c.queues.items():
        q = le.queue
        queues[e] = QueuePlan(e, q.link, value(q.rho, env), value(q.service, env), value(q.wait, env), value(cm.edge(e).latency, env))
    phases = []
    for ph in c.phases:
        loaded = tuple(e for e in ph.waits if queues[e].rho > 0)
        index = {e: i for i, e in enumerate(loaded)}
        service = tuple(value(ph.loads[e] / cm.edge(e).bandwidth, env) for e in loaded)
        transfers: dict[TransferPlan, None] = {}
        if loaded:
            for t, lat in zip(ph.transfers, ph.route_latency):
                crossed = tuple((index[e], service[index[e]]) for e in t.edges if e in index)
                if not crossed:
                    continue
                rest = [value(ph.loads[e] / cm.edge(e).bandwidth, env) for e in t.edges if e not in index]
                transfers[TransferPlan(value(lat, env), max(rest, default=0.0), crossed)] = None
        phases.append(
            PhasePlan(
                ph.name,
                ph.steps if isinstance(ph.steps, int) else int(round(value(ph.steps, env))),  # a count of replicas
                value(ph.free_step_time, env),
                value(ph.steps * ph.free_step_time, env),
                loaded,
                service,
                tuple(transfers),
            )
        )
    comps = {k: value(v, env) for k, v in c.components.items()}
    queueing = sum(v for k, v in comps.items() if k.startswith("queueing on "))
    step = value(c.step_time, env)
    bound = None
    for e, le in c.queues.items():
        rho, busy = value(le.queue.rho, env), value(le.busy, env)
        if rho < 1 and step and rho + busy / step >= 1:
            bound = max(bound or 0.0, busy / (1 - rho))
    return SchemePlan(
        name=s.name,
        label=s.label or s.name,
        period=value(c.period, env),
        overlap=s.overlap,
        transform=value(c.transform, env),
        phases=phases,
        dcs=dcs,
        queues={e: q for e, q in queues.items() if q.rho > 0},
        steps_to_target=value(c.steps, env) if c.steps is not None else None,
        step=step,
        free_step=value(free.step_time, env),
        queueing=queueing,
        stragglers=comps.get("stragglers", 0.0),
        closed_forms=list(c.closed_forms),
        bound=bound,
        costs=c,
        overhead=value(c.overhead, env),
    )


__all__ = ["build_plans", "free_spec", "with_dcs", "loaded_edges", "SchemePlan", "PhasePlan", "TransferPlan", "DcPlan", "QueuePlan"]
