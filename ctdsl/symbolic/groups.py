"""Collectives between groups: the data-parallel sync of dcs that hold replicas.

A replica is tp x pp x cp GPUs, each holding a shard of the model: the dense
layers split tp x pp ways (cp replicates them). GPU j of every replica owns the
same shard and syncs it with its counterparts, over its own NIC, all shards at
once (parallelism.md section 8). In a dc of R replicas one shard group has
cp R members and there are tp pp groups, one per shard: the dc's G = tp pp cp R
GPUs. Nothing is unrolled: the GPUs of a dc are one group node of the topology
(`east.gpu`, count G) and their NICs one group of edges (count: the NICs), so a
phase is a few flow classes, each `count` alike transfers at once, and a count
may be a param. On a group of edges the flows spread evenly: a NIC carries
count x bytes / NICs per step.

Phases (s the shard's payload, n_d the members of a shard group in dc d, K dcs;
the members of a ring are replicas, so every hop crosses the NICs and the
scale-out fabric):

- hier_allreduce: reduce-scatter in each dc (n_d - 1 steps of s/n_d); all-reduce
  of each slice across dcs (2(K - 1) steps of s/(n_d K), GPU j of dc a in a ring
  with GPU j of the others, every GPU of a dc at once over the WAN); all-gather
  in each dc (n_d - 1 steps of s/n_d);
- hier_allgather: gather in each dc (n_d - 1 steps of s); exchange across dcs
  (K - 1 steps of s); distribute in each dc (n_d - 1 steps of (K - 1) s);
- ring_allreduce, allgather: one ring over the N = sum n_d members of each shard
  group (2(N - 1) steps of s/N, or N - 1 of s), dc after dc, so that each group
  crosses the WAN once per dc;
- innet_sum: every GPU sends its shard up to its dc's switch; the switches
  all-reduce the sums of all shards (the whole payload c) across dcs (2(K - 1)
  steps of c / K); down to the GPUs (s, or 2 s with loopback).

Uneven pipeline stages (`first_stage_layers`, `last_stage_layers`): s is the
most-loaded stage's shard, which binds every phase.

Unequal sites: where the dcs' n_d differ, the in-dc phases run side by side, each
dc its own number of steps, and the phase takes as long as the slowest site (a
max whose arguments are named after the dcs, so that the tables say which binds).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import Collective
from ctdsl.model.graph import gpus_id, switch_id
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr, emax
from ctdsl.symbolic.routing import Phase


@dataclass(frozen=True)
class Shard:
    """One kind of shard every GPU holds and syncs: bytes per GPU and its groups' members per dc."""

    name: str  # "" for the dense layers
    payload: DimExpr  # bytes the most-loaded GPU originates per sync (its shard's payload)
    up: DimExpr  # what it sends up to a switch (innet_sum)
    members: dict[str, DimExpr]  # dc -> members of one shard group in that dc
    groups: DimExpr  # shard groups (distinct shards) in every dc
    whole: DimExpr  # the payload of all the shards together (what the switches sum)


def dense_shard(cm, payload: DimExpr, up: DimExpr, fraction: DimExpr) -> Shard:
    """The dense layers' shard: `fraction` of the payload (1 / (tp x pp) for even stages), synced by
    cp x R members in each dc; tp x pp shard groups."""
    spec = cm.spec
    members, groups = {}, None
    for name, dc in spec.dcs.items():
        rep = spec.replicas[dc.replica]
        groups = cm.q(rep.tp, U.ONE) * cm.q(rep.pp, U.ONE) if groups is None else groups
        members[name] = cm.q(rep.cp, U.ONE) * cm.q(dc.replicas, U.ONE)
    return Shard("", payload * fraction, up * fraction, members, groups, payload)


class GroupPlan:
    def __init__(self, cm):
        self.cm, self.router, self.spec = cm, cm.router, cm.spec
        self.dcs = list(self.spec.dcs)

    def gpus(self, dc: str) -> DimExpr:
        return self.cm.q(self.cm.topology.node(gpus_id(dc)).count, U.ONE)

    def plan(self, collective: Collective, shard: Shard, loopback: bool) -> list[Phase]:
        tag = f" ({shard.name})" if shard.name else ""
        s, n, K = shard.payload, shard.members, len(self.dcs)
        phases: list[Phase | None] = []
        if collective == "hier_allreduce":
            phases.append(self.in_dc("reduce-scatter in each dc" + tag, n, lambda d: s / n[d]))
            phases.append(self.across("all-reduce of each slice across dcs" + tag, 2 * (K - 1), lambda d: s / (n[d] * K)))
            phases.append(self.in_dc("all-gather in each dc" + tag, n, lambda d: s / n[d]))
        elif collective == "hier_allgather":
            phases.append(self.in_dc("gather in each dc" + tag, n, lambda d: s))
            phases.append(self.across("exchange across dcs" + tag, K - 1, lambda d: s))
            if K > 1:
                phases.append(self.in_dc("distribute in each dc" + tag, n, lambda d: (K - 1) * s))
        elif collective in ("ring_allreduce", "allgather"):
            total = D.total(list(n.values()), U.ONE)
            if collective == "ring_allreduce":
                phases.append(self.ring("ring all-reduce over all replicas" + tag, 2 * (total - 1), s / total, shard.groups))
            else:
                phases.append(self.ring("ring all-gather over all replicas" + tag, total - 1, s, shard.groups))
        elif collective == "innet_sum":
            ups = [(gpus_id(d), switch_id(self.spec, d), shard.up, self.gpus(d)) for d in self.dcs]
            phases.append(self.router.phase("up to the switch" + tag, 1, ups))
            sums = shard.whole / K
            ring = [(switch_id(self.spec, d), switch_id(self.spec, self.dcs[(i + 1) % K]), sums) for i, d in enumerate(self.dcs)]
            phases.append(self.router.phase("all-reduce of the sums across dcs" + tag, 2 * (K - 1), ring if K > 1 else []))
            down = s * (2 if loopback else 1)
            downs = [(switch_id(self.spec, d), gpus_id(d), down, self.gpus(d)) for d in self.dcs]
            phases.append(self.router.phase("down to the GPUs" + tag + (" (with loopback)" if loopback else ""), 1, downs))
        else:  # pragma: no cover
            raise ValueError(collective)
        return [p for p in phases if p is not None]

    # ---- phases ----------------------------------------------------------------------

    def in_dc(self, name: str, members: dict[str, DimExpr], nbytes) -> Phase | None:
        """Rings inside each dc, n_d - 1 steps: one phase where the dcs are alike, else side by side."""
        flows = {d: (gpus_id(d), gpus_id(d), nbytes(d), self.gpus(d)) for d in self.dcs}
        if len({members[d] for d in self.dcs}) == 1:
            return self.router.phase(name, members[self.dcs[0]] - 1, list(flows.values()))
        parts = [self.router.phase(f"{name}: {d}", members[d] - 1, [flows[d]]) for d in self.dcs]
        return concurrent(name, [p for p in parts if p is not None])

    def across(self, name: str, steps: int, nbytes) -> Phase | None:
        """GPU j of each dc in a ring with GPU j of the others: every GPU of a dc at once."""
        K = len(self.dcs)
        if K < 2:
            return None
        flows = [(gpus_id(d), gpus_id(self.dcs[(i + 1) % K]), nbytes(d), self.gpus(d)) for i, d in enumerate(self.dcs)]
        return self.router.phase(name, steps, flows)

    def ring(self, name: str, steps: DimExpr, nbytes: DimExpr, groups: DimExpr) -> Phase | None:
        """One ring per shard group over its members in every dc, dc after dc."""
        K = len(self.dcs)
        if K == 1:
            d = self.dcs[0]
            return self.router.phase(name, steps, [(gpus_id(d), gpus_id(d), nbytes, self.gpus(d))])
        flows = []
        for i, d in enumerate(self.dcs):
            inside = self.gpus(d) - groups  # every member but the last of each group sends to the next in its dc
            if inside != 0:
                flows.append((gpus_id(d), gpus_id(d), nbytes, inside))
            flows.append((gpus_id(d), gpus_id(self.dcs[(i + 1) % K]), nbytes, groups))
        return self.router.phase(name, steps, flows)


def concurrent(name: str, parts: list[Phase]) -> Phase | None:
    """Phases that run side by side (one per dc): as long as the slowest, with the bytes of all."""
    if not parts:
        return None
    if len(parts) == 1:
        p = parts[0]
        p.name = name
        return p
    # one step that stands for each part's steps: a transfer carries its bytes over all of them
    out = Phase(name, 1, [replace(t, nbytes=p.steps * t.nbytes) for p in parts for t in p.transfers])
    for p in parts:
        for key, table in (("loads", p.loads), ("charged", p.charged)):
            mine = getattr(out, key)
            for e, b in table.items():
                mine[e] = mine.get(e, D.zero(U.DATA)) + p.steps * b
        out.waits.update(p.waits)
        out.bottlenecks.update(p.bottlenecks)
        out.route_latency.extend(p.route_latency)
    times = [p.time for p in parts]
    out.time = out.step_time = emax(*times)
    out.free_step_time = emax(*[p.steps * p.free_step_time for p in parts])
    out.latency = emax(*[p.steps * p.latency for p in parts])
    for p in parts:
        if isinstance(p.time.e, sp.Basic):
            out.bottlenecks.setdefault(p.time.e, f"{p.name} (the slowest site binds)")
    return out
