"""Collectives of a group of GPUs laid out over nodes, run as NCCL runs them (issue 27 item 1).

**Layout.** The GPUs of a dc are numbered in Megatron's order (`megatron/core/parallel_state.py`,
`order = "tp-cp-ep-dp-pp"`; the older Megatron and Megatron-DeepSpeed build the same groups):
tensor-parallel ranks are consecutive, then context, then data-parallel, then pipeline
stages; a node (a scale-up domain, `scaleup`, default `gpus_per_node`) holds consecutive
ranks. A group of n members whose consecutive members are `stride` ranks apart has

    k = min(n, max(1, domain / stride))   members in each domain, over n / k domains

(TP: stride 1; CP: tp; DP, with CP inside it: tp; the experts' data-parallel group: ep;
EP: 1; PP neighbours: tp cp dp). k is a layout, a whole number: it is taken at the params'
defaults (a note says so where a degree is a param).

**Links.** Per GPU: the scale-up link W_up, alpha_up and the GPU's share of its node's NICs
W_out, alpha_out, each bandwidth times the link's `efficiency` (the achieved fraction of
line rate). A group inside one domain runs on W_up. A group that spans domains runs as
NCCL's rings do (`src/graph/search.cc`: each channel a ring NET -> the node's GPUs in
NVLink order -> NET, the channels on different NICs): the intra-domain hops on the
scale-up link, the domain boundary crossed once a direction per channel, the channels
spread over the NICs of the group's members, so the group's boundary bandwidth is
k W_out, the node's NICs in aggregate where the whole node is one group (TP 16 on 8-GPU
nodes), one NIC's where each node holds one member (a DP ring with TP 8). Its bus
bandwidth is

    W_bus = W_up                 inside one domain
          = min(W_up, k W_out)   across domains, k > 1
          = W_out                across domains, k = 1

**Algorithms** (alpha-beta per step; S the bytes each member holds):

- ring all-reduce: 2 (n - 1) alpha + 2 (n - 1)/n S / W_bus; reduce-scatter and all-gather
  half of it (n - 1 steps); alpha the slowest hop's latency (alpha_out across domains)
  (Thakur, Rabenseifner and Gropp 2005, section 5.3; the bus factors of nccl-tests
  `doc/PERFORMANCE.md`);
- tree all-reduce (NCCL's chains inside a node, a double binary tree across nodes):
  2 ((k - 1) alpha_up + ceil(log2(n / k)) alpha_out) + 2 S / W_bus (NCCL
  `src/graph/tuning.cc`: the tree's latency, and its algorithm bandwidth half its bus
  bandwidth);
- in-network all-reduce (NVLink SHARP), inside one domain whose link offers it
  (`in_network = true`): 2 alpha_up + S / W_up (each member sends S up and receives the
  reduced S: one pass each way);
- all-to-all (pairwise exchange): (n - 1) alpha + max((k - 1)/n S / W_up, (n - k)/n S / W_out)
  (every member's own NIC share carries what leaves its domain; Thakur 2005);
- point-to-point: alpha + S / W, on W_up inside a domain, else W_out.

`algorithm = auto` (the default) takes the one with the least time at the params'
defaults, as NCCL's tuner takes the least estimated time (`src/enqueue.cc`,
`getAlgoInfo`); a replica may state `ring`, `tree` or `in_network`. NCCL's protocols
(LL, LL128, Simple) and their bandwidth caps are not modelled: a link's `efficiency`
stands for what the large messages of training reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import Algorithm
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.convert import NumericError, value
from ctdsl.symbolic.dimensioned import DimExpr


@dataclass(frozen=True)
class LinkClass:
    """The link one kind of traffic runs on, per GPU."""

    link: str  # the link definition
    role: str  # scale-up | scale-out
    bandwidth: DimExpr  # B/s per GPU, one direction, at the link's efficiency
    latency: DimExpr  # s per message
    energy_per_byte: DimExpr  # J/B
    in_network: bool = False  # its switch reduces in the network


@dataclass(frozen=True)
class Layout:
    """A group of n members laid out over scale-up domains: k in each, n / k domains."""

    n: DimExpr
    k: int  # members in one domain (at the params' defaults)
    spans: bool  # the group spans more than one domain
    count: int = 1  # domains it spans, at the params' defaults

    @property
    def domains(self) -> DimExpr:
        return self.n / self.k


def layout(n: DimExpr, stride: DimExpr, domain: DimExpr, number) -> Layout:
    """Megatron's layout of a group of n members `stride` ranks apart in domains of `domain`
    consecutive ranks; `number` evaluates a count at the params' defaults."""
    nv, sv, dv = number(n), number(stride), number(domain)
    k = int(max(1, min(nv, dv // sv if sv < dv else 1)))
    return Layout(n, k, nv > k, max(1, math.ceil(nv / k)))


@dataclass(frozen=True)
class Fabric:
    """The two links a group of one dc's replica may use, per GPU."""

    up: LinkClass
    out: LinkClass

    def bus(self, lay: Layout) -> tuple[DimExpr, DimExpr, LinkClass]:
        """W_bus, the slowest hop's latency and the link that binds (module docstring)."""
        if not lay.spans:
            return self.up.bandwidth, self.up.latency, self.up
        if lay.k == 1:
            return self.out.bandwidth, self.out.latency, self.out
        return D.emin(self.up.bandwidth, lay.k * self.out.bandwidth), self.out.latency, self.out


@dataclass(frozen=True)
class Timed:
    """A collective's time per call, the algorithm that ran it and the link it is reported on."""

    time: DimExpr
    algorithm: str
    link: LinkClass


def ring(fab: Fabric, lay: Layout, nbytes: DimExpr, factor: int) -> Timed:
    """A ring of factor (n - 1) steps (2: all-reduce; 1: reduce-scatter or all-gather)."""
    w, alpha, link = fab.bus(lay)
    n = lay.n
    return Timed(factor * (n - 1) * alpha + factor * (n - 1) / n * nbytes / w, "ring", link)


def tree(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """NCCL's tree all-reduce: chains inside a domain, a binary tree across domains."""
    w, _, link = fab.bus(lay)
    hops = math.ceil(math.log2(lay.count)) if lay.spans else 0
    latency = 2 * ((lay.k - 1) * fab.up.latency + hops * fab.out.latency)
    return Timed(latency + 2 * nbytes / w, "tree", link)


def in_network(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed | None:
    """An in-switch all-reduce inside one domain whose link offers it; None elsewhere."""
    if lay.spans or not fab.up.in_network:
        return None
    return Timed(2 * fab.up.latency + nbytes / fab.up.bandwidth, "in_network", fab.up)


def all_reduce(fab: Fabric, lay: Layout, nbytes: DimExpr, algorithm: Algorithm, env) -> tuple[Timed, dict[str, float]]:
    """The all-reduce as `algorithm` says (auto: the least time at the defaults `env`), and
    each candidate's time at the defaults (what a note shows)."""
    candidates = {"ring": ring(fab, lay, nbytes, 2), "tree": tree(fab, lay, nbytes)}
    innet = in_network(fab, lay, nbytes)
    if innet is not None:
        candidates["in_network"] = innet
    at = {name: _seconds(t.time, env) for name, t in candidates.items()}
    if algorithm is Algorithm.AUTO:
        best = min(at, key=lambda name: (at[name], name))  # ties: by name, deterministic
        return candidates[best], at
    return candidates.get(str(algorithm), candidates["ring"]), at


def all_to_all(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """Pairwise exchange: S (n - 1)/n sent by each member, what leaves its domain over its own NIC share."""
    n = lay.n
    if not lay.spans:
        return Timed((n - 1) * fab.up.latency + (n - 1) / n * nbytes / fab.up.bandwidth, "pairwise", fab.up)
    inter = (n - lay.k) / n * nbytes / fab.out.bandwidth
    bw = inter if lay.k == 1 else D.emax((lay.k - 1) / n * nbytes / fab.up.bandwidth, inter)
    return Timed((n - 1) * fab.out.latency + bw, "pairwise", fab.out)


def p2p(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """One transfer between neighbours: on the scale-up link when the group fits a domain."""
    link = fab.out if lay.spans else fab.up
    return Timed(link.latency + nbytes / link.bandwidth, "p2p", link)


def _seconds(x: DimExpr, env) -> float:
    try:
        return value(x.e, env)
    except (NumericError, ZeroDivisionError):  # pragma: no cover - times of checked specs evaluate
        return float("inf")


def floored(phase, floor: DimExpr):
    """A phase of a data-parallel ring whose steps also cross the scale-up link: each step at least
    `floor` (the intra-domain hop), its time steps x the larger (groups.py)."""
    step = D.emax(phase.step_time, floor)
    free = D.emax(phase.free_step_time, floor)
    bottlenecks = dict(phase.bottlenecks)
    if isinstance(floor.e, sp.Basic):
        bottlenecks.setdefault(floor.e, "the scale-up link (the hops inside a node)")
    return replace(phase, step_time=step, time=phase.steps * step, free_step_time=free, bottlenecks=bottlenecks)


__all__ = ["LinkClass", "Layout", "layout", "Fabric", "Timed", "ring", "tree", "in_network", "all_reduce", "all_to_all", "p2p", "floored"]
