"""Where a scheme's syncs put their bytes and time: the step's sync components, the bytes on
every edge over one sync period, what the busiest worker sends, the loaded links a sync
crosses, and the energy of the model-parallel traffic.

A mixin of `CostModel` (costs.py), as `Counts` is: it needs `edge`, `q`, `topology` and
`device_count`. A sync (exposure.py) runs every `every` steps; the per-sync phases run once per
sync period (H steps) and the every-step phases (inner = dc) H times in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctdsl import units as U
from ctdsl.model.topology import NodeKind
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import queueing as Q
from ctdsl.symbolic import timeline as TL
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.exposure import Sync
from ctdsl.symbolic.routing import Edge, Phase


@dataclass
class LoadedEdge:
    """A directed edge with background traffic that this scheme's sync crosses."""

    edge: Edge
    queue: Q.Queue
    phases: list[str]  # the phases that pay its wait
    waits_per_sync: int  # phase steps per sync that wait for it
    busy: DimExpr  # seconds per step the sync keeps it busy (divided by H)


class SyncBytes:
    """Needs `edge`, `q`, `topology` and `device_count` (CostModel's)."""

    def _components(self, syncs: list[Sync], tr: DimExpr, period: DimExpr) -> dict[str, DimExpr]:
        """Step components after the inner step: the transform, each sync's phases (or its exposed
        part), then the queueing waits."""
        components: dict[str, DimExpr] = {}
        if tr != 0:
            components["transform"] = tr / period
        queueing: dict[str, DimExpr] = {}
        for sy in syncs:
            if sy.exposed is not None:
                components[f"{sy.name} (exposed)"] = sy.exposed
                continue
            for ph in sy.phases:
                if ph.waits:
                    components[ph.name] = ph.steps * ph.free_step_time / sy.every
                    links = ", ".join(dict.fromkeys(self.edge(e).link for e in ph.waits))
                    key = f"queueing on {links}"
                    queueing[key] = queueing.get(key, D.zero(U.TIME)) + ph.steps * ph.queueing / sy.every
                else:
                    components[ph.name] = ph.time / sy.every
        components.update(queueing)
        return components

    def _per_period(self, syncs: list[Sync], period: DimExpr, table: str) -> dict[Edge, DimExpr]:
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

    def _link_bytes(self, syncs: list[Sync], period: DimExpr) -> dict[Edge, DimExpr]:
        return self._per_period(syncs, period, "loads")

    def _charged_bytes(self, syncs: list[Sync], period: DimExpr) -> dict[Edge, DimExpr]:
        """Bytes per sync period that pay each edge's energy per bit (routing.py: per transfer or per hop)."""
        return self._per_period(syncs, period, "charged")

    def _wire(self, phases: list[Phase], every_step: list[Phase], period: DimExpr) -> DimExpr:
        """Bytes the busiest worker sends per sync (per sync period, with the syncs of every step)."""
        senders: dict[str, DimExpr] = {}
        for times, group in ((D.one(), phases), (period, every_step)):
            for ph in group:
                for t in ph.transfers:
                    node = self.topology.node(t.src)
                    if node.kind is NodeKind.WORKER:
                        # a group: each of its GPUs sends its share of the group's flows
                        sent = ph.steps * t.nbytes if node.count is None else ph.steps * t.nbytes * t.count / self.q(node.count, U.ONE)
                        senders[t.src] = senders.get(t.src, D.zero(U.DATA)) + (sent if D.is_one(times) else times * sent)
        return D.emax(*senders.values()) if senders else D.zero(U.DATA)

    def _traffic_energy(self, timeline: TL.Timeline) -> DimExpr:
        """Energy per step of the model-parallel traffic: every GPU's bytes at its link's energy per byte."""
        parts = []
        for dc, st in timeline.dcs.items():
            gpus = self.device_count(dc)
            for t in st.traffic:
                parts.append(gpus * t.sent * t.link.energy_per_byte)
        return D.total(parts, U.ENERGY)

    def _loaded_edges(self, syncs: list[Sync], period: DimExpr) -> dict[Edge, LoadedEdge]:
        out: dict[Edge, LoadedEdge] = {}
        for sy in syncs:
            for ph in sy.phases:
                for e in ph.waits:
                    q = self.edge(e).queue
                    le = out.setdefault(e, LoadedEdge(e, q, [], 0, D.zero(U.TIME)))
                    le.phases.append(ph.name)
                    le.waits_per_sync += ph.steps
        for e, le in out.items():
            bw = self.edge(e).bandwidth
            le.busy = D.total([ph.bytes_on(e) / sy.every for sy in syncs for ph in sy.phases], U.DATA) / bw
        return out
