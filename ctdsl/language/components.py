"""The components of a step: their keys, how each is charged, its display name, and which binds.

A scheme's step is a ledger of terms (`ctdsl.symbolic.ledger`), each identified by a
`ComponentId`: a `ComponentKey` and, for the keys that come in several (a phase of a
sync, the queueing on a set of links, a sync's exposed part), a qualifier naming which
one (the phase's name, the links' names, the sync's name). Keys, never display names,
identify components: the solver, the results, the JSON, the sweeps, the simulation and
every report read them; a display name (`ComponentId.label`) is made here, once, for
the renderers.

Every key says, once, what a reader needs to fold it with the others:

- its side (`Side`): the compute side of the step (the inner step and the stragglers'
  wait) or the sync side (transform, syncs, queueing, overhead): what `overlap = true`
  sets against each other;
- its group (`Group`): the column of the step table and the band of the step plot it
  is summed into;
- whether it is qualified.

How a term enters the step is its `Charge`: every step (`STEP`), once per sync period
of H steps (`PERIOD`: the terms charged per sync share one quotient, (...) / H), or
`WITHIN` other terms' charge (the queueing waits, which are part of the phases that
cross the loaded links and are shown apart). The composition rule itself is in
`ctdsl.symbolic.ledger` (docs/architecture.md, "The ledger").

The binding rule: without overlap the step is the sum of its components, and the
largest binds (compute when all are zero). With overlap the step is
max(compute side, sync side): the larger side binds, and within it its largest
component. Ties go to the first component in the scheme's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum


class ComponentKey(str, Enum):
    """What a term of the step is. The value is the key's name in JSON and sweeps."""

    COMPUTE = "compute"
    MEMORY_BOUND = "memory_bound"  # compute = operations: the memory-bound operations of the layers
    END_STAGES = "end_stages"  # compute = operations: what the embedding and LM head add to the slowest stage
    RECOMPUTE = "recompute"
    TENSOR_PARALLEL = "tensor_parallel"
    CONTEXT_PARALLEL = "context_parallel"
    EXPERT_PARALLEL = "expert_parallel"
    PIPELINE_BUBBLE = "pipeline_bubble"
    PIPELINE_PARALLEL = "pipeline_parallel"
    OPTIMISER = "optimiser"
    PARAMETER_GATHERS = "parameter_gathers"
    STRAGGLERS = "stragglers"
    TRANSFORM = "transform"
    SYNC_IN_SITE = "sync_in_site"  # a phase of a sync inside each site (qualifier: the phase)
    SYNC_ACROSS_SITES = "sync_across_sites"  # a phase that crosses a WAN (qualifier: the phase)
    EXPOSED_SYNC = "exposed_sync"  # what the step waits for of an overlapped sync (qualifier: the sync)
    QUEUEING = "queueing"  # waits of bursts on loaded links, queueing.py (qualifier: the links)
    OVERHEAD = "overhead"

    def __str__(self) -> str:
        return self.value


class Side(str, Enum):
    """Which side of max(compute side, sync side) a term is on when a scheme overlaps them."""

    COMPUTE = "compute"
    SYNC = "sync"


class Charge(str, Enum):
    """How a term enters the step's expression (the composition rule, symbolic/ledger.py)."""

    STEP = "step"  # its value, every step
    PERIOD = "period"  # its amount once per sync period H, in the one quotient (sum of amounts) / H
    WITHIN = "within"  # a part of other terms' charge, shown apart, not added again


class Group(str, Enum):
    """The column of the step table (and band of the step plot) a component is summed into."""

    COMPUTE = "compute"
    MODEL_PARALLEL = "model_parallel"
    TRANSFORM = "transform"
    SYNC_IN_SITE = "sync_in_site"
    SYNC_ACROSS_SITES = "sync_across_sites"
    EXPOSED_SYNC = "exposed_sync"
    QUEUEING = "queueing"
    STRAGGLERS = "stragglers"
    OVERHEAD = "overhead"

    @property
    def label(self) -> str:
        return GROUP_LABELS[self]


class Place(str, Enum):
    """Where a term is charged: the part of the system whose time it is."""

    GPU = "gpu"  # the workers' GPUs (compute, a transform on the GPU, the optimiser)
    PIPELINE = "pipeline"  # one GPU of the most-loaded pipeline stage, per micro-batch
    LINK = "link"  # model-parallel traffic on a link, or the background queue of loaded links
    PHASE = "phase"  # a phase of a sync, over the links its transfers cross
    SYNC = "sync"  # a whole sync, its exposed part
    MODULE = "module"  # a pluggable module's pipelined stages
    SWITCH = "switch"  # a switch's ingest
    BARRIER = "barrier"  # the workers' wait for each other at a sync
    SCHEME = "scheme"  # the scheme's fixed time per sync


@dataclass(frozen=True)
class KeyInfo:
    label: str  # the display name; for a qualified key, a template with {q}
    side: Side
    group: Group
    qualified: bool = False


K = ComponentKey
KEYS: dict[ComponentKey, KeyInfo] = {
    K.COMPUTE: KeyInfo("compute", Side.COMPUTE, Group.COMPUTE),
    K.MEMORY_BOUND: KeyInfo("memory-bound operations", Side.COMPUTE, Group.COMPUTE),
    K.END_STAGES: KeyInfo("embedding and LM head", Side.COMPUTE, Group.COMPUTE),
    K.RECOMPUTE: KeyInfo("recompute", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.TENSOR_PARALLEL: KeyInfo("tensor parallel", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.CONTEXT_PARALLEL: KeyInfo("context parallel", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.EXPERT_PARALLEL: KeyInfo("expert parallel", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.PIPELINE_BUBBLE: KeyInfo("pipeline bubble", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.PIPELINE_PARALLEL: KeyInfo("pipeline parallel", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.OPTIMISER: KeyInfo("optimiser", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.PARAMETER_GATHERS: KeyInfo("parameter gathers", Side.COMPUTE, Group.MODEL_PARALLEL),
    K.STRAGGLERS: KeyInfo("stragglers", Side.COMPUTE, Group.STRAGGLERS),
    K.TRANSFORM: KeyInfo("transform", Side.SYNC, Group.TRANSFORM),
    K.SYNC_IN_SITE: KeyInfo("{q}", Side.SYNC, Group.SYNC_IN_SITE, True),
    K.SYNC_ACROSS_SITES: KeyInfo("{q}", Side.SYNC, Group.SYNC_ACROSS_SITES, True),
    K.EXPOSED_SYNC: KeyInfo("{q} (exposed)", Side.SYNC, Group.EXPOSED_SYNC, True),
    K.QUEUEING: KeyInfo("queueing on {q}", Side.SYNC, Group.QUEUEING, True),
    K.OVERHEAD: KeyInfo("overhead", Side.SYNC, Group.OVERHEAD),
}

GROUP_LABELS = {
    Group.COMPUTE: "compute",
    Group.MODEL_PARALLEL: "model parallel",
    Group.TRANSFORM: "transform",
    Group.SYNC_IN_SITE: "sync in dc",
    Group.SYNC_ACROSS_SITES: "sync across dcs",
    Group.EXPOSED_SYNC: "sync exposed",
    Group.QUEUEING: "queueing",
    Group.STRAGGLERS: "stragglers",
    Group.OVERHEAD: "overhead",
}

# the components of a replica's inner step (symbolic/timeline.py), in the order the tables show them
INNER = (
    K.COMPUTE, K.MEMORY_BOUND, K.END_STAGES, K.RECOMPUTE, K.TENSOR_PARALLEL, K.CONTEXT_PARALLEL, K.EXPERT_PARALLEL,
    K.PIPELINE_BUBBLE, K.PIPELINE_PARALLEL, K.OPTIMISER, K.PARAMETER_GATHERS,
)  # fmt: skip
MODEL_PARALLEL = INNER[3:]  # all of the inner step but the compute itself (and its memory-bound and end-stage parts)
TRAFFIC = (K.TENSOR_PARALLEL, K.CONTEXT_PARALLEL, K.EXPERT_PARALLEL, K.PIPELINE_PARALLEL)  # model-parallel traffic kinds


@dataclass(frozen=True, order=True)
class ComponentId:
    """One component of a step: its key and, for a qualified key, which one."""

    key: ComponentKey
    qualifier: str = ""

    def __post_init__(self) -> None:
        if KEYS[self.key].qualified != bool(self.qualifier):
            raise ValueError(f"component {self.key.value} {'needs' if KEYS[self.key].qualified else 'takes no'} qualifier")

    @property
    def id(self) -> str:
        """Its name in JSON and sweeps: `compute`, `queueing:wan`, `sync_in_site:reduce-scatter in each dc`."""
        return f"{self.key.value}:{self.qualifier}" if self.qualifier else self.key.value

    @classmethod
    def parse(cls, text: str) -> "ComponentId":
        """The inverse of `id`."""
        key, _, qualifier = text.partition(":")
        return cls(ComponentKey(key), qualifier)

    @property
    def label(self) -> str:
        """Its display name: `compute`, `queueing on wan`, `sync (exposed)`, a phase's name."""
        return KEYS[self.key].label.format(q=self.qualifier)

    @property
    def side(self) -> Side:
        return KEYS[self.key].side

    @property
    def group(self) -> Group:
        return KEYS[self.key].group

    def __str__(self) -> str:
        return self.id


COMPUTE = ComponentId(K.COMPUTE)


def of(key: ComponentKey, qualifier: str = "") -> ComponentId:
    return ComponentId(key, qualifier)


def sides(components: Iterable[ComponentId]) -> tuple[list[ComponentId], list[ComponentId]]:
    """(the compute side, the sync side) of a step's components, each in the scheme's order."""
    ids = list(components)
    return [c for c in ids if c.side is Side.COMPUTE], [c for c in ids if c.side is Side.SYNC]


def binding(values: Mapping[ComponentId, float], overlap: bool) -> ComponentId:
    """The component that binds the step (the module docstring's rule)."""
    names = list(values)
    worked, others = sides(names)
    if overlap and others and worked:
        side = worked if sum(values[k] for k in worked) >= sum(values[k] for k in others) else others
        return max(side, key=lambda k: values[k])
    if overlap and others and not worked:
        return max(others, key=lambda k: values[k])
    total = sum(values.values())
    return max(names, key=lambda k: values[k]) if total else COMPUTE


__all__ = [
    "ComponentKey", "ComponentId", "Side", "Charge", "Group", "Place", "KEYS", "INNER", "MODEL_PARALLEL", "TRAFFIC",
    "COMPUTE", "of", "sides", "binding",
]  # fmt: skip
