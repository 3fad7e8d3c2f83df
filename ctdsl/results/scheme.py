"""One scheme's results: bytes, the phases of its sync, its module, its step and its totals.

The step is its ledger's terms evaluated (`TermResult`, one per component, in the
scheme's order: ctdsl.symbolic.ledger): each keyed by its `ComponentId`, with its value
per step, its share of the step, how it is charged and where. `components`, `shares`
and `closed_forms` are views of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ctdsl import units as U
from ctdsl.language.components import Charge, ComponentId, ComponentKey, Group, Place, Side
from ctdsl.results import display, reprs
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.params import Symbols
from ctdsl.results.quantity import Quantity
from ctdsl.results.timeline import SyncResult, TimelineResult


@dataclass(frozen=True, slots=True)
class LinkUse:
    source: str
    target: str
    link: str
    kind: str  # port | intra | wan
    nbytes: Quantity  # per sync (or per step of a phase)
    bandwidth: Quantity
    time: Quantity  # nbytes / bandwidth


@dataclass(frozen=True, slots=True)
class QueueWait:
    """One loaded directed edge that a phase's transfers cross, with the mean wait of one background
    transfer arriving at a random time (queueing.py): rho S / (1 - rho) past its S on a link shared
    fairly, the M/D/1 rho S / (2 (1 - rho)) on one served first come, first served (the first
    wait of the phase's burst)."""

    source: str
    target: str
    link: str
    load: float  # rho
    transfer: Quantity  # bytes of one background transfer
    service: Quantity  # S = transfer / bandwidth
    wait: Quantity  # fair: rho S / (1 - rho); fifo: rho S / (2 (1 - rho))
    sharing: str = "fair"  # the link's sharing: fair (processor sharing) or fifo


@dataclass(frozen=True, slots=True)
class PhaseQueueing:
    seconds_per_step: Quantity
    waits: tuple[QueueWait, ...]


@dataclass(frozen=True, slots=True)
class PhaseResult:
    name: str
    steps: int
    transfers: int
    time: Quantity  # per sync
    step_time: Quantity
    latency: Quantity  # of one step
    links: tuple[LinkUse, ...]  # bytes per step on each link crossed
    bottleneck: str
    queueing: PhaseQueueing | None = None
    every_step: bool = False  # a phase of the inner sync, every step (inner = dc), not every H steps


@dataclass(frozen=True, slots=True)
class StageResult:
    name: str
    rate: Quantity
    time: Quantity


@dataclass(frozen=True, slots=True)
class BreakPoint:
    param: str
    expr: sp.Expr
    value: float | None
    dim: U.Dim
    then: str  # the stage that binds beyond it

    def __str__(self) -> str:
        shown = U.format_quantity(self.value, self.dim) if self.value is not None else "n/a"
        return f"{self.param} = {shown}"


@dataclass(frozen=True, slots=True)
class ModuleResult:
    pluggable: str
    stream: Quantity
    stages: tuple[StageResult, ...]
    binding: str
    runner_up: str | None
    breaks: tuple[BreakPoint, ...]
    latency: Quantity
    time: Quantity
    charged_cost: float  # FLOP per byte charged to the compute budget
    budget_per_byte: Quantity | None = None  # compute budget / line rate


@dataclass(frozen=True, slots=True)
class RooflineResult:
    """Both sides of a GPU transform's roofline on one kind of device, and which binds.

    `binds` is the side that is larger (memory when the intensity is below the
    ridge point); `charge` says what the transform is charged: the roofline (the
    larger side) or, with `transform_charge = flops`, the compute side alone.
    """

    device: str
    dcs: tuple[str, ...]
    charge: str  # roofline | flops
    compute: Quantity  # cost D / (peak eff)
    memory: Quantity | None  # D / mem_bw; None: the device gives no mem_bw
    intensity: Quantity  # the transform's cost, FLOP/B
    ridge: Quantity | None  # peak eff / mem_bw, FLOP/B
    binds: str  # compute | memory
    time: Quantity  # what the transform is charged


@dataclass(frozen=True, slots=True)
class ClosedFormNote:
    """A term added for contention or stragglers, with how far to trust it."""

    component: ComponentId
    formula: str
    status: str  # exact | numerically integrated | approximation
    note: str = ""


@dataclass(frozen=True, slots=True)
class TermResult:
    """One component of the step (a term of the scheme's ledger), evaluated."""

    id: ComponentId
    value: Quantity  # per step
    share: float  # of the step
    charge: Charge  # every step, once per sync period (in the one quotient over H), or within other terms
    place: Place  # where it is charged
    names: tuple[str, ...] = ()  # the places: links, a phase's links, the sync, the module
    amount: Quantity | None = None  # what it adds to the step where that is not its value: per sync period for a term charged once per period
    behind: str | None = None  # what an overlapped sync hides behind
    closed_form: ClosedFormNote | None = None  # how far to trust it (queueing, stragglers)
    source: str = ""

    @property
    def key(self) -> ComponentKey:
        return self.id.key

    @property
    def side(self) -> Side:
        return self.id.side

    @property
    def group(self) -> Group:
        return self.id.group

    @property
    def label(self) -> str:
        return self.id.label


@dataclass(frozen=True, slots=True)
class LoadedLink:
    """A loaded directed edge the sync crosses: its background load and the sync's busy time."""

    link: str
    source: str
    target: str
    load: float  # rho
    busy: float  # seconds per step the sync keeps it busy (divided by H)
    bound: float | None = None  # the long-run least step where background and sync over-subscribe it (queueing.py); None: they do not


@dataclass(frozen=True, slots=True)
class JobResult:
    """The job's size on the sites a scheme runs on (symbolic/counts.py, `job_size`)."""

    gpus: Quantity  # every dc's GPUs (or workers), in all its sites
    nodes: Quantity  # a dc of replicas: its GPUs over gpus_per_node, rounded up; a worker is a node
    sites: Quantity  # every dc's sites (1 where it gives none)


@dataclass(frozen=True, slots=True)
class SchemeResult:
    name: str
    label: str
    payload_kind: str
    collective: str
    at: str
    period: float
    dense: Quantity
    payload: Quantity
    up: Quantity  # what each worker sends up to a switch (the dense buffer when the switch transforms)
    wire: Quantity
    wan: Quantity
    ratio: float  # dense / payload
    terms: tuple[TermResult, ...]  # the step's components, in the scheme's order
    binding: ComponentId  # the component that binds the step (language/components.py)
    step_time: Quantity
    steps: float | None
    steps_expr: sp.Expr | None  # steps to target, exact
    time_to_target: Quantity | None
    energy_per_step: Quantity
    energy_to_target: Quantity | None
    energy_parts: FrozenDict  # str -> Quantity, per step
    transform: Quantity | None  # one transform, per sync (None: no transform)
    transform_at: str  # gpu | pluggable NAME | switch NAME | none
    phases: tuple[PhaseResult, ...]
    links: tuple[LinkUse, ...]  # per sync
    module: ModuleResult | None
    overlap: bool
    loaded_links: tuple[LoadedLink, ...]
    symbols: Symbols
    overhead: Quantity | None = None  # the scheme's fixed time per sync (None: none)
    roofline: tuple[RooflineResult, ...] = ()  # a transform on the GPU, one per kind of device
    sites: str | None = None  # the variant of the sites it runs on; None: the sites as declared
    cost_to_target: Quantity | None = None  # USD (docs/codesign.md); None: the spec prices nothing, or no steps
    co2e_to_target: Quantity | None = None  # gCO2e; None: no carbon intensity or embodied carbon, or no steps
    cost_parts: FrozenDict = field(default_factory=FrozenDict)  # str -> Quantity, to target: devices, modules, switches, links, energy
    co2e_parts: FrozenDict = field(default_factory=FrozenDict)  # str -> Quantity, to target: operational, embodied
    utilisation: Quantity | None = None  # compute utilisation: compute / step time (symbolic/targets.py)
    mfu: Quantity | None = None  # model FLOPs per step / (step time x the GPUs' peak)
    inner: Quantity | None = None  # the inner step: compute and, with the timeline, recompute, model-parallel traffic, bubble, optimiser
    timeline: TimelineResult | None = None  # the replica's step in detail (None: compute as one block)
    syncs: tuple[SyncResult, ...] = ()  # its syncs and what each exposes
    bytes_to_target: Quantity | None = None  # what the busiest worker sends over the run (steps / H x wire); None: no steps
    class_bytes_to_target: FrozenDict = field(default_factory=FrozenDict)  # link class (port, intra, wan) -> what its links carry over the run
    job: JobResult | None = None  # GPUs, nodes and sites of the job

    @property
    def components(self) -> FrozenDict:
        """ComponentId -> Quantity per step, in the scheme's order."""
        return FrozenDict((t.id, t.value) for t in self.terms)

    @property
    def shares(self) -> FrozenDict:
        """ComponentId -> its share of the step."""
        return FrozenDict((t.id, t.share) for t in self.terms)

    @property
    def closed_forms(self) -> tuple[ClosedFormNote, ...]:
        """The contention and straggler terms, with how far to trust each."""
        return tuple(t.closed_form for t in self.terms if t.closed_form is not None)

    def term(self, key: ComponentKey, qualifier: str = "") -> TermResult | None:
        return next((t for t in self.terms if t.key is key and t.id.qualifier == qualifier), None)

    def of(self, *groups: Group) -> tuple[TermResult, ...]:
        """The terms summed into the step table's columns `groups`."""
        return tuple(t for t in self.terms if t.group in groups)

    def __repr__(self) -> str:
        return reprs.scheme_repr(self)

    def _repr_latex_(self) -> str:
        return display.render("scheme", "latex", self)

    def _repr_html_(self) -> str:
        return display.render("scheme", "html", self)
