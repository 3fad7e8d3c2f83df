"""One scheme's results: bytes, the phases of its sync, its module, its step and its totals."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from ctdsl import units as U
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
    """The M/D/1 wait on one loaded directed edge that a phase's transfers cross."""

    source: str
    target: str
    link: str
    load: float  # rho
    transfer: Quantity  # bytes of one background transfer
    service: Quantity  # S = transfer / bandwidth
    wait: Quantity  # rho S / (2 (1 - rho))


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

    component: str
    formula: str
    status: str  # exact | numerically integrated | approximation
    note: str = ""


@dataclass(frozen=True, slots=True)
class LoadedLink:
    """A loaded directed edge the sync crosses: its background load and the sync's busy time."""

    link: str
    source: str
    target: str
    load: float  # rho
    busy: float  # seconds per step the sync keeps it busy (divided by H)


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
    components: FrozenDict  # str -> Quantity, per step
    shares: FrozenDict  # str -> float
    binding: str
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
    closed_forms: tuple[ClosedFormNote, ...]
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

    def __repr__(self) -> str:
        return reprs.scheme_repr(self)

    def _repr_latex_(self) -> str:
        return display.render("scheme", "latex", self)

    def _repr_html_(self) -> str:
        return display.render("scheme", "html", self)
