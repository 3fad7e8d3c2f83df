"""Data-parallel rings over nodes: how many members of a shard group share a node, and the
scale-up hop every step of such a ring also takes (collectives.py gives the layout).

A dc's data-parallel group of n members `stride` ranks apart (Megatron's order: tp for the
dense layers' group, with CP inside it; ep for the experts') has k = min(n, max(1,
domain / stride)) members in a node. Its ring crosses each node boundary once a direction,
so of a dc's G GPUs only G / k send across the NICs in a step, spread over the node's NICs
(groups.py gives the phase those flows), and the other hops run on the replica's
`scaleup_link`: each step is at least alpha_up + bytes / W_up (`floor`). With k = 1 (one
member a node: TP 8 on 8-GPU nodes) nothing changes: every hop crosses the NICs.
"""

from __future__ import annotations

from ctdsl.symbolic import collectives as CO
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.routing import Phase
from ctdsl.symbolic.traffic import ReplicaLinks


def per_node(ctx: Context, dc: str, members: DimExpr, stride: DimExpr) -> DimExpr:
    """Members of one data-parallel group of dc in one node: a whole number, or a form in the
    params where their ranges move it (collectives.py, `layout`)."""
    links = ReplicaLinks(ctx, dc, [])
    return links.layout(members, stride).k


def floor(ctx: Context, dc: str, phase: Phase | None, nbytes: DimExpr, k: DimExpr) -> Phase | None:
    """The phase with each step at least the scale-up hop, where k > 1 members share a node."""
    shared = CO.above(k, 1)
    if phase is None or shared.e == 0:
        return phase
    links = ReplicaLinks(ctx, dc, [])
    up = links.scale_up
    return CO.floored(phase, up.latency + nbytes / up.bandwidth, shared)


__all__ = ["per_node", "floor"]
