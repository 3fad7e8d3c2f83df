"""Collectives as phases of transfers, routed over the topology graph.

A collective is a list of phases. A phase is a number of sequential steps that
are all alike; in each step a set of transfers runs at once. Each transfer
follows its route in the graph (`Topology.route`), so which links a phase
crosses is decided by the graph, never by a formula per named topology.

Time of one step: every transfer pays the latencies along its route (below),
plus its bytes over the narrowest share of bandwidth it meets: on each directed
edge, the bytes of all the step's transfers that cross it, over the edge's
bandwidth. A DC's WAN link carrying all its
workers' shards therefore takes their sum over its bandwidth (domain.md
section 4). The step takes as long as its slowest transfer; the phase takes
steps x that.

Latency and energy per bit along a route (docs/cost-model.md, "Latency and
energy along a route"): the route is cut into segments, each a maximal run of
consecutive edges of one link definition in one role (inside a dc, WAN, a
module's port). A link counted per transfer (`counted = transfer`, the
default: the presets' figures are end to end) pays its latency once per
segment, and its energy per bit on the transfer's bytes once per segment; a
link counted per hop pays both on every edge. A module's port edge is always
per hop: one module latency per crossing of a module. A switch's latency is
paid by every transfer that enters it: passing through, or ending there to be
summed (an in-network sum) or forwarded; a transfer leaving a switch does not
pay it again.

A link with a background load (`load`, `transfer`) queues the phase's steps: on
each loaded edge they are a burst of `steps` jobs back to back, whose waits add up
to Q(steps) (`queueing.burst_wait`; the first waits the M/D/1 mean rho S / (2 (1 -
rho)), each later one the background that came while the one before was queued),
and the phase waits the largest Q over its loaded edges (`burst.py`);
`Phase.waits` says which loaded links a phase crosses, and `Phase.queueing` what
the burst adds to one step on average.

Phases per collective (N workers; in the hierarchical ones N_dc data centres of L
workers; c is the payload, u what goes up to a switch):

- ring_allreduce:  2(N-1) steps, each worker sends c/N to the next in the ring
- hier_allreduce:  reduce-scatter in each dc (L-1 steps of c/L);
                   all-reduce of each shard across dcs (2(N_dc-1) steps of c/(L N_dc),
                   worker i of each dc in a ring with worker i of the others);
                   all-gather in each dc (L-1 steps of c/L)
- allgather:       N-1 steps, each worker forwards c to the next
- hier_allgather:  gather in each dc (L-1 steps of c); exchange across dcs
                   (N_dc-1 steps of c, worker i with worker i); distribute in each dc
                   (L-1 steps of (N_dc-1) c)
- innet_sum:       up to the switch (1 step of u per worker); all-reduce of the sums
                   between switches (2(N_dc-1) steps of c/N_dc); down to the workers
                   (1 step of c, or 2c with loopback)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from typing import Mapping

from ctdsl import units as U
from ctdsl.language.enums import Collective, LinkKind
from ctdsl.model.entities import Spec
from ctdsl.model.graph import NEXT, switch_id, worker_id
from ctdsl.model.topology import Topology
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import burst as BU
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic.dimensioned import DimExpr, emax

Edge = tuple[str, str]


@dataclass(frozen=True)
class EdgeTerms:
    """One directed edge of the topology, its quantities as dimensioned sympy (context.py makes them)."""

    link: str
    kind: LinkKind
    bandwidth: DimExpr  # B/s
    latency: DimExpr  # s
    energy_per_byte: DimExpr  # J/B
    queue: Q.Queue | None  # the M/D/1 queue of a link with a background load
    per_hop: bool = True  # latency and energy on every edge; False: once per segment (`counted = transfer`)
    count: DimExpr = D.one()  # a group of alike edges (a dc's NICs): how many share its flows
    per_route: bool = False  # `counted = route`: its figures are the route's end to end, in place of every link's on it


@dataclass(frozen=True)
class Transfer:
    """A transfer of `nbytes`, or, between groups (replicas), `count` alike transfers at once.

    Between groups `nbytes` is the most-loaded member's (uneven pipeline stages hold shards
    of different sizes), which binds each member's own links, its NICs; `scale` is the
    members' mean over it, so that a link all of them share (the WAN) and the energy of
    their bytes take the exact sum, count x scale x nbytes.
    """

    src: str
    dst: str  # a node, or `next_site(node)`: that node in the next site of its dc
    nbytes: DimExpr
    route: tuple[str, ...]
    count: DimExpr = D.one()
    scale: DimExpr = D.one()
    crossing: DimExpr = D.one()  # the part of the count that crosses the route's links (a ring with k members a node: 1/k; node_groups.py)

    @property
    def total(self) -> DimExpr:
        """The bytes of all `count` transfers together that cross the route, each member's own."""
        if D.is_one(self.count) and D.is_one(self.scale) and D.is_one(self.crossing):
            return self.nbytes
        return self.nbytes * self.count * self.scale * self.crossing

    @property
    def edges(self) -> tuple[Edge, ...]:
        return tuple(zip(self.route, self.route[1:]))


@dataclass(frozen=True)
class Phase:
    """A phase of a collective: `steps` alike steps of transfers that run at once (built whole by
    `Router.phase`, or by `groups.concurrent` from phases that run side by side)."""

    name: str
    steps: int | DimExpr  # a dimensionless DimExpr between groups, where it follows a count
    transfers: list[Transfer]
    loads: dict[Edge, DimExpr] = field(default_factory=dict)  # bytes per step on each edge
    step_time: DimExpr = D.zero(U.TIME)
    time: DimExpr = D.zero(U.TIME)
    latency: DimExpr = D.zero(U.TIME)  # latency part of one step (slowest route)
    bottlenecks: dict[sp.Expr, str] = field(default_factory=dict)  # Max argument -> which edge
    route_latency: list[DimExpr] = field(default_factory=list)  # per transfer: links and switches on its route
    # queueing (links with a background load): each loaded edge the phase's transfers cross
    # (with its M/D/1 wait for one transfer), and the step time without the burst's waits
    waits: dict[Edge, DimExpr] = field(default_factory=dict)
    free_step_time: DimExpr = D.zero(U.TIME)
    # bytes per step that pay each edge's energy per bit: every edge of a link counted
    # per hop, the first edge of each segment of a link counted per transfer
    charged: dict[Edge, DimExpr] = field(default_factory=dict)

    @property
    def queueing(self) -> DimExpr:
        """Queueing wait in one step on average: the burst's summed waits over the steps."""
        return self.step_time - self.free_step_time if self.waits else D.zero(U.TIME)

    def bytes_on(self, edge: Edge) -> DimExpr:
        """Bytes this phase puts on `edge` over all its steps."""
        return self.steps * self.loads.get(edge, D.zero(U.DATA))

    def charged_on(self, edge: Edge) -> DimExpr:
        """Bytes over all its steps that pay `edge`'s energy per bit."""
        return self.steps * self.charged.get(edge, D.zero(U.DATA))


def _ring(members: list[str], nbytes: DimExpr) -> list[tuple[str, str, DimExpr]]:
    n = len(members)
    if n < 2:
        return []
    return [(members[i], members[(i + 1) % n], nbytes) for i in range(n)]


class Router:
    """Routes transfers over one graph, with every edge's terms and every switch's latency as sympy."""

    def __init__(self, spec: Spec, topology: Topology, edges: Mapping[Edge, EdgeTerms], node_latency: Mapping[str, DimExpr]):
        self.spec = spec
        self.topology = topology
        self.edges = edges  # (u, v) -> its EdgeTerms: bandwidth, latency, queue, ... as DimExpr
        self.node_latency = node_latency  # a switch -> its latency; any other node adds none
        self._route = lru_cache(maxsize=None)(self._route_uncached)

    def edge(self, e: Edge) -> EdgeTerms:
        return self.edges[e]

    def _route_uncached(self, src: str, dst: str) -> tuple[str, ...]:
        ring = dst.endswith(NEXT)  # to the next site of the dc, over the WAN from the dc to itself
        if ring or src == dst:  # or between two members of one group: up to its dc's switch and down again
            dst = dst.removesuffix(NEXT)
            sw = switch_id(self.spec, self.topology.node(src).dc)
            return self.topology.route(src, sw) + ((sw,) if ring else ()) + self.topology.route(sw, dst)[1:]
        return self.topology.route(src, dst)

    def segments(self, edges: tuple[Edge, ...]) -> list[list[Edge]]:
        """A route's edges cut into runs of one link definition in one role."""
        out: list[list[Edge]] = []
        for e in edges:
            a = self.edge(e)
            if out and not a.per_hop and (self.edge(out[-1][-1]).link, self.edge(out[-1][-1]).kind) == (a.link, a.kind):
                out[-1].append(e)
            else:
                out.append([e])
        return out

    def route_latency(self, t: Transfer, charged: dict[Edge, DimExpr]) -> DimExpr:
        """A transfer's latency: once per segment (per edge for a link counted per hop), plus
        every switch it enters; adds its bytes to `charged` where they pay energy per bit.

        Where the route crosses a link counted per route (`counted = route`), that link's figures
        are the route's end to end: the transfer pays them once (each such link once), and no other
        link's latency or energy on its route; a module's port and a switch still pay their own."""
        lats = []
        segments = self.segments(t.edges)
        ends = {}
        for seg in segments:
            if self.edge(seg[0]).per_route:
                ends.setdefault(self.edge(seg[0]).link, seg[0])
        if ends:
            for e in ends.values():
                lats.append(self.edge(e).latency)
                charged[e] = charged.get(e, D.zero(U.DATA)) + t.total
            segments = [seg for seg in segments if self.edge(seg[0]).kind is LinkKind.PORT]
        for seg in segments:
            lats.append(self.edge(seg[0]).latency)  # one link definition: one latency
            charged[seg[0]] = charged.get(seg[0], D.zero(U.DATA)) + t.total
        zero = D.zero(U.TIME)
        lats += [self.node_latency.get(n, zero) for n in t.route[1:]]
        return D.total(lats, U.TIME)

    def phase(self, name: str, steps, flows: list[tuple]) -> Phase | None:
        """A phase of `steps` alike steps; a flow is (src, dst, bytes) or, between groups,
        (src, dst, bytes, count[, scale]) (`Transfer`)."""
        if (isinstance(steps, int) and steps <= 0) or not flows:
            return None
        transfers = [Transfer(f[0], f[1], f[2], self._route(f[0], f[1]), *f[3:]) for f in flows]
        loads: dict[Edge, DimExpr] = {}
        for t in transfers:
            for e in t.edges:
                terms = self.edge(e)
                if terms.kind is LinkKind.WAN:  # shared by every member: their exact sum, over its alike WANs
                    share = t.total if D.is_one(terms.count) else t.total / terms.count
                elif D.is_one(t.count) and D.is_one(terms.count) and D.is_one(t.crossing):
                    share = t.nbytes
                else:  # a group of alike edges (one per NIC) shares the group's flows evenly, each as the most-loaded
                    share = t.nbytes * t.count * t.crossing / terms.count
                loads[e] = loads.get(e, D.zero(U.DATA)) + share
        charged: dict[Edge, DimExpr] = {}
        route_latency: list[DimExpr] = []
        waits: dict[Edge, DimExpr] = {}
        bottlenecks: dict[sp.Expr, str] = {}
        free: dict[DimExpr, None] = {}
        lats: dict[DimExpr, None] = {}
        for t in transfers:
            lat = self.route_latency(t, charged)
            route_latency.append(lat)
            # the loaded links on the route: their waits are the phase's burst (burst.py)
            for e in t.edges:
                if self.edge(e).queue is not None:
                    waits.setdefault(e, self.edge(e).queue.wait)
            shares = {}
            for e in t.edges:
                share = loads[e] / self.edge(e).bandwidth
                shares.setdefault(share, e)
            args = list(shares)
            bw_time = emax(*args) if len(args) > 1 else args[0]
            for arg, e in shares.items():
                bottlenecks.setdefault(arg.e, f"{self.edge(e).link} {e[0]} -> {e[1]}")
            free[lat + bw_time] = None
            lats[lat] = None
        free_step = emax(*free) if len(free) > 1 else next(iter(free))
        step, time = free_step, steps * free_step
        if waits:  # the phase's steps are a burst of jobs on each loaded edge (queueing.py, burst.py)
            probe = Phase(name, steps, transfers, loads, waits=waits)
            queued = BU.wait([probe], self.edges)
            step, time = free_step + queued / steps, time + queued
        return Phase(
            name,
            steps,
            transfers,
            loads,
            step_time=step,
            time=time,
            latency=emax(*lats) if len(lats) > 1 else next(iter(lats)),
            bottlenecks=bottlenecks,
            route_latency=route_latency,
            waits=waits,
            free_step_time=free_step,
            charged=charged,
        )

    # ---- the collectives -------------------------------------------------------------

    def plan(self, collective: Collective, payload: DimExpr, up: DimExpr, loopback: bool) -> list[Phase]:
        spec = self.spec
        dcs = list(spec.dcs)
        everyone = [worker_id(d, i) for d in dcs for i in range(spec.dcs[d].workers)]
        n = len(everyone)
        phases: list[Phase | None] = []
        if collective == "ring_allreduce":
            phases.append(self.phase("ring all-reduce over all workers", 2 * (n - 1), _ring(everyone, payload / n)))
        elif collective == "allgather":
            phases.append(self.phase("ring all-gather over all workers", n - 1, _ring(everyone, payload)))
        elif collective in ("hier_allreduce", "hier_allgather"):
            L = spec.dcs[dcs[0]].workers
            ndc = len(dcs)
            in_dc = lambda nbytes: [f for d in dcs for f in _ring([worker_id(d, i) for i in range(L)], nbytes)]  # noqa: E731
            across = lambda nbytes: [f for i in range(L) for f in _ring([worker_id(d, i) for d in dcs], nbytes)]  # noqa: E731
            if collective == "hier_allreduce":
                phases.append(self.phase("reduce-scatter in each dc", L - 1, in_dc(payload / L)))
                phases.append(self.phase("all-reduce of each shard across dcs", 2 * (ndc - 1), across(payload / (L * ndc))))
                phases.append(self.phase("all-gather in each dc", L - 1, in_dc(payload / L)))
            else:
                phases.append(self.phase("gather in each dc", L - 1, in_dc(payload)))
                phases.append(self.phase("exchange across dcs", ndc - 1, across(payload)))
                if ndc > 1:
                    phases.append(self.phase("distribute in each dc", L - 1, in_dc((ndc - 1) * payload)))
        elif collective == "innet_sum":
            ndc = len(dcs)
            switches = [switch_id(spec, d) for d in dcs]
            up_flows = [(worker_id(d, i), switch_id(spec, d), up) for d in dcs for i in range(spec.dcs[d].workers)]
            down = payload * (2 if loopback else 1)
            down_flows = [(switch_id(spec, d), worker_id(d, i), down) for d in dcs for i in range(spec.dcs[d].workers)]
            phases.append(self.phase("up to the switch", 1, up_flows))
            phases.append(self.phase("all-reduce of the sums across dcs", 2 * (ndc - 1), _ring(switches, payload / ndc)))
            phases.append(
                self.phase("down to the workers" + (" (with loopback)" if loopback else ""), 1, down_flows)
            )
        else:  # pragma: no cover
            raise ValueError(collective)
        return [p for p in phases if p is not None]
