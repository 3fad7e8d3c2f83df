"""The closed sets of words a spec chooses from.

Each is a `StrEnum`: a member is its word (`Payload.BAND == "band"`), so it
prints, hashes and serialises as the word, and a mistyped word in code fails at
import rather than comparing unequal.
"""

from __future__ import annotations

from enum import StrEnum


class Payload(StrEnum):
    DENSE = "dense"
    QUANTISE = "quantise"
    TOPK = "topk"
    DEMO = "demo"
    BAND = "band"


class Collective(StrEnum):
    RING_ALLREDUCE = "ring_allreduce"
    HIER_ALLREDUCE = "hier_allreduce"
    ALLGATHER = "allgather"
    HIER_ALLGATHER = "hier_allgather"
    INNET_SUM = "innet_sum"


class PlacementKind(StrEnum):
    """Where a scheme's transform runs."""

    GPU = "gpu"
    PLUGGABLE = "pluggable"
    SWITCH = "switch"


class JitterKind(StrEnum):
    """A worker's extra compute time per step: jitter x Exp(1), x U(0, 1) or x LogNormal(0, sigma^2)."""

    EXPONENTIAL = "exponential"
    UNIFORM = "uniform"
    LOGNORMAL = "lognormal"


class Counted(StrEnum):
    """How a link's latency and energy per bit are charged along a route (docs/cost-model.md)."""

    TRANSFER = "transfer"  # once per segment: a run of consecutive edges of the link, end to end
    HOP = "hop"  # once per edge crossed
    ROUTE = "route"  # the route's end-to-end figure: once per transfer that crosses the link, in place of every link's on its route


class Sharing(StrEnum):
    """How a loaded link shares its capacity between the background's transfers and the sync's (docs/cost-model.md, "Queueing of a burst")."""

    FAIR = "fair"  # processor sharing: every active flow gets an equal share at once, as TCP flows share a bottleneck
    FIFO = "fifo"  # one whole transfer at a time, first come, first served (M/D/1)


class ModuleLatency(StrEnum):
    """How a pluggable module's latency is charged (docs/cost-model.md, "Conventions a paper states")."""

    ONCE = "once"  # once, in the module's own time (its stream's pipeline fill); a port crossing adds none
    CROSSING = "crossing"  # at every crossing of a module's port too


class Fabric(StrEnum):
    """A dc's scale-out fabric between the replicas' NICs."""

    RAIL = "rail"  # rail-optimised: GPU j of every node on rail j, data-parallel flows never cross a spine
    LEAF_SPINE = "leaf_spine"  # leaves under spines, the spine oversubscribed by `oversubscription`


class Recompute(StrEnum):
    """Activation recomputation (Korthikanti et al., arXiv:2205.05198)."""

    NONE = "none"
    SELECTIVE = "selective"  # the attention scores and softmax are recomputed, not stored
    FULL = "full"  # only each layer's input is stored


class ComputeModel(StrEnum):
    """How a replica's compute is timed (docs/cost-model.md, "Compute per operation")."""

    BLOCK = "block"  # the step's FLOPs / (peak x efficiency), one block
    OPERATIONS = "operations"  # each operation of a layer by its roofline, the GEMMs at a size-dependent efficiency


class Precision(StrEnum):
    """The arithmetic an operation class runs in, and so the peak it is timed against."""

    BF16 = "bf16"  # 16-bit (BF16 or FP16): the device's peak
    FP8 = "fp8"  # FP8: the device's peak_fp8


class SimLatency(StrEnum):
    """Whether a transfer holds a simulated link during its latency (docs/simulation.md)."""

    PROPAGATE = "propagate"  # latency is propagation: the link is held for bytes / bandwidth only
    HOLD = "hold"  # store-and-forward, request/response: held for latency + bytes / bandwidth


class Overlap(StrEnum):
    """What a scheme's sync overlaps (docs/cost-model.md, "The training step")."""

    FALSE = "false"  # the sync follows the step's compute
    TRUE = "true"  # the whole sync runs alongside the next H steps of compute: max(compute, sync / H)
    BACKWARD = "backward"  # bucket by bucket with the backward pass of the step's last micro-batch


class InnerSync(StrEnum):
    """Who syncs every inner step of a scheme with a sync period H > 1 (DiLoCo)."""

    NONE = "none"  # every replica (worker) is a DiLoCo worker: the whole collective every H steps
    DC = "dc"  # each dc's replicas are one data-parallel group: a dense sync inside the dc every step


class Readiness(StrEnum):
    """When a Streaming DiLoCo fragment's outer gradient is ready to sync (symbolic/readiness.py)."""

    STEP = "step"  # at the end of the step's compute: the worst case
    LAYER = "layer"  # when the backward pass has passed the fragment's layers


class FragmentOrder(StrEnum):
    """Which layers a Streaming DiLoCo fragment holds (symbolic/readiness.py)."""

    STRIDED = "strided"  # fragment j: layers j, j + F, j + 2F, ...
    SEQUENTIAL = "sequential"  # fragment j: layers (j - 1) n + 1 .. j n


class Algorithm(StrEnum):
    """How a model-parallel group's all-reduce runs (docs/cost-model.md, "Collectives over nodes")."""

    AUTO = "auto"  # the fastest of those the links offer, at the params' defaults (NCCL's tuner: the least estimated time)
    RING = "ring"  # a ring; across nodes the boundary over the group's share of the node's NICs
    TREE = "tree"  # chains in a node, a binary tree across nodes (NCCL's tree)
    IN_NETWORK = "in_network"  # the scale-up switch reduces (NVLink SHARP); a ring where the link does not offer it


class TransformCharge(StrEnum):
    """How a transform on the GPU is charged: by the roofline, or by its FLOPs alone."""

    ROOFLINE = "roofline"  # max(FLOPs / (peak eff), bytes / mem_bw)
    FLOPS = "flops"  # FLOPs / (peak eff), the memory traffic free (fused into a kernel that streams it anyway)


class Operation(StrEnum):
    """What a transform needs, and what a module or switch offers."""

    FFT = "fft"
    DCT = "dct"
    NTT = "ntt"
    MAC = "mac"
    ADD = "add"
    MUL = "mul"
    MODULAR = "modular"
    COMPARE = "compare"


class LinkKind(StrEnum):
    """An edge of the topology graph: a worker's port to its module, a link inside a dc, a WAN link."""

    PORT = "port"
    INTRA = "intra"
    WAN = "wan"


class Spacing(StrEnum):
    LIN = "lin"
    LOG = "log"


class Observable(StrEnum):
    """An output of a solve that a spec may hold against a measurement (`observe`, docs/language.md)."""

    STEP_TIME = "step_time"  # the step time
    TIME_TO_TARGET = "time_to_target"  # steps x the step time
    MFU = "mfu"  # model FLOPs utilisation
    UTILISATION = "utilisation"  # compute utilisation: the inner step over the step
