"""Cost in dollars and carbon to target, from the time and energy to target (docs/codesign.md).

For one scheme with steps to target, T its time and E_d the energy its hardware
draws in dc d to the target (the parts of `energy.py`, split by site):

- cost = sum over workers of the device's price per hour x T (or capex /
  depreciation x T) + sum over modules and switches of price / depreciation x T
  + sum over connections of a priced link of price x bandwidth x T + sum over
  dcs of E_d x pue_d x power_price_d;
- CO2e = sum over dcs of E_d x pue_d x carbon_intensity_d + sum over workers of
  the device's embodied carbon / depreciation x T.

A module or switch with a price and no depreciation takes the depreciation of
the device of its dc (the checker makes sure there is one). The counts are the
cost model's (`device_count`, `module_count`: workers, or the GPUs and NICs of
a dc's replicas, which may be params), one switch a dc as its power is
counted, and a connection per pair of nodes a priced link joins (times the
edge group's count), so they follow the sites a scheme runs on. Every
term is a `DimExpr`: a price per hour times a time is money, a rate times a
time is data, and a price per data times data is money again.

A spec that prices nothing has no cost to target (None), one that gives no
carbon intensity and no embodied carbon no CO2e: nothing changes for a spec
without these fields. Whether a spec prices something is asked of all its
definitions, so that every scheme has a cost when one has.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.language.enums import LinkKind
from ctdsl.model import payload as PL
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.energy import energy_parts

__all__ = ["Money", "money", "site_energy"]

COST_PARTS = ("devices", "modules", "switches", "links", "energy")
CO2E_PARTS = ("operational", "embodied")


@dataclass(frozen=True)
class Money:
    """One scheme's cost (USD) and CO2e (gCO2e) to target, with their parts; None: not asked for."""

    cost: DimExpr | None
    co2e: DimExpr | None
    cost_parts: dict[str, DimExpr]
    co2e_parts: dict[str, DimExpr]


def _given(spec) -> tuple[bool, bool]:
    """Whether the spec sets any price, and any carbon field, on any definition: so that every
    scheme of the spec gets a cost (or a CO2e), whichever sites it runs on (a variant without
    the priced modules costs 0 USD of them, not nothing)."""
    tables = {"device": spec.devices, "link": spec.links, "pluggable": spec.pluggables, "switch": spec.switches}
    ents = [(kind, e) for kind, table in tables.items() for e in table.values()]
    ents += [("dc", d) for d in spec.dcs.values()] + [("dc", d) for v in spec.variants.values() for d in v.dcs.values()]
    set_ = {(kind, key) for kind, e in ents for key in S.MONEY_FIELDS[kind] if getattr(e, key) is not None}
    carbon = {("device", "embodied_carbon"), ("dc", "carbon_intensity")}
    return bool(set_ - carbon), bool(set_ & carbon)


def site_energy(cm, c) -> dict[str, DimExpr]:
    """Energy per step drawn in each dc: its workers, modules and switch, and the link edges leaving its nodes."""
    spec, model = cm.spec, cm.spec.models[c.scheme.model]
    flops = PL.compute_flops(model, cm.formulas)
    charged: dict = {}
    for ph in c.phases:
        for e in ph.charged:
            charged[e] = charged.get(e, D.zero(U.DATA)) + ph.charged_on(e)
    out = {}
    for name, dc in spec.dcs.items():
        view = _View(cm, replace(spec, dcs={name: dc}))
        mine = {e: b for e, b in charged.items() if cm.topology.node(e[0]).dc == name}
        parts = energy_parts(view, c.scheme, c.step_time, flops, c.dense, mine, c.period, c.transform_where)
        out[name] = D.total(parts.values(), U.ENERGY)
    return out


class _View:
    """The cost model as `energy_parts` reads it, with the spec cut to one dc: its counts
    (`device_count`, `module_count`, ...) are the cost model's own, over the whole spec."""

    def __init__(self, cm, spec):
        self._cm, self.spec = cm, spec

    def __getattr__(self, name):
        return getattr(self._cm, name)


def _per_time(cm) -> dict[str, list[DimExpr]]:
    """Each dc's hardware paid by the time it is used: USD/s of devices, modules and switches, gCO2e/s embodied."""
    spec, f = cm.spec, cm.field
    out: dict[str, list[DimExpr]] = {"devices": [], "modules": [], "switches": [], "embodied": []}
    for name, dc in spec.dcs.items():
        dev = spec.devices[dc.device]
        n = cm.device_count(name)  # its workers, or its replicas' GPUs
        if dev.price is not None:
            out["devices"].append(n * f(dev, "price"))
        if dev.capex is not None:
            out["devices"].append(n * f(dev, "capex") / f(dev, "depreciation"))
        if dev.embodied_carbon is not None:
            out["embodied"].append(n * f(dev, "embodied_carbon") / f(dev, "depreciation"))
        parts = [("modules", spec.pluggables.get(dc.pluggable) if dc.pluggable else None, cm.module_count(name) if dc.pluggable else None)]
        parts.append(("switches", spec.switches.get(dc.switch), cm.site_count(name)))  # one switch a site, as its power is counted
        for key, part, count in parts:
            if part is not None and part.price is not None:
                years = f(part, "depreciation") if part.depreciation is not None else f(dev, "depreciation")
                out[key].append(count * f(part, "price") / years)
    return out


def money(cm, c) -> Money:
    """Cost and CO2e to target of one scheme's costs `c` (None where not asked for or without steps)."""
    priced, carbon = _given(cm.spec)
    if c.time_to_target is None or not (priced or carbon):
        return Money(None, None, {}, {})
    T, steps = c.time_to_target, c.steps
    spec, f = cm.spec, cm.field
    grid = {name: steps * e * f(spec.dcs[name], "pue") for name, e in site_energy(cm, c).items()}
    per_time = _per_time(cm)
    cost_parts = {k: D.total(per_time[k], U.MONEY_RATE) * T for k in ("devices", "modules", "switches")}
    cost_parts["links"] = D.total(_link_rent(cm), U.MONEY_RATE) * T
    cost_parts["energy"] = D.total([g * f(spec.dcs[n], "power_price") for n, g in grid.items() if spec.dcs[n].power_price is not None], U.MONEY)
    co2e_parts = {
        "operational": D.total([g * f(spec.dcs[n], "carbon_intensity") for n, g in grid.items() if spec.dcs[n].carbon_intensity is not None], U.CARBON),
        "embodied": D.total(per_time["embodied"], U.dim(CO2e=1, s=-1)) * T,
    }
    cost = D.total(cost_parts.values(), U.MONEY) if priced else None
    co2e = D.total(co2e_parts.values(), U.CARBON) if carbon else None
    return Money(cost, co2e, cost_parts if priced else {}, co2e_parts if carbon else {})


def _link_rent(cm) -> list[DimExpr]:
    """price x bandwidth of each connection of a priced link: a pair of nodes it joins, either way
    (the bandwidth of the edge: a WAN of several links in parallel rents them all)."""
    seen, out = set(), []
    for e in cm.topology.edges():
        link = cm.spec.links.get(e.link) if e.kind in (LinkKind.INTRA, LinkKind.WAN) else None
        pair = frozenset((e.source, e.target))
        if link is None or link.price is None or pair in seen:
            continue
        seen.add(pair)
        count = cm.q(e.count, U.ONE) if e.count is not None else D.one()  # a group of alike edges (one per NIC)
        if e.source == e.target and len(cm.spec.dcs) == 1:  # a ring of K sites: K WANs, but two sites share one
            count = D.emin(count, count * (count - 1) / 2)
        out.append(count * cm.field(link, "price") * cm.edge((e.source, e.target)).bandwidth)  # `wan * 4`: 4 links' rent
    return out
