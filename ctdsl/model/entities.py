"""The checked model: typed definitions whose quantities are checked expressions.

Everything here has passed name resolution, unit checking and range checks. Each
quantity is an `Expr` in base units (B, s, FLOP, J, m); `spans` keeps where each
field was written, for later diagnostics (the linter's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ctdsl.diagnostics import Span
from ctdsl.model.expr import Expr
from ctdsl.units import Dim


@dataclass
class Param:
    name: str
    dim: Dim
    default: float  # base units
    unit: str | None  # as declared, for printing (`GB/s`)
    unit_scale: float  # base units per declared unit
    lo: float | None = None
    hi: float | None = None
    spacing: str | None = None  # lin | log
    count: int | None = None
    display: str | None = None
    span: Span | None = None


@dataclass
class Definition:
    name: str
    span: Span
    file: str
    spans: dict[str, Span] = field(default_factory=dict, repr=False)
    from_std: bool = False


@dataclass
class Model(Definition):
    params: Expr = None  # parameter count P
    bytes_per_value: Expr = None
    tokens: Optional[Expr] = None
    flops_per_token: Expr = None
    shape: dict[str, Expr] | None = None
    kv_tokens: Optional[Expr] = None


@dataclass
class Device(Definition):
    peak: Expr = None
    efficiency: Optional[Expr] = None
    mem_bw: Optional[Expr] = None
    memory: Optional[Expr] = None
    static_power: Expr = None
    power: Optional[Expr] = None
    energy_per_flop: Expr = None
    energy_per_byte: Expr = None


@dataclass
class Link(Definition):
    bandwidth: Expr = None
    latency: Expr = None
    energy_per_bit: Expr = None  # J per byte in base units; written as pJ/bit
    distance: Optional[Expr] = None
    load: Optional[Expr] = None  # background utilisation (queueing)
    transfer: Optional[Expr] = None  # background transfer size


@dataclass
class PluggableStage:
    name: str  # port | optics | compute | fpga
    rate: Optional[Expr] = None  # B/s (port, optics, fpga)
    host: Optional[Expr] = None  # B/s (port)
    budget: Optional[Expr] = None  # FLOP/s (compute)
    performs: tuple[str, ...] = ()  # operations the stage does for free (optics)
    span: Span | None = None


@dataclass
class Pluggable(Definition):
    stages: dict[str, PluggableStage] = field(default_factory=dict)
    latency: Expr = None
    power: Expr = None
    ops: tuple[str, ...] = ()

    @property
    def line_rate(self) -> Expr:
        from ctdsl.model.expr import emin

        port = self.stages["port"]
        return emin(port.rate, port.host) if port.host is not None else port.rate


@dataclass
class Switch(Definition):
    sum: bool = False
    loopback: bool = False
    ops: tuple[str, ...] = ()
    rate: Optional[Expr] = None
    latency: Expr = None
    power: Expr = None


@dataclass
class DataCentre(Definition):
    workers: int = 0
    device: str = ""
    link: str = ""
    switch: str = ""
    pluggable: Optional[str] = None
    jitter: Optional[Expr] = None  # scale of each worker's random extra compute time per step (s)
    jitter_kind: Optional[str] = None  # exponential | uniform | lognormal, when jitter is set
    jitter_sigma: Optional[Expr] = None  # lognormal: sigma of the log


@dataclass
class WanLink:
    a: str  # dc
    b: str  # dc
    link: str
    span: Span


@dataclass
class Placement:
    """Where a scheme's transform or sum runs."""

    kind: str  # gpu | pluggable | switch
    name: str | None  # the pluggable or switch definition


@dataclass
class Scheme(Definition):
    payload: str = "dense"  # dense | quantise | topk | demo | band
    fraction: Optional[Expr] = None
    bits: Optional[Expr] = None  # per value, base units (bytes)
    block: Optional[Expr] = None
    scale: Optional[Expr] = None
    index: Optional[Expr] = None
    chunk: Optional[Expr] = None
    k: Optional[Expr] = None
    collective: str = "hier_allreduce"
    at: Placement = field(default_factory=lambda: Placement("gpu", None))
    sum_at: Optional[str] = None
    loopback: bool = False
    period: Expr = None
    steps: Optional[Expr] = None
    overlap: bool = False
    cost: Expr = None
    model: str = ""
    label: str | None = None


@dataclass
class Breakeven:
    x: str
    y: str
    over: str
    span: Span


@dataclass
class Simulation(Definition):
    steps: Optional[Expr] = None  # measured per seed, after the warm-up
    seeds: Optional[Expr] = None
    warmup: Optional[Expr] = None  # steps run and discarded first


@dataclass
class Spec:
    """A checked spec: every definition visible from the root file."""

    root: str
    params: dict[str, Param] = field(default_factory=dict)
    models: dict[str, Model] = field(default_factory=dict)
    devices: dict[str, Device] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    pluggables: dict[str, Pluggable] = field(default_factory=dict)
    switches: dict[str, Switch] = field(default_factory=dict)
    dcs: dict[str, DataCentre] = field(default_factory=dict)
    wans: list[WanLink] = field(default_factory=list)
    schemes: dict[str, Scheme] = field(default_factory=dict)
    breakevens: list[Breakeven] = field(default_factory=list)
    baseline: str | None = None
    simulation: Simulation | None = None
    files: list[str] = field(default_factory=list)

    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params.values()}

    def definition(self, name: str) -> Definition | None:
        for table in (self.models, self.devices, self.links, self.pluggables, self.switches, self.dcs, self.schemes):
            if name in table:
                return table[name]
        return None
