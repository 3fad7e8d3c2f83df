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

from dataclasses import dataclass

from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.model.entities import Spec
from ctdsl.symbolic import counts as C
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.context import Context
from ctdsl.symbolic.costs import SchemeCost
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.energy import energy_parts
from ctdsl.symbolic.routing import Edge

__all__ = ["Money", "money", "site_energy"]

@dataclass(frozen=True)
class Money:
    """One scheme's cost (USD) and CO2e (gCO2e) to target, with their parts; None: not asked for."""

    cost: DimExpr | None
    co2e: DimExpr | None
    cost_parts: dict[str, DimExpr]
    co2e_parts: dict[str, DimExpr]


def _given(spec: Spec) -> tuple[bool, bool]:
    """Whether the spec sets any price, and any carbon field, on any definition: so that every
    scheme of the spec gets a cost (or a CO2e), whichever sites it runs on (a variant without
    the priced modules costs 0 USD of them, not nothing)."""
    tables = {"device": spec.devices, "link": spec.links, "pluggable": spec.pluggables, "switch": spec.switches}
    ents = [(kind, e) for kind, table in tables.items() for e in table.values()]
    ents += [("dc", d) for d in spec.dcs.values()] + [("dc", d) for v in spec.variants.values() for d in v.dcs.values()]
    set_ = {(kind, key) for kind, e in ents for key in S.MONEY_FIELDS[kind] if getattr(e, key) is not None}
    carbon = {("device", "embodied_carbon"), ("dc", "carbon_intensity")}
    return bool(set_ - carbon), bool(set_ & carbon)


def site_energy(ctx: Context, c: SchemeCost) -> dict[str, DimExpr]:
    """Energy per step drawn in each dc: its workers, modules and switch, and the link edges leaving its nodes."""
    charged: dict[Edge, DimExpr] = {}
    for ph in c.phases:
        for e in ph.charged:
            charged[e] = charged.get(e, D.zero(U.DATA)) + ph.charged_on(e)
    out = {}
    for name in ctx.spec.dcs:
        mine = {e: b for e, b in charged.items() if ctx.topology.node(e[0]).dc == name}
        parts = energy_parts(ctx, c.scheme, c.step_time, c.compute, c.sizes.dense, mine, c.period, c.transform.where, dcs=(name,))
        out[name] = D.total(parts.values(), U.ENERGY)
    return out


def _per_time(ctx: Context) -> dict[str, list[DimExpr]]:
    """Each dc's hardware paid by the time it is used: USD/s of devices, modules and switches, gCO2e/s embodied."""
    spec, f = ctx.spec, ctx.field
    out: dict[str, list[DimExpr]] = {"devices": [], "modules": [], "switches": [], "embodied": []}
    for name, dc in spec.dcs.items():
        dev = spec.devices[dc.device]
        n = C.device_count(ctx, name)  # its workers, or its replicas' GPUs
        if dev.price is not None:
            out["devices"].append(n * f(dev, "price"))
        if dev.capex is not None:
            out["devices"].append(n * f(dev, "capex") / f(dev, "depreciation"))
        if dev.embodied_carbon is not None:
            out["embodied"].append(n * f(dev, "embodied_carbon") / f(dev, "depreciation"))
        parts = [("modules", spec.pluggables.get(dc.pluggable) if dc.pluggable else None, C.module_count(ctx, name) if dc.pluggable else None)]
        parts.append(("switches", spec.switches.get(dc.switch), C.site_count(ctx, name)))  # one switch a site, as its power is counted
        for key, part, count in parts:
            if part is not None and part.price is not None:
                years = f(part, "depreciation") if part.depreciation is not None else f(dev, "depreciation")
                out[key].append(count * f(part, "price") / years)
    return out


def money(ctx: Context, c: SchemeCost) -> Money:
    """Cost and CO2e to target of one scheme's costs `c` (None where not asked for or without steps)."""
    priced, carbon = _given(ctx.spec)
    if c.time_to_target is None or not (priced or carbon):
        return Money(None, None, {}, {})
    T, steps = c.time_to_target, c.steps
    spec, f = ctx.spec, ctx.field
    grid = {name: steps * e * f(spec.dcs[name], "pue") for name, e in site_energy(ctx, c).items()}
    per_time = _per_time(ctx)
    cost_parts = {k: D.total(per_time[k], U.MONEY_RATE) * T for k in ("devices", "modules", "switches")}
    cost_parts["links"] = D.total(_link_rent(ctx), U.MONEY_RATE) * T
    cost_parts["energy"] = D.total([g * f(spec.dcs[n], "power_price") for n, g in grid.items() if spec.dcs[n].power_price is not None], U.MONEY)
    co2e_parts = {
        "operational": D.total([g * f(spec.dcs[n], "carbon_intensity") for n, g in grid.items() if spec.dcs[n].carbon_intensity is not None], U.CARBON),
        "embodied": D.total(per_time["embodied"], U.dim(CO2e=1, s=-1)) * T,
    }
    cost = D.total(cost_parts.values(), U.MONEY) if priced else None
    co2e = D.total(co2e_parts.values(), U.CARBON) if carbon else None
    return Money(cost, co2e, cost_parts if priced else {}, co2e_parts if carbon else {})


def _link_rent(ctx: Context) -> list[DimExpr]:
    """price x bandwidth of each connection of a priced link: a pair of nodes it joins, either way
    (the bandwidth of the edge: a WAN of several links in parallel rents them all)."""
    seen, out = set(), []
    for e in ctx.topology.edges():
        link = ctx.spec.link_of(e)
        pair = frozenset((e.source, e.target))
        if link is None or link.price is None or pair in seen:
            continue
        seen.add(pair)
        count = ctx.q(e.count, U.ONE) if e.count is not None else D.one()  # a group of alike edges (one per NIC)
        if e.source == e.target and len(ctx.spec.dcs) == 1:  # a ring of K sites: K WANs, but two sites share one
            count = D.emin(count, count * (count - 1) / 2)
        out.append(count * ctx.field(link, "price") * ctx.edges[(e.source, e.target)].bandwidth)  # `wan * 4`: 4 links' rent
    return out
