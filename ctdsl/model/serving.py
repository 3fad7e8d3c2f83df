"""The checked serving definitions: instances, pools, workloads, hand-offs and SLOs.

Each is frozen, as every checked entity is (ctdsl.model.entities), and names the
definitions it uses (a device, a model, a link, a pluggable) by name, so the back end
reads them from the same `Spec` tables training uses: one hardware description for both.
A `Serving` holds them all, and the paths a workload's requests take (`ServingPath`): a
colocated pool alone, or a prefill pool, a hand-off and the decode pool it reaches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ctdsl.diagnostics import Span
from ctdsl.language.serving import Arrival, Batching, HandoffMode, KvPayload, Role
from ctdsl.model.entities import Definition, freeze, frozen_map
from ctdsl.model.expr import Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance(Definition):
    device: str
    model: str
    tp: Expr
    pp: Expr
    ep: Expr
    scaleup_link: str | None  # None: the traffic inside the instance is not charged
    max_batch: Expr
    prefill_tokens: Expr
    kv_memory: Expr  # fraction of the GPUs' memory for weights and KV
    mem_efficiency: Expr
    overhead: Expr  # s per step
    batching: Batching
    chunk: Expr | None  # tokens per chunk (chunked batching); None: not chunked

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, batching=Batching)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool(Definition):
    role: Role
    instance: str
    instances: Expr

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, role=Role)


@dataclass(frozen=True, slots=True, kw_only=True)
class Workload(Definition):
    pool: str
    arrival: Arrival
    rate: Expr  # 1/s
    prompt: Expr  # tokens
    output: Expr  # tokens, the first included
    prompt_cv: Expr
    output_cv: Expr
    slo: str | None

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, arrival=Arrival)


@dataclass(frozen=True, slots=True, kw_only=True)
class Handoff(Definition):
    source: str  # the prefill pool (`from` in the spec)
    target: str  # the decode pool (`to`)
    link: str  # the link, or the route's first
    route: tuple[str, ...]  # the links crossed in turn: (link,) when the hand-off names one
    mode: HandoffMode
    payload: KvPayload
    fraction: Expr | None  # a band's kept fraction
    at: str  # "gpu" or a pluggable's name
    cost: Expr  # FLOP per input byte
    label: str | None

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, mode=HandoffMode, payload=KvPayload, route=tuple)

    @property
    def display(self) -> str:
        return self.label or self.name


@dataclass(frozen=True, slots=True, kw_only=True)
class Slo(Definition):
    ttft: Expr | None
    tpot: Expr | None
    e2e: Expr | None
    percentile: Expr


@dataclass(frozen=True, slots=True)
class ServingPath:
    """The way one workload's requests go: a colocated pool, or prefill -> hand-off -> decode."""

    workload: str
    entry: str  # the pool the requests arrive at
    handoff: str | None  # None: a colocated pool serves them whole
    decode: str | None  # the decode pool; None when colocated

    @property
    def name(self) -> str:
        return f"{self.workload}/{self.handoff}" if self.handoff else f"{self.workload}/{self.entry}"


@dataclass(frozen=True, slots=True)
class Serving:
    instances: Mapping[str, Instance] = field(default_factory=dict)
    pools: Mapping[str, Pool] = field(default_factory=dict)
    workloads: Mapping[str, Workload] = field(default_factory=dict)
    handoffs: Mapping[str, Handoff] = field(default_factory=dict)
    slos: Mapping[str, Slo] = field(default_factory=dict)
    paths: tuple[ServingPath, ...] = ()

    def __post_init__(self) -> None:
        freeze(self, instances=frozen_map, pools=frozen_map, workloads=frozen_map, handoffs=frozen_map, slos=frozen_map, paths=tuple)

    def __bool__(self) -> bool:
        return bool(self.paths)


__all__ = ["Handoff", "Instance", "Pool", "Serving", "ServingPath", "Slo", "Span", "Workload"]
