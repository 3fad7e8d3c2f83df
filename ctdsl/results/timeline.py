"""A scheme's training step in detail: the replica's inner step, its model-parallel traffic, and
its syncs with what each exposes (symbolic/timeline.py, traffic.py and exposure.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl.language.components import ComponentKey
from ctdsl.results.frozen import FrozenDict
from ctdsl.results.quantity import Quantity


@dataclass(frozen=True, slots=True)
class TrafficResult:
    """One kind of model-parallel traffic of one GPU of a dc's most-loaded pipeline stage."""

    dc: str
    kind: ComponentKey  # tensor, context, expert or pipeline parallel
    link: str  # the link definition it runs on
    role: str  # scale-up | scale-out
    per_micro: Quantity  # bytes per micro-batch (pipeline parallel: one transfer)
    sent: Quantity  # bytes one GPU sends per step
    busy: Quantity  # s per step its transfers take, hidden or not
    exposed: Quantity  # s per step on the critical path (the step's component, before the bubble)
    formula: str


@dataclass(frozen=True, slots=True)
class DcTimeline:
    """One dc's inner step: micro-batches, the pieces of one micro-batch on one stage, and the window."""

    dc: str
    micro_batches: Quantity  # m = tokens / (b s)
    per_micro: FrozenDict  # ComponentKey -> Quantity: compute (forward and backward), recompute, tensor, context, expert parallel
    components: FrozenDict  # ComponentKey -> Quantity, per step
    inner: Quantity  # their sum
    window: Quantity  # the backward pass of the last micro-batch


@dataclass(frozen=True, slots=True)
class TimelineResult:
    stages: float  # pp
    virtual_stages: float  # v
    dcs: tuple[DcTimeline, ...]
    traffic: tuple[TrafficResult, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SyncResult:
    """One sync of a scheme: when it runs and what of it the step waits for."""

    name: str  # sync | inner sync | outer sync
    every: float  # steps between two of them
    time: Quantity  # the whole sync, every fragment and bucket at once
    exposed: Quantity | None  # per step; None: in series with the step, phase by phase
    buckets: float  # B: 1 unless it overlaps the backward pass
    bucket_time: Quantity | None  # tau: one bucket of one fragment, latencies included
    fragments: float  # F
    window: Quantity  # the backward pass it overlaps (0 s: none)
    slack: Quantity  # delay x the inner step
