"""Collectives between groups: the data-parallel sync of dcs that hold replicas.

A replica is tp x pp x cp GPUs, each holding a shard of the model: the dense
layers split tp x pp ways (cp replicates them). GPU j of every replica owns the
same shard and syncs it with its counterparts, over its own NIC, all shards at
once (parallelism.md section 8). In a site of R replicas one shard group has
cp R members and there are tp pp groups, one per shard: the site's G = tp pp cp R
GPUs. Nothing is unrolled: the GPUs of a dc are one group node of the topology
(`east.gpu`, count G, times its sites), their NICs one group of edges (count: the
NICs), so a phase is a few flow classes, each `count` alike transfers at once,
and a count may be a param. On a group of edges the flows spread evenly: a NIC
carries count x bytes / NICs per step.

Sites: a dc may stand for `sites` alike sites (a param may set it), each with its
own R replicas, one switch each; the WAN from the dc to itself joins each site to
the next. The sites form one ring, dc after dc in the order written and the sites
of one dc in a row; K, the number of sites, is the sum of every dc's sites, an
expression where a param sets one. The flows from a dc to the next site are two
classes: to the next site of the same dc (over its own WAN, `next_site`; all but
its last site, or every site when it is the only dc: `ring_wans`) and, from its
last site, to the next dc. Nothing is unrolled per site either.

Phases (s the shard's payload, n_d the members of a shard group in a site of dc d,
K sites; the members of a ring are replicas, so every hop crosses the NICs and the
scale-out fabric):

- hier_allreduce: reduce-scatter in each site (n_d - 1 steps of s/n_d); all-reduce
  of each slice across the sites (2(K - 1) steps of s/(n_d K), GPU j of a site in a
  ring with GPU j of the others, every GPU of a site at once over the WAN);
  all-gather in each site (n_d - 1 steps of s/n_d);
- hier_allgather: gather in each site (n_d - 1 steps of s); exchange across sites
  (K - 1 steps of s); distribute in each site (n_d - 1 steps of (K - 1) s);
- ring_allreduce, allgather: one ring over the N = sum K_d n_d members of each
  shard group (2(N - 1) steps of s/N, or N - 1 of s), site after site, so that
  each group crosses the WAN once per site;
- innet_sum: every GPU sends its shard up to its site's switch; the switches
  all-reduce the sums of all shards (the whole payload c) across the sites
  (2(K - 1) steps of c / K); down to the GPUs (s, or 2 s with loopback).

Uneven pipeline stages (`first_stage_layers`, `last_stage_layers`): s is the
most-loaded stage's shard, which binds every GPU's own links (its NIC) and so
every phase's time; a link all the GPUs share (the WAN) and the energy of their
bytes take the exact sum over the stages: each flow carries the GPUs' mean shard
over the most-loaded's (`Shard.scale`, `Transfer.scale`; 126/128 for Llama 3
405B's 7 + 14 x 8 + 7 layers).

Unequal sites: where the dcs' n_d differ, the in-dc phases run side by side, each
dc its own number of steps, and the phase takes as long as the slowest site (a
max whose arguments are named after the dcs, so that the tables say which binds).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import Collective
from ctdsl.model import payload as PL
from ctdsl.model.entities import Model
from ctdsl.model.graph import gpus_id, next_site, replica_counts, ring_wans, several_sites, switch_id
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import node_groups as NG
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr, emax
from ctdsl.symbolic.routing import Edge, Phase


@dataclass(frozen=True)
class Shard:
    """One kind of shard every GPU holds and syncs: bytes per GPU and its groups' members per site."""

    name: str  # "" for the dense layers
    payload: DimExpr  # bytes the most-loaded GPU originates per sync (its shard's payload)
    up: DimExpr  # what it sends up to a switch (innet_sum)
    members: dict[str, DimExpr]  # dc -> members of one shard group in one of its sites
    groups: DimExpr  # shard groups (distinct shards) in every site
    whole: DimExpr  # the payload of all the shards together (what the switches sum)
    scale: DimExpr = D.one()  # the GPUs' mean shard over the most-loaded's: below 1 with uneven stages
    per_node: dict[str, DimExpr] | None = None  # dc -> members of one shard group in one node (collectives.py); None: 1


def dense_shard(ctx: Context, payload: DimExpr, up: DimExpr, fraction: DimExpr, mean: DimExpr) -> Shard:
    """The dense layers' shard: `fraction` of the payload on the most-loaded GPU, `mean` on the
    average one (both 1 / (tp x pp) for even stages), synced by cp x R members in each site;
    tp x pp shard groups."""
    spec = ctx.spec
    members, groups = {}, None
    for name, dc in spec.dcs.items():
        rep = spec.replicas[dc.replica]
        groups = ctx.q(rep.tp, U.ONE) * ctx.q(rep.pp, U.ONE) if groups is None else groups
        members[name] = ctx.q(rep.cp, U.ONE) * ctx.q(dc.replicas, U.ONE)
    # Megatron's data-parallel group (with CP inside it): members tp ranks apart
    per_node = {name: NG.per_node(ctx, name, members[name], ctx.q(spec.replicas[dc.replica].tp, U.ONE)) for name, dc in spec.dcs.items()}
    return Shard("", payload * fraction, up * fraction, members, groups, payload, mean / fraction, per_node)


def shards(ctx: Context, model: Model, payload: DimExpr, up: DimExpr, fraction: DimExpr | None = None) -> list[Shard]:
    """The shards every GPU syncs: the dense layers, and a MoE model's experts apart.

    Experts (parallelism.md section 1.3, Megatron's parallel folding, expert tensor
    parallelism 1): a GPU holds E / ep of each of its stage's MoE layers, (L_moe / pp)
    (E / ep) m d f_e parameters, shared by the tp cp R / ep GPUs of a site that hold the
    same experts, in pp ep shard groups. The payload divides between the two in
    proportion to their parameters.
    """
    A = ctx.formulas
    fraction = C.shard(ctx, model) if fraction is None else fraction  # the most-loaded GPU's part
    mean = C.mean_shard(ctx, model)
    experts = PL.expert_layer_params(model, A) if PL.is_moe(model) else None
    if experts is None:
        return [dense_shard(ctx, payload, up, fraction, mean)]
    total = A.get(model, "params")
    share = PL.moe_layers(model, A) * experts / total  # the experts' part of the parameters
    dense = dense_shard(ctx, payload * (1 - share), up * (1 - share), fraction, mean)
    spec = ctx.spec
    members, groups = {}, None
    for name, dc in spec.dcs.items():
        rep = spec.replicas[dc.replica]
        tp, pp, cp, ep = (ctx.q(getattr(rep, k), U.ONE) for k in ("tp", "pp", "cp", "ep"))
        groups = pp * ep if groups is None else groups
        members[name] = tp * cp * ctx.q(dc.replicas, U.ONE) / ep
    # the experts' data-parallel group: members ep ranks apart (Megatron's expert order, etp = 1)
    per_node = {name: NG.per_node(ctx, name, members[name], ctx.q(spec.replicas[dc.replica].ep, U.ONE)) for name, dc in spec.dcs.items()}
    expert = Shard("experts", payload * share / groups, up * share / groups, members, groups, payload * share, per_node=per_node)
    return [dense, expert]


class GroupPlan:
    """The phases of one collective over the dcs' groups of GPUs, site after site in a ring.

    K, the number of sites, is the sum of every dc's `sites` (1 where it gives none): a
    whole number while no dc counts its sites, else an expression in the params.
    """

    def __init__(self, ctx: Context):
        self.ctx, self.router, self.spec = ctx, ctx.router, ctx.spec
        self.dcs = list(self.spec.dcs)
        self.several = {d: several_sites(dc) for d, dc in self.spec.dcs.items()}
        counted = any(dc.sites is not None for dc in self.spec.dcs.values())
        self.K = D.total([C.site_count(ctx, d) for d in self.dcs], U.ONE) if counted else len(self.dcs)
        self.crossing = len(self.dcs) > 1 or any(self.several.values())  # whether there is a next site

    def gpus(self, dc: str) -> DimExpr:
        """The GPUs of a dc, in all its sites."""
        return self.ctx.q(self.ctx.topology.node(gpus_id(dc)).count, U.ONE)

    def site_gpus(self, dc: str) -> DimExpr:
        """The GPUs of one site of a dc."""
        return self.ctx.q(replica_counts(self.spec, dc, site=True)[0], U.ONE)

    def plan(self, collective: Collective, shard: Shard, loopback: bool) -> list[Phase]:
        tag = f" ({shard.name})" if shard.name else ""
        s, n, K, x = shard.payload, shard.members, self.K, shard.scale
        phases: list[Phase | None] = []
        if collective == "hier_allreduce":
            phases.append(self.in_dc("reduce-scatter in each dc" + tag, n, lambda d: s / n[d], x, shard.per_node))
            phases.append(self.across("all-reduce of each slice across dcs" + tag, 2 * (K - 1), lambda d: s / (n[d] * K), x))
            phases.append(self.in_dc("all-gather in each dc" + tag, n, lambda d: s / n[d], x, shard.per_node))
        elif collective == "hier_allgather":
            phases.append(self.in_dc("gather in each dc" + tag, n, lambda d: s, x, shard.per_node))
            phases.append(self.across("exchange across dcs" + tag, K - 1, lambda d: s, x))
            if self.crossing:
                phases.append(self.in_dc("distribute in each dc" + tag, n, lambda d: (K - 1) * s, x, shard.per_node))
        elif collective in ("ring_allreduce", "allgather"):
            total = D.total([C.site_count(self.ctx, d) * n[d] for d in self.dcs], U.ONE)
            if collective == "ring_allreduce":
                phases.append(self.ring("ring all-reduce over all replicas" + tag, 2 * (total - 1), s / total, shard.groups, x, shard.per_node))
            else:
                phases.append(self.ring("ring all-gather over all replicas" + tag, total - 1, s, shard.groups, x, shard.per_node))
        elif collective == "innet_sum":
            ups = [(gpus_id(d), switch_id(self.spec, d), shard.up, self.gpus(d), x) for d in self.dcs]
            phases.append(self.router.phase("up to the switch" + tag, 1, ups))
            sums = shard.whole / K
            sw = lambda d: switch_id(self.spec, d)  # noqa: E731
            ring = [f for i in range(len(self.dcs)) for f in self.onward(i, sw, sums, D.one(), D.one())]
            phases.append(self.router.phase("all-reduce of the sums across dcs" + tag, 2 * (K - 1), ring) if self.crossing else None)
            down = s * (2 if loopback else 1)
            downs = [(switch_id(self.spec, d), gpus_id(d), down, self.gpus(d), x) for d in self.dcs]
            phases.append(self.router.phase("down to the GPUs" + tag + (" (with loopback)" if loopback else ""), 1, downs))
        else:  # pragma: no cover
            raise ValueError(collective)
        return [p for p in phases if p is not None]

    # ---- phases ----------------------------------------------------------------------

    def onward(self, i: int, node, nbytes: DimExpr, per_site: DimExpr, scale: DimExpr) -> list[tuple]:
        """The flows from the sites of dc i to the next site of the ring, `per_site` transfers from
        each site: to the next site of the dc over the WAN from it to itself (all but its last
        site, or all of them when it is the only dc), and from its last site to the next dc."""
        d = self.dcs[i]
        src = node(d)
        flows = []
        if self.several[d]:
            flows.append((src, next_site(src), nbytes, self.ctx.q(ring_wans(self.spec, d), U.ONE) * per_site, scale))
        if len(self.dcs) > 1:
            nxt = self.dcs[(i + 1) % len(self.dcs)]
            flows.append((src, node(nxt), nbytes, per_site, scale))
        return flows

    def in_dc(self, name: str, members: dict[str, DimExpr], nbytes, scale: DimExpr = D.one(), per_node: dict[str, DimExpr] | None = None) -> Phase | None:
        """Rings inside each site, n_d - 1 steps: one phase where the dcs are alike, else side by side.
        With k members of a ring in a node (`per_node`), only G / k of a dc's G GPUs send across
        the node boundary each step, spread over the NICs, and every step is at least the hop
        on the scale-up link (node_groups.py)."""
        k = {d: (per_node or {}).get(d, D.one()) for d in self.dcs}
        flows = {d: (gpus_id(d), gpus_id(d), nbytes(d), self.gpus(d), scale, D.one() / k[d]) for d in self.dcs}
        if len({members[d] for d in self.dcs}) == 1 and len(set(k.values())) == 1:
            phase = self.router.phase(name, members[self.dcs[0]] - 1, list(flows.values()))
            return NG.floor(self.ctx, self.dcs[0], phase, nbytes(self.dcs[0]), k[self.dcs[0]])
        parts = [NG.floor(self.ctx, d, self.router.phase(f"{name}: {d}", members[d] - 1, [flows[d]]), nbytes(d), k[d]) for d in self.dcs]
        return concurrent(name, [p for p in parts if p is not None])

    def across(self, name: str, steps, nbytes, scale: DimExpr = D.one()) -> Phase | None:
        """GPU j of each site in a ring with GPU j of the others: every GPU of a site at once."""
        if not self.crossing:
            return None
        flows = [f for i, d in enumerate(self.dcs) for f in self.onward(i, gpus_id, nbytes(d), self.site_gpus(d), scale)]
        return self.router.phase(name, steps, flows)

    def ring(self, name: str, steps: DimExpr, nbytes: DimExpr, groups: DimExpr, scale: DimExpr, per_node: dict[str, DimExpr] | None = None) -> Phase | None:
        """One ring per shard group over its members in every site, site after site (in one site,
        node-aware as `in_dc`)."""
        if not self.crossing:
            d = self.dcs[0]
            k = (per_node or {}).get(d, D.one())
            phase = self.router.phase(name, steps, [(gpus_id(d), gpus_id(d), nbytes, self.gpus(d), scale, D.one() / k)])
            return NG.floor(self.ctx, d, phase, nbytes, k)
        flows = []
        for i, d in enumerate(self.dcs):
            # every member but the last of each group in each site sends to the next in its site
            inside = self.gpus(d) - C.site_count(self.ctx, d) * groups
            if inside != 0:
                flows.append((gpus_id(d), gpus_id(d), nbytes, inside, scale))
            flows += self.onward(i, gpus_id, nbytes, groups, scale)
        return self.router.phase(name, steps, flows)


def concurrent(name: str, parts: list[Phase]) -> Phase | None:
    """Phases that run side by side (one per dc): as long as the slowest, with the bytes of all."""
    if not parts:
        return None
    if len(parts) == 1:
        return replace(parts[0], name=name)
    # one step that stands for each part's steps: a transfer carries its bytes over all of them
    transfers = [replace(t, nbytes=p.steps * t.nbytes) for p in parts for t in p.transfers]
    tables: dict[str, dict[Edge, DimExpr]] = {"loads": {}, "charged": {}}
    waits: dict[Edge, DimExpr] = {}
    bottlenecks: dict[sp.Expr, str] = {}
    route_latency: list[DimExpr] = []
    for p in parts:
        for key in ("loads", "charged"):
            mine = tables[key]
            for e, b in getattr(p, key).items():
                mine[e] = mine.get(e, D.zero(U.DATA)) + p.steps * b
        waits.update(p.waits)
        bottlenecks.update(p.bottlenecks)
        route_latency.extend(p.route_latency)
    time = emax(*[p.time for p in parts])
    for p in parts:
        if isinstance(p.time.e, sp.Basic):
            bottlenecks.setdefault(p.time.e, f"{p.name} (the slowest site binds)")
    return Phase(
        name,
        1,
        transfers,
        tables["loads"],
        step_time=time,
        time=time,
        latency=emax(*[p.steps * p.latency for p in parts]),
        bottlenecks=bottlenecks,
        route_latency=route_latency,
        waits=waits,
        free_step_time=emax(*[p.steps * p.free_step_time for p in parts]),
        charged=tables["charged"],
    )
