"""The checked model: typed definitions whose quantities are checked expressions.

Everything here has passed name resolution, unit checking and range checks. Each quantity is
an `Expr` in base units (B, s, FLOP, J, m); a field's name says what it holds in those units
(`Link.energy_per_byte` is J/B, though a spec writes `energy_per_bit = 15 pJ/bit`). `spans`
keeps where each field was written, by its name in the spec (`energy_per_bit`, `port.rate`),
for later diagnostics (the linter's).

Every entity is frozen (`dataclasses.FrozenInstanceError` on assignment) and holds only
tuples and read-only mappings, so a checked `Spec` cannot change after the checker returns
it. The checker builds each entity once, with every field given and every default filled; a
pass that needs a variant (the simulator's spec without background load) builds a new one
with `dataclasses.replace`. The closed sets are the enums of `ctdsl.language.enums`.

Long: every kind of checked definition, one frozen dataclass each, with the helpers that
freeze their fields (`freeze`, `frozen_map`); cutting them apart to stay under 400 lines
split one concept in two files.

A field is `None` only where its absence means something: an optional quantity not given
(no memory roofline without `mem_bw`), or a field the checker requires only where the
definition is used (a dc's device must have a `peak`; a device no dc uses may leave it out).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from ctdsl.diagnostics import Span
from ctdsl.language.enums import Algorithm, Collective, ComputeModel, Counted, Fabric, FragmentOrder, InnerSync, JitterKind, LinkKind, ModuleLatency, Operation, Payload, PlacementKind, Precision, Readiness, Recompute, Sharing, SimLatency, Spacing, TransformCharge
from ctdsl.model.distribution import Distribution
from ctdsl.model.expr import Expr, Mul, emin
from ctdsl.model.topology import Edge, Topology
from ctdsl.units import Dim


# ---- how the entities freeze their fields: read-only mappings, tuples, enums -------------------


def frozen_map(m: Mapping | None) -> Mapping | None:
    """A read-only view of a copy of `m` (`m` itself if it is already one)."""
    if m is None or isinstance(m, MappingProxyType):
        return m
    return MappingProxyType(dict(m))


def freeze(obj: object, **converters) -> None:
    """Convert fields in place after __init__ (frozen: through object.__setattr__)."""
    for name, convert in converters.items():
        value = getattr(obj, name)
        if value is not None:
            object.__setattr__(obj, name, convert(value))


def operations(values) -> tuple[Operation, ...]:
    return tuple(Operation(v) for v in values)


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    dim: Dim
    default: float  # base units
    unit: str | None  # as declared, for printing (`GB/s`); None: written without a unit
    unit_scale: float  # base units per declared unit
    lo: float | None  # the range, base units; None: no range
    hi: float | None
    spacing: Spacing | None  # None: a range without a sweep spacing, or no range
    count: int | None  # sweep points; None: not given
    display: str | None  # LaTeX display name; None: the name
    span: Span
    given: bool = False  # the value came from --set (an override), not the spec
    dist: Distribution | None = None  # `~ ...`: drawn from this by `ctdsl uncertainty`; None: certain

    def __post_init__(self) -> None:
        freeze(self, spacing=Spacing)


@dataclass(frozen=True, slots=True, kw_only=True)
class Definition:
    name: str
    span: Span
    file: str
    spans: Mapping[str, Span]  # where each field was written, by its name in the spec
    from_std: bool

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class Model(Definition):
    params: Expr | None  # parameter count P, given or from the shape; None: neither given
    bytes_per_value: Expr | None  # B
    tokens: Expr | None  # per step per worker
    flops_per_token: Expr | None  # FLOP; 6P when not given; None when P is unknown
    shape: Mapping[str, Expr] | None  # layers, width, ...; None: the model gives params instead
    kv_tokens: Expr | None  # tokens whose KV cache is handed on; None: not given
    batch_tokens: Expr | None = None  # per step of the whole job, split by compute; None: `tokens` per worker
    step: Expr | None = None  # s, a given compute time per step (`step = 0.8 s`); None: from the FLOPs
    # how the shape is counted (ctdsl.model.payload): one embedding matrix or two, norm
    # weights counted, gated (3df) or plain (2df) MLPs, causal attention core (c = 1) or not
    tied: bool = False
    norms: bool = False
    gated: bool = True
    causal: bool = True

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, shape=frozen_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class Device(Definition):
    peak: Expr | None  # FLOP/s
    peak_fp8: Expr | None = None  # FLOP/s, dense FP8; None: not given
    efficiency: Expr | None  # fraction of peak
    mfu: Expr | None = None  # a measured MFU of the inner step: it replaces the training step's timeline
    mem_bw: Expr | None  # B/s; None: no memory roofline for the transform
    efficiency_fp8: Expr | None = None  # fraction of peak_fp8 for large FP8 GEMMs; None: efficiency
    gemm_half: Expr | None = None  # FLOP: the GEMM size at half its large-GEMM efficiency (compute = operations); None: 0
    mem_efficiency: Expr | None = None  # achieved fraction of mem_bw (compute = operations); None: 1
    sms: Expr | None = None  # the SMs a GEMM's output tiles run on, one a tile at a time (compute = operations); None: no quantisation
    tile_m: Expr | None = None  # rows of the GEMM kernels' output tile (with sms)
    tile_n: Expr | None = None  # its columns
    memory: Expr | None  # B
    static_power: Expr  # W
    power: Expr | None  # W
    energy_per_flop: Expr  # J/FLOP
    energy_per_byte: Expr  # J/B of memory traffic
    transform_charge: TransformCharge = TransformCharge.ROOFLINE  # how a transform on it is charged
    price: Expr | None = None  # USD/s of use; None: not rented by the hour
    capex: Expr | None = None  # USD, spread over depreciation; None: not bought
    depreciation: Expr | None = None  # s
    embodied_carbon: Expr | None = None  # gCO2e, spread over depreciation

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, transform_charge=TransformCharge)


@dataclass(frozen=True, slots=True, kw_only=True)
class Link(Definition):
    bandwidth: Expr | None  # B/s, one direction
    latency: Expr | None  # s
    energy_per_byte: Expr  # J/B; the spec writes it per bit (`energy_per_bit = 15 pJ/bit`)
    distance: Expr | None  # m
    load: Expr | None  # background utilisation (queueing); None: no background traffic
    transfer: Expr | None  # B, one background transfer
    counted: Counted = Counted.TRANSFER  # latency and energy once per transfer, or per hop
    sharing: Sharing = Sharing.FAIR  # a loaded link's discipline: processor sharing, or FIFO (queueing.py)
    price: Expr | None = None  # USD/B: rent per (B/s x s) of capacity, per connection; None: free
    efficiency: Expr | None = None  # achieved fraction of the line rate; None: 1
    in_network: bool = False  # its switch reduces in the network (NVLink SHARP)
    channels: Expr | None = None  # SMs a collective on it holds while it runs (NCCL's channels); None: none counted

    @property
    def loaded(self) -> bool:
        """Whether the link carries background traffic (queueing): both `load` and `transfer` are given."""
        return self.load is not None and self.transfer is not None


@dataclass(frozen=True, slots=True)
class PluggableStage:
    name: str  # port | optics | compute | fpga
    rate: Expr | None  # B/s (port, optics, fpga)
    host: Expr | None  # B/s (port); None: the host port does not cap the line rate
    budget: Expr | None  # FLOP/s (compute)
    performs: tuple[Operation, ...]  # operations the stage does for free (optics)
    span: Span

    def __post_init__(self) -> None:
        freeze(self, performs=operations)


@dataclass(frozen=True, slots=True, kw_only=True)
class Pluggable(Definition):
    stages: Mapping[str, PluggableStage]
    latency: Expr  # s
    power: Expr  # W
    ops: tuple[Operation, ...]
    price: Expr | None = None  # USD per module, spread over depreciation; None: not priced
    depreciation: Expr | None = None  # s; None: the device's
    counted: ModuleLatency = ModuleLatency.ONCE  # its latency once (in its own time), or at every port crossing too

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, stages=frozen_map, ops=operations, counted=ModuleLatency)

    @property
    def line_rate(self) -> Expr:
        port = self.stages["port"]
        return emin(port.rate, port.host) if port.host is not None else port.rate


@dataclass(frozen=True, slots=True, kw_only=True)
class Switch(Definition):
    sum: bool
    loopback: bool
    ops: tuple[Operation, ...]
    total_rate: Expr | None  # B/s, shared by all the streams it takes in at once; None: no such cap
    stream_rate: Expr | None  # B/s, each stream's own; None: no such cap
    latency: Expr  # s
    power: Expr  # W
    price: Expr | None = None  # USD per switch, spread over depreciation; None: not priced
    depreciation: Expr | None = None  # s; None: its dc's device's
    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, ops=operations)


@dataclass(frozen=True, slots=True, kw_only=True)
class DataCentre(Definition):
    """A data centre: `workers` devices each holding the model, or `replicas` groups of a replica's
    GPUs (a count a param may set; `workers` is then that count at the params' defaults), in `sites`
    alike sites (`n_sites` at the defaults). Nothing is unrolled per GPU, replica or site."""

    workers: int
    device: str
    link: str  # each worker's link to the switch; with replicas, each NIC's
    switch: str
    pluggable: str | None  # None: no module in the workers' ports
    jitter: Expr | None  # s, scale of each worker's random extra compute time per step; None: none
    jitter_kind: JitterKind | None  # set exactly when jitter is
    jitter_sigma: Expr | None  # lognormal: sigma of the log; None for the other kinds
    power_price: Expr | None = None  # USD/J of grid energy; None: energy not charged
    pue: Expr | None = None  # grid energy per energy drawn (>= 1); None: 1
    carbon_intensity: Expr | None = None  # gCO2e/J of grid energy; None: no operational carbon
    replica: str | None = None  # the replica each data-parallel worker is; None: a worker is one device
    replicas: Expr | None = None  # how many (set exactly when replica is)
    fabric: Fabric = Fabric.RAIL
    oversubscription: Expr | None = None  # a leaf_spine fabric's; None: 1
    sites: Expr | None = None  # alike sites the dc stands for, each with `replicas` (a param may set it); None: one
    n_sites: int = 1  # the sites at the params' defaults, as `workers` is the replicas per site

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, jitter_kind=JitterKind, fabric=Fabric)


@dataclass(frozen=True, slots=True)
class WanLink:
    a: str  # dc
    b: str  # dc
    link: str
    span: Span
    count: Expr | None = None  # that many of the link in parallel; None: one


@dataclass(frozen=True, slots=True, kw_only=True)
class Replica(Definition):
    """A data-parallel worker made of tp x pp x cp GPUs (`gpus`); ep splits a MoE layer's experts."""

    tp: Expr
    pp: Expr
    cp: Expr
    ep: Expr
    gpus_per_node: Expr
    scaleup: Expr | None  # GPUs in a scale-up domain; None: a node
    scaleup_link: str | None
    nics: Expr | None  # scale-out NICs per node; None: one per GPU
    first_stage_layers: Expr | None = None  # uneven pipeline stages: the first's layers (None: even)
    last_stage_layers: Expr | None = None
    zero: Expr | None = None  # ZeRO stage; None: 1
    recompute: Recompute = Recompute.SELECTIVE
    recompute_share: Expr | None = None  # the share of a stage's layers `recompute` applies to; None: 1
    micro_batch: Expr | None = None  # sequences; None: 1
    sequence_parallel: bool = True
    virtual_stages: Expr | None = None  # model chunks per pipeline rank (interleaved 1F1B); None: 1
    compute: ComputeModel = ComputeModel.BLOCK  # how its compute is timed (symbolic/compute_ops.py)
    flash: bool = True  # the attention core fused (compute = operations)
    gemm_precision: Precision = Precision.BF16
    attention_precision: Precision = Precision.BF16
    capacity_factor: Expr | None = None  # MoE: tokens an expert takes at most, x its balanced share; None: dropless
    pad_to_capacity: bool = False
    moe_imbalance: Expr | None = None  # MoE: the most-loaded rank's excess of tokens; None: 0
    grouped_gemm: bool = True
    algorithm: Algorithm = Algorithm.AUTO  # how a model-parallel all-reduce runs (collectives.py)
    tp_comm_overlap: bool = False  # TP collectives pipelined with the GEMMs (overlaps.py)
    overlap_p2p: bool = False  # pipeline p2p beside compute (overlaps.py)
    tp_async_backward: bool = False  # the backward's column-parallel TP collectives beside the weight gradients (overlaps.py)
    loss_scaling: bool = False  # fp16 with a loss scale: the optimiser's copy and unscale passes, a 16-bit gradient buffer (timeline.py)

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, recompute=Recompute, compute=ComputeModel, gemm_precision=Precision, attention_precision=Precision, algorithm=Algorithm)

    @property
    def gpus(self) -> Expr:
        """GPUs in one replica: tp x pp x cp."""
        return Mul(Mul(self.tp, self.pp), self.cp)


@dataclass(frozen=True, slots=True)
class Sites:
    """The hardware a scheme runs on: the dcs, the WAN links and the graph built from them.

    `name` is None for the sites as declared, else the variant's name; a variant's
    dcs and WAN links are complete (the declared ones with the variant's changes),
    and its topology is built once, by the checker, as the declared one is.
    """

    name: str | None
    dcs: Mapping[str, DataCentre]
    wans: tuple[WanLink, ...]
    topology: Topology
    span: Span | None  # the variant's name; None for the declared sites

    def __post_init__(self) -> None:
        freeze(self, dcs=frozen_map, wans=tuple)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a scheme's transform or sum runs."""

    kind: PlacementKind
    name: str | None  # the pluggable or switch definition; None on the GPU

    def __post_init__(self) -> None:
        freeze(self, kind=PlacementKind)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scheme(Definition):
    payload: Payload
    fraction: Expr | None  # topk, band
    value_bytes: Expr | None  # B per quantised value (quantise; written `bits = 2 b`)
    block: Expr | None  # values per scale block (quantise); None: no block scales
    scale: Expr | None  # B per block scale (quantise)
    index: Expr | None  # B per position (topk, demo); None: enough to address the chunk
    chunk: Expr | None  # values per chunk (topk, demo); None: the whole tensor
    k: Expr | None  # values kept per chunk (demo)
    collective: Collective
    at: Placement
    sum_at: str | None  # the switch of an in-network sum; None: each dc's own
    loopback: bool
    period: Expr  # H, steps between syncs
    steps: Expr | None  # steps to the target loss; None: no time to target
    overlap: bool  # the whole sync alongside the next H steps (`overlap = true`)
    cost: Expr  # FLOP/B of the transform
    overhead: Expr  # s, fixed time per sync
    model: str
    sites: str | None  # the variant of the sites it runs on; None: the sites as declared
    label: str | None  # display name; None: the name
    transform_charge: TransformCharge | None = None  # on the GPU; None: the device's
    backward: bool = False  # the sync overlaps the backward pass bucket by bucket (`overlap = backward`)
    bucket: Expr | None = None  # B of gradient per bucket (with backward); None: 25 MB
    bucket_per_layer: bool = False  # `bucket = layer`: one bucket per layer the GPU holds
    overlap_param_gather: bool = False  # the parameter all-gather beside the next forward (overlaps.py)
    fragments: Expr | None = None  # Streaming DiLoCo's fragments; None: 1
    step: Expr | None = None  # s, a given step time, compute only (`step = 0.8 s`); None: from the FLOPs
    ready: Readiness = Readiness.STEP  # when a fragment's outer gradient is ready: the step's end, or its layers'
    fragment_order: FragmentOrder = FragmentOrder.STRIDED  # the layers a fragment holds
    fragment_layers: Expr | None = None  # a fragment's size in layers (F = ceil(L / it)); None: given as `fragments`
    delay: Expr | None = None  # inner steps a sync may take while training goes on; None: 0
    inner: InnerSync = InnerSync.NONE  # who syncs every inner step when H > 1

    def __post_init__(self) -> None:
        freeze(self, spans=frozen_map, payload=Payload, collective=Collective, transform_charge=TransformCharge, inner=InnerSync, ready=Readiness, fragment_order=FragmentOrder)



@dataclass(frozen=True, slots=True)
class Breakeven:
    x: str  # the schemes compared: x vs y, over a param
    y: str
    over: str
    span: Span
    on: str = "time"  # what to target is compared: time, energy, cost or co2e (`on cost`)
    workload: str | None = None  # set when x and y are hand-offs: the workload whose paths through them are compared


@dataclass(frozen=True, slots=True, kw_only=True)
class Simulation(Definition):
    steps: Expr  # measured per seed, after the warm-up
    seeds: Expr
    warmup: Expr  # steps run and discarded first
    latency: SimLatency = SimLatency.PROPAGATE  # whether a loaded link is held during a transfer's latency


@dataclass(frozen=True, slots=True)
class CheckedBound:
    """A bound the checker tested on an expression of params (`ctdsl.language.bounds`), at the
    defaults and at the ends of the params' ranges, kept so that a reader of the model (the
    explorer's page) can test other values of the params against it as the checker tests `--set`."""

    owner: str  # what the message names: `accel.efficiency`, or a dc's name for `ring_sites`
    bound: str  # a key of ctdsl.language.bounds.BOUNDS
    expr: Expr  # in base units; names at least one param
    dim: Dim
    span: Span
    help: str | None
    field: int  # the written field: a field that several blocks inherit is one mistake, reported once


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """A checked spec: every definition visible from the root file, and its topology.

    The tables are read-only mappings in definition order. `topology` is built by
    the checker from dcs, links, pluggables, switches and wans; a copy made with
    `dataclasses.replace` keeps it, which is right as long as the copy leaves
    the links' bandwidths and latencies and the dcs' layout alone. `dcs`, `wans`
    and `topology` are the sites as declared (`sites`); `variants` holds each
    declared variant of them, and `sites_of(scheme)` the ones a scheme runs on.
    """

    root: str
    files: tuple[str, ...]
    params: Mapping[str, Param]
    models: Mapping[str, Model]
    devices: Mapping[str, Device]
    links: Mapping[str, Link]
    pluggables: Mapping[str, Pluggable]
    switches: Mapping[str, Switch]
    dcs: Mapping[str, DataCentre]
    wans: tuple[WanLink, ...]
    schemes: Mapping[str, Scheme]
    breakevens: tuple[Breakeven, ...]
    baseline: str | None  # the scheme others are compared with; None: none named
    simulation: Simulation | None  # None: no simulation block (the schema's defaults apply)
    topology: Topology
    variants: Mapping[str, Sites] = field(default_factory=dict)  # the variants of the sites, by name
    replicas: Mapping[str, Replica] = field(default_factory=dict)  # the replica definitions, by name
    searches: tuple = ()  # design searches (ctdsl.model.search.Search), in the order written
    targets: tuple = ()  # model.targets.Target, one per value and scheme of each `target` statement
    whole: frozenset = frozenset()  # params a count is set to directly (replicas = R): whole numbers only
    bounds: tuple[CheckedBound, ...] = ()  # the bounds checked on expressions of params, in the order checked
    scenarios: Mapping[str, object] = field(default_factory=dict)  # model.observed.Scenario, by name
    observations: tuple = ()  # model.observed.Observation, in the order written
    fits: tuple = ()  # model.observed.Fit (at most one)
    serving: object = None  # model.serving.Serving: instances, pools, workloads, hand-offs, SLOs; None: none declared

    def __post_init__(self) -> None:
        maps = ("params", "models", "devices", "links", "pluggables", "switches", "dcs", "schemes", "variants", "replicas", "scenarios")
        freeze(self, files=tuple, wans=tuple, breakevens=tuple, searches=tuple, targets=tuple, bounds=tuple, observations=tuple, fits=tuple, **{k: frozen_map for k in maps})

    @property
    def sites(self) -> Sites:
        """The sites as declared: `dcs`, `wans` and `topology`."""
        return Sites(None, self.dcs, self.wans, self.topology, None)

    def sites_of(self, scheme: "Scheme | str") -> Sites:
        """The sites a scheme runs on: its variant's, or the declared ones."""
        s = self.schemes[scheme] if isinstance(scheme, str) else scheme
        return self.variants[s.sites] if s.sites is not None else self.sites

    def on(self, sites: Sites) -> "Spec":
        """This spec as seen from `sites`: its dcs, WAN links and topology in place of the declared ones.

        A back end that costs or simulates one scheme reads `spec.on(spec.sites_of(scheme))`
        and needs no other change.
        """
        if sites.name is None:
            return self
        return replace(self, dcs=sites.dcs, wans=sites.wans, topology=sites.topology)

    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params.values()}

    def link_of(self, edge: Edge) -> Link | None:
        """The link definition an edge inside a dc or across the WAN carries; None for a module's port."""
        return self.links.get(edge.link) if edge.kind in (LinkKind.INTRA, LinkKind.WAN) else None

    @property
    def replica(self) -> "Replica | None":
        """The replica definition the dcs hold (they shard the model alike, CT421: the first dc's); None without replicas."""
        first = next(iter(self.dcs.values()), None)
        return self.replicas.get(first.replica) if first is not None and first.replica else None

    @property
    def has_replicas(self) -> bool:
        """Whether its dcs hold model-parallel replicas (then every dc does: the checker sees to it)."""
        return any(d.replica is not None for d in self.dcs.values())

    def definition(self, name: str) -> Definition | None:
        for table in (self.models, self.devices, self.links, self.pluggables, self.switches, self.dcs, self.replicas, self.schemes):
            if name in table:
                return table[name]
        return None
