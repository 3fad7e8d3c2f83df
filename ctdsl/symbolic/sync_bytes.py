"""Where a scheme's syncs put their bytes: the bytes on every edge over one sync period, what the
busiest worker sends, the loaded links a sync crosses, and the energy of the model-parallel traffic.

Pure functions of the syncs (exposure.py) and the context's edges. A sync runs every `every`
steps; the per-sync phases run once per sync period (H steps) and the every-step phases
(inner = dc) H times in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ctdsl import units as U
from ctdsl.model.topology import NodeKind
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic import timeline as TL
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.exposure import Sync
from ctdsl.symbolic.routing import Edge, EdgeTerms, Phase


@dataclass(frozen=True)
class LoadedEdge:
    """A directed edge with background traffic that this scheme's sync crosses."""

    edge: Edge
    queue: Q.Queue
    phases: tuple[str, ...]  # the phases that pay its wait
    waits_per_sync: int  # phase steps per sync that wait for it
    busy: DimExpr  # seconds per step the sync keeps it busy (divided by H)


def per_period(syncs: Sequence[Sync], period: DimExpr, table: str) -> dict[Edge, DimExpr]:
    """Bytes on each edge over one sync period (H steps): the per-sync phases once, the
    every-step phases H times; `table` is the phase's loads or charged bytes."""
    out: dict[Edge, DimExpr] = {}
    for sy in syncs:
        times = D.one() if sy is syncs[-1] else period / sy.every
        for ph in sy.phases:
            for e, nbytes in getattr(ph, table).items():
                add = ph.steps * nbytes if D.is_one(times) else times * ph.steps * nbytes
                out[e] = out.get(e, D.zero(U.DATA)) + add
    return out


def link_bytes(syncs: Sequence[Sync], period: DimExpr) -> dict[Edge, DimExpr]:
    """Bytes on each edge per sync period."""
    return per_period(syncs, period, "loads")


def charged_bytes(syncs: Sequence[Sync], period: DimExpr) -> dict[Edge, DimExpr]:
    """Bytes per sync period that pay each edge's energy per bit (routing.py: per transfer or per hop)."""
    return per_period(syncs, period, "charged")


def wire(ctx: Context, phases: Sequence[Phase], every_step: Sequence[Phase], period: DimExpr) -> DimExpr:
    """Bytes the busiest worker sends per sync (per sync period, with the syncs of every step)."""
    senders: dict[str, DimExpr] = {}
    for times, group in ((D.one(), phases), (period, every_step)):
        for ph in group:
            for t in ph.transfers:
                node = ctx.topology.node(t.src)
                if node.kind is NodeKind.WORKER:
                    # a group: each of its GPUs sends its share of the group's flows
                    sent = ph.steps * t.nbytes if node.count is None else ph.steps * t.nbytes * t.count / ctx.q(node.count, U.ONE)
                    senders[t.src] = senders.get(t.src, D.zero(U.DATA)) + (sent if D.is_one(times) else times * sent)
    return D.emax(*senders.values()) if senders else D.zero(U.DATA)


def traffic_energy(ctx: Context, timeline: TL.Timeline) -> DimExpr:
    """Energy per step of the model-parallel traffic: every GPU's bytes at its link's energy per byte."""
    parts = []
    for dc, st in timeline.dcs.items():
        gpus = C.device_count(ctx, dc)
        for t in st.traffic:
            parts.append(gpus * t.sent * t.link.energy_per_byte)
    return D.total(parts, U.ENERGY)


def loaded_edges(edges: Mapping[Edge, EdgeTerms], syncs: Sequence[Sync]) -> dict[Edge, LoadedEdge]:
    """The loaded edges the syncs cross: which phases wait on each, how often, and the sync's busy time on it."""
    found: dict[Edge, tuple[list[str], list[int]]] = {}
    for sy in syncs:
        for ph in sy.phases:
            for e in ph.waits:
                names, steps = found.setdefault(e, ([], []))
                names.append(ph.name)
                steps.append(ph.steps)
    out: dict[Edge, LoadedEdge] = {}
    for e, (names, steps) in found.items():
        busy = D.total([ph.bytes_on(e) / sy.every for sy in syncs for ph in sy.phases], U.DATA) / edges[e].bandwidth
        out[e] = LoadedEdge(e, edges[e].queue, tuple(names), sum(steps, 0), busy)
    return out


__all__ = ["LoadedEdge", "per_period", "link_bytes", "charged_bytes", "wire", "traffic_energy", "loaded_edges"]
