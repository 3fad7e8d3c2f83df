"""Collectives of a group of GPUs laid out over nodes, run as NCCL runs them (issue 27 item 1).

**Layout.** The GPUs of a dc are numbered in Megatron's order (`megatron/core/parallel_state.py`,
`order = "tp-cp-ep-dp-pp"`; the older Megatron and Megatron-DeepSpeed build the same groups):
tensor-parallel ranks are consecutive, then context, then data-parallel, then pipeline
stages; a node (a scale-up domain, `scaleup`, default `gpus_per_node`) holds consecutive
ranks. A group of n members whose consecutive members are `stride` ranks apart has

    k = min(n, max(1, floor(domain / stride)))   members in each domain, over n / k domains

(TP: stride 1; CP: tp; DP, with CP inside it: tp; the experts' data-parallel group: ep;
EP: 1; PP neighbours: tp cp dp). k is a whole number where no param's range can move it,
else a form in the params (`layout`): over the box of the ranges a group that never
outgrows a domain has k = n, one that always does k = floor(domain / stride), and any
other k = min(n, floor(domain / stride)) with the flag span = min(1, n - k) (1: it spans
domains). A time that differs between the regimes is taken by its 0/1 flag (`pick`:
flag a + (1 - flag) b, exact at whole degrees); only min, max and floor appear, which
every evaluator (the solver's, numpy's, the explorer's JavaScript) and LaTeX print.

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

`algorithm = auto` (the default) takes the one with the least time at every point (the
min of the candidates' forms), as NCCL's tuner takes the least estimated time
(`src/enqueue.cc`, `getAlgoInfo`); the note names the defaults' choice. A replica may
state `ring`, `tree` or `in_network`. NCCL's protocols (LL, LL128, Simple) and their
bandwidth caps are not modelled: a link's `efficiency` stands for what the large
messages of training reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping

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


Box = Mapping[sp.Symbol, tuple[float, float]]


def above(x: DimExpr, m: int = 0) -> DimExpr:
    """1 where the whole number x is above m, else 0, for x >= m: min(1, x - m), or a number."""
    d = (x - m).e
    if d.is_Number:
        return D.one() if d > 0 else D.zero(U.ONE)
    return DimExpr(sp.Min(sp.Integer(1), d, evaluate=False), U.ONE)


def pick(flag: DimExpr, yes: DimExpr, no: DimExpr) -> DimExpr:
    """`yes` where the 0/1 flag is 1, `no` where it is 0: one of them where the flag is a number,
    else flag yes + (1 - flag) no, exact at every point (the flag is 0 or 1 at whole degrees)."""
    if flag.e.is_Number:
        return yes if flag.e != 0 else no
    if yes == no:
        return yes
    return flag * yes + (1 - flag) * no


def _range(x: sp.Expr, box: Box) -> tuple[float, float] | None:
    """The least and greatest of a product of powers of positive params over their ranges (`box`);
    None where x is not such a product, or a range is not positive and finite."""
    if x.is_Number:
        return (float(x), float(x)) if x > 0 else None
    if x.is_Symbol:
        r = box.get(x)
        return r if r is not None and 0 < r[0] <= r[1] < math.inf else None
    if x.is_Pow and x.exp.is_Rational:
        r = _range(x.base, box)
        if r is None:
            return None
        ends = sorted((r[0] ** float(x.exp), r[1] ** float(x.exp)))
        return ends[0], ends[1]
    if x.is_Mul:
        lo = hi = 1.0
        for a in x.args:
            r = _range(a, box)
            if r is None:
                return None
            lo, hi = lo * r[0], hi * r[1]
        return lo, hi
    return None


@dataclass(frozen=True)
class Layout:
    """A group of n members laid out over scale-up domains: k in each, `count` domains.

    k, `span` and `count` are whole numbers where no param can move them over its range,
    else forms in the params (module docstring, "Layout"); `at` holds them at the defaults."""

    n: DimExpr
    k: DimExpr  # members in one domain
    span: DimExpr  # 1 where the group spans more than one domain, else 0
    count: DimExpr  # domains it spans: ceiling(n / k)
    at: tuple[int, bool, int] = (1, False, 1)  # k, whether it spans, the domains: at the params' defaults

    @property
    def spans(self) -> bool:
        """Whether it spans domains at the params' defaults (what a note and a report name)."""
        return self.at[1]

    @property
    def shared(self) -> DimExpr:
        """1 where a domain holds more than one member (k > 1), else 0."""
        return above(self.k, 1)

    @property
    def domains(self) -> DimExpr:
        return self.n / self.k


def layout(n: DimExpr, stride: DimExpr, domain: DimExpr, number, box: Box | None = None) -> Layout:
    """Megatron's layout of a group of n members `stride` ranks apart in domains of `domain`
    consecutive ranks; `number` evaluates a count at the params' defaults, `box` holds each
    param's range (module docstring, "Layout": which parts are numbers and which forms)."""
    nv, sv, dv = number(n), number(stride), number(domain)
    k0 = int(max(1, min(nv, dv // sv if sv < dv else 1)))
    at = (k0, nv > k0, max(1, math.ceil(nv / k0)))
    box = box or {}
    nr, sr, dr = _range(n.e, box), _range(stride.e, box), _range(domain.e, box)
    one, zero = D.one(), D.zero(U.ONE)
    fits = DimExpr(sp.floor((domain / stride).e), U.ONE)  # members a domain can hold
    inside = all(r is not None and r[0] <= v <= r[1] for r, v in ((nr, nv), (sr, sv), (dr, dv)))
    if inside:  # (a default outside its range takes the whole form)
        # over the box: n in nr, a domain holds max(1, floor(domain / stride)) in [fit_lo, fit_hi]
        fit_lo, fit_hi = max(1, math.floor(dr[0] / sr[1])), max(1, math.floor(dr[1] / sr[0]))
        if nr[1] <= fit_lo:  # never more members than a domain holds: one domain
            k, span = n, zero
        elif nr[0] > fit_hi:  # always more: each domain full
            k = DimExpr(sp.Integer(fit_lo), U.ONE) if fit_lo == fit_hi else (fits if dr[0] >= sr[1] else D.emax(one, fits))
            span = one
        else:
            k_lo, k_hi = max(1, min(math.floor(nr[0]), fit_lo)), max(1, min(math.floor(nr[1]), fit_hi))
            k = DimExpr(sp.Integer(k0), U.ONE) if k_lo == k_hi == k0 else (D.emin(n, fits) if nr[0] >= 1 and dr[0] >= sr[1] else D.emax(one, D.emin(n, fits)))
            span = one if k.e.is_Number and nr[0] > k0 else above(n - k)
    else:  # not a product of params with finite positive ranges: the whole form
        k = D.emax(one, D.emin(n, fits))
        span = above(n - k)
    if k.e.is_Number and n.e.is_Number:  # a layout no param moves: the numbers at the defaults
        k, span = DimExpr(sp.Integer(k0), U.ONE), (one if at[1] else zero)
    if span.e == 0:
        count = one
    elif n.e.is_Number and k.e.is_Number:
        count = DimExpr(sp.Integer(at[2]), U.ONE)
    else:
        count = D.ceiling(n / k)
    return Layout(n, k, span, count, at)


@dataclass(frozen=True)
class Fabric:
    """The two links a group of one dc's replica may use, per GPU."""

    up: LinkClass
    out: LinkClass

    def bus(self, lay: Layout) -> tuple[DimExpr, DimExpr]:
        """W_bus and the slowest hop's latency (module docstring), piecewise in the layout."""
        across = self.out.bandwidth if lay.shared.e == 0 else D.emin(self.up.bandwidth, lay.k * self.out.bandwidth)
        across = pick(lay.shared, across, self.out.bandwidth)
        return pick(lay.span, across, self.up.bandwidth), pick(lay.span, self.out.latency, self.up.latency)

    def link(self, lay: Layout) -> LinkClass:
        """The link a group's traffic is reported on: the scale-out one where it spans domains.
        Where a param moves the layout, its figures are piecewise too and its name the defaults'."""
        if lay.span.e.is_Number:
            return self.out if lay.span.e != 0 else self.up
        named = self.out if lay.spans else self.up
        f = lambda attr: pick(lay.span, getattr(self.out, attr), getattr(self.up, attr))  # noqa: E731
        return LinkClass(named.link, named.role, f("bandwidth"), f("latency"), f("energy_per_byte"), named.in_network)


@dataclass(frozen=True)
class Timed:
    """A collective's time per call, the algorithm that ran it and the link it is reported on."""

    time: DimExpr
    algorithm: str
    link: LinkClass


def _on(lay: Layout, t: DimExpr) -> DimExpr:
    """t where the group has more than one member: a collective of one member takes no time
    (a ring's (n - 1) factors give 0 by themselves; a tree's or an in-switch pass would not)."""
    return t if lay.n.e.is_Number else above(lay.n, 1) * t


def ring(fab: Fabric, lay: Layout, nbytes: DimExpr, factor: int) -> Timed:
    """A ring of factor (n - 1) steps (2: all-reduce; 1: reduce-scatter or all-gather)."""
    w, alpha = fab.bus(lay)
    n = lay.n
    return Timed(factor * (n - 1) * alpha + factor * (n - 1) / n * nbytes / w, "ring", fab.link(lay))


def tree(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """NCCL's tree all-reduce: chains inside a domain, a binary tree across domains."""
    w, _ = fab.bus(lay)
    if lay.span.e == 0:
        hops = D.zero(U.ONE)
    elif lay.count.e.is_Number:
        hops = DimExpr(sp.Integer(math.ceil(math.log2(int(lay.count.e)))), U.ONE)
    else:  # ceiling(log2(1)) = 0 where it does not span
        hops = D.ceiling(D.log2(lay.count))
    latency = 2 * ((lay.k - 1) * fab.up.latency + hops * fab.out.latency)
    return Timed(_on(lay, latency + 2 * nbytes / w), "tree", fab.link(lay))


def in_network(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed | None:
    """An in-switch all-reduce inside one domain whose link offers it; None where it never applies.
    Where a param makes the group span domains, it is the ring there (what runs in its place)."""
    if not fab.up.in_network or lay.span.e == 1:
        return None
    t = _on(lay, 2 * fab.up.latency + nbytes / fab.up.bandwidth)
    if not lay.span.e.is_Number:
        t = pick(lay.span, ring(fab, lay, nbytes, 2).time, t)
    return Timed(t, "in_network", fab.up)


def all_reduce(fab: Fabric, lay: Layout, nbytes: DimExpr, algorithm: Algorithm, env) -> tuple[Timed, dict[str, float]]:
    """The all-reduce as `algorithm` says, and each candidate's time at the defaults `env` (what a
    note shows). auto: the least of the candidates' times at every point, as NCCL's tuner takes
    the least estimated time (a min of the forms; the algorithm named is the defaults' choice)."""
    candidates = {"ring": ring(fab, lay, nbytes, 2), "tree": tree(fab, lay, nbytes)}
    innet = in_network(fab, lay, nbytes)
    if innet is not None:
        candidates["in_network"] = innet
    at = {name: _seconds(t.time, env) for name, t in candidates.items()}
    if lay.spans and "in_network" in at:
        del at["in_network"]  # at the defaults it is the ring: not a candidate there
    if algorithm is Algorithm.AUTO:
        best = min(at, key=lambda name: (at[name], name))  # ties: by name, deterministic
        chosen = candidates[best]
        return Timed(D.emin(*[t.time for t in candidates.values()]), chosen.algorithm, chosen.link), at
    return candidates.get(str(algorithm), candidates["ring"]), at


def all_to_all(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """Pairwise exchange: S (n - 1)/n sent by each member, what leaves its domain over its own NIC share."""
    n = lay.n
    inside = (n - 1) * fab.up.latency + (n - 1) / n * nbytes / fab.up.bandwidth
    if lay.span.e == 0:
        return Timed(inside, "pairwise", fab.up)
    inter = (n - lay.k) / n * nbytes / fab.out.bandwidth
    bw = inter if lay.k.e == 1 else D.emax((lay.k - 1) / n * nbytes / fab.up.bandwidth, inter)  # at k = 1 the max is inter
    across = (n - 1) * fab.out.latency + bw
    return Timed(pick(lay.span, across, inside), "pairwise", fab.link(lay))


def p2p(fab: Fabric, lay: Layout, nbytes: DimExpr) -> Timed:
    """One transfer between neighbours: on the scale-up link when the group fits a domain."""
    link = fab.link(lay)
    return Timed(link.latency + nbytes / link.bandwidth, "p2p", link)


def _seconds(x: DimExpr, env) -> float:
    try:
        return value(x.e, env)
    except (NumericError, ZeroDivisionError):  # pragma: no cover - times of checked specs evaluate
        return float("inf")


def floored(phase, floor: DimExpr, flag: DimExpr | None = None):
    """A phase of a data-parallel ring whose steps also cross the scale-up link: each step at least
    `floor` (the intra-domain hop), its time steps x the larger (groups.py); only where the 0/1
    `flag` (k > 1) is 1, where a param moves the layout."""
    flag = D.one() if flag is None else flag
    step = pick(flag, D.emax(phase.step_time, floor), phase.step_time)
    free = pick(flag, D.emax(phase.free_step_time, floor), phase.free_step_time)
    bottlenecks = dict(phase.bottlenecks)
    if isinstance(floor.e, sp.Basic):
        bottlenecks.setdefault(floor.e, "the scale-up link (the hops inside a node)")
    return replace(phase, step_time=step, time=phase.steps * step, free_step_time=free, bottlenecks=bottlenecks)


__all__ = ["LinkClass", "Layout", "layout", "above", "pick", "Fabric", "Timed", "ring", "tree", "in_network", "all_reduce", "all_to_all", "p2p", "floored"]
