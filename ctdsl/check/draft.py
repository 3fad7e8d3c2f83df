"""The checker's tables while it works: filled pass by pass, frozen into a `Spec` once.

Each entry is already a frozen entity, built once with all its fields; the
tables themselves grow as the passes run (definitions, then the WAN links the
topology pass accepts, then the break-evens and the baseline). The later passes
read a draft as back ends read a `Spec` (`draft.dcs`, `draft.defaults()`).
`freeze` returns the one `Spec` the checker hands on: read-only tables and the
topology the topology pass built from them.

A field written wrong is reported and built as None (a dc's device as ""), so
that the other checks still run; a draft with errors is never frozen, so no
`Spec` holds such a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctdsl.model import entities as M
from ctdsl.model.topology import Topology


@dataclass
class Draft:
    root: str
    files: list[str]
    params: dict[str, M.Param] = field(default_factory=dict)
    models: dict[str, M.Model] = field(default_factory=dict)
    devices: dict[str, M.Device] = field(default_factory=dict)
    links: dict[str, M.Link] = field(default_factory=dict)
    pluggables: dict[str, M.Pluggable] = field(default_factory=dict)
    switches: dict[str, M.Switch] = field(default_factory=dict)
    dcs: dict[str, M.DataCentre] = field(default_factory=dict)
    replicas: dict[str, M.Replica] = field(default_factory=dict)
    wans: list[M.WanLink] = field(default_factory=list)
    schemes: dict[str, M.Scheme] = field(default_factory=dict)
    breakevens: list[M.Breakeven] = field(default_factory=list)
    targets: list = field(default_factory=list)  # model.targets.Target
    baseline: str | None = None
    simulation: M.Simulation | None = None
    variants: dict[str, M.Sites] = field(default_factory=dict)
    searches: list = field(default_factory=list)  # ctdsl.model.search.Search, from ctdsl.check.search
    whole: set[str] = field(default_factory=set)  # params a count field is set to directly (FieldReader.counts)
    bounds: list[M.CheckedBound] = field(default_factory=list)  # checked on expressions of params (Spec.bounds)
    scenarios: dict = field(default_factory=dict)  # model.observed.Scenario, from ctdsl.check.observed
    observations: list = field(default_factory=list)  # model.observed.Observation
    fits: list = field(default_factory=list)  # model.observed.Fit

    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params.values()}

    def default_model(self) -> tuple[str | None, list[M.Model]]:
        """The model a scheme trains when it names none: the spec's only own model.

        Returns its name (None when there is not exactly one) and the candidates.
        """
        ours = [m for m in self.models.values() if not m.from_std]
        root = [m for m in ours if m.file == self.root]
        pick = root if len(root) == 1 else ours
        return (pick[0].name if len(pick) == 1 else None), (root or ours)

    def freeze(self, topology: Topology) -> M.Spec:
        """The checked spec, carrying `topology` (built from these tables)."""
        return M.Spec(
            root=self.root,
            files=tuple(self.files),
            params=self.params,
            models=self.models,
            devices=self.devices,
            links=self.links,
            pluggables=self.pluggables,
            switches=self.switches,
            dcs=self.dcs,
            wans=tuple(self.wans),
            schemes=self.schemes,
            breakevens=tuple(self.breakevens),
            baseline=self.baseline,
            simulation=self.simulation,
            topology=topology,
            variants=self.variants,
            replicas=self.replicas,
            searches=tuple(self.searches),
            targets=tuple(self.targets),
            whole=frozenset(self.whole),
            bounds=tuple(self.bounds),
            scenarios=self.scenarios,
            observations=tuple(self.observations),
            fits=tuple(self.fits),
        )
