"""CTL004, CTL005: links, their bandwidth against the dcs' and their latency against light."""

from __future__ import annotations

from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Severity
from ctdsl.language.tolerances import above, below
from ctdsl.lint.context import Context
from ctdsl.lint.registry import Hit, rule
from ctdsl.lint.rules.shared import is_user, quantity, shown_label, times
from ctdsl.model import entities as M

# The speed of light in vacuum, m/s (exact, by the definition of the metre): no
# signal covers a distance faster. Light in silica fibre travels at c / n with a
# group index n of about 1.47-1.5: 2e8 m/s is the usual planning figure (5 us/km).
C_VACUUM = 299_792_458.0
C_FIBRE = 2.0e8


# ---- CTL004, CTL005 -------------------------------------------------------------------


def _propagation(ctx: Context) -> Iterator[tuple[M.Link, float, float]]:
    """(link, latency, distance) for each user link that states a distance."""
    for link in ctx.spec.links.values():
        if not is_user(ctx, link) or link.distance is None:
            continue
        lat, dist = ctx.value(link.latency), ctx.value(link.distance)
        if lat is not None and dist:
            yield link, lat, dist


@rule(
    "CTL004",
    "implausible-link",
    Severity.WARNING,
    "A link whose bandwidth or latency is implausible for its kind: a WAN faster than the intra-DC link, "
    "or a latency below light in fibre.",
    bad="""
    link wan : eth100g { bandwidth = 100 GB/s }   # the dcs' workers use ib_ndr, 50 GB/s
    link dci { bandwidth = 12.5 GB/s; latency = 1 ms; distance = 800 km }
    """,
    good="""
    link wan : eth100g { bandwidth = 12.5 GB/s }
    link dci { bandwidth = 12.5 GB/s; latency = 4 ms; distance = 800 km }
    """,
)
def implausible_link(ctx: Context) -> Iterator[Hit]:
    """
    Two checks, both at the params' defaults:

    - A WAN link (named by a `wan` statement) with more bandwidth than the
      intra-DC link of a dc it joins. Traffic between data centres is the slow
      part of the hierarchy; a WAN faster than the links inside a dc usually means
      a bandwidth in the wrong unit or the wrong preset.
    - A link with a `distance` whose latency is below the propagation delay of
      light in fibre over that distance: distance / 2e8 m/s (5 us per km, for a
      group index of about 1.5). Latency at or above distance / c is possible in
      principle (free-space or hollow-core links), so it is a warning; below
      distance / c it is impossible, and CTL005 reports it as an error instead.
    """
    spec = ctx.spec
    seen: set[tuple[str, str]] = set()
    # the WAN links and dcs of the declared sites and of every variant of them
    pairs = [(w, sites) for sites in (spec.sites, *spec.variants.values()) for w in sites.wans]
    for w, sites in pairs:
        wl = spec.links.get(w.link)
        bw = ctx.value(wl.bandwidth) if wl is not None else None
        if bw is None:
            continue
        for dc_name in (w.a, w.b):
            dc = sites.dcs.get(dc_name)
            dl = spec.links.get(dc.link) if dc is not None else None
            dbw = ctx.value(dl.bandwidth) if dl is not None else None
            if dbw is None or not above(bw, dbw) or (wl.name, dl.name) in seen:
                continue
            seen.add((wl.name, dl.name))
            span = ctx.own_span(wl, "bandwidth") if is_user(ctx, wl) else None
            yield Hit(
                f"WAN link '{wl.name}' ({quantity(bw, U.RATE)}) is faster than link '{dl.name}' "
                f"({quantity(dbw, U.RATE)}) inside dc '{dc.name}'",
                span or w.span,
                label=f"{times(bw / dbw)} the intra-DC link",
                secondary=shown_label(ctx, ctx.own_span(dc, "link") or ctx.field_span(dc, "link"), f"{quantity(dbw, U.RATE)} per worker"),
                notes=("between data centres the WAN is the slow link; one faster than the links inside a dc is unusual",),
                help="check the WAN's bandwidth and its unit (GB/s or Gb/s), and which link each dc uses",
            )
    for link, lat, dist in _propagation(ctx):
        fibre = dist / C_FIBRE
        if dist / C_VACUUM <= lat and below(lat, fibre):
            yield Hit(
                f"link '{link.name}': latency {quantity(lat, U.TIME)} over {quantity(dist, U.LENGTH)} is below the "
                f"{quantity(fibre, U.TIME)} light needs in fibre",
                ctx.at(link, "latency"),
                label=f"below distance / 2e8 m/s = {quantity(fibre, U.TIME)}",
                secondary=shown_label(ctx, ctx.field_span(link, "distance"), "distance"),
                notes=("light in fibre covers about 200 km per ms (5 us per km)",),
                help=f"a fibre link of {quantity(dist, U.LENGTH)} has a one-way latency of at least {quantity(fibre, U.TIME)}; "
                "check the latency, the distance and their units",
            )


@rule(
    "CTL005",
    "faster-than-light",
    Severity.ERROR,
    "A link's latency is below the time light in vacuum takes over its stated distance.",
    bad="""
    link dci { bandwidth = 12.5 GB/s; latency = 100 us; distance = 800 km }
    """,
    good="""
    link dci { bandwidth = 12.5 GB/s; latency = 4 ms; distance = 800 km }
    """,
)
def faster_than_light(ctx: Context) -> Iterator[Hit]:
    """
    No signal covers a distance faster than light in vacuum, c = 299,792,458 m/s.
    A link whose latency is below distance / c is impossible, so every figure
    computed from it is wrong: this is an error, not a warning. The usual cause
    is a unit (us for ms, m for km). A latency between distance / c and the
    fibre delay distance / 2e8 m/s is CTL004's warning. Values are taken at the
    params' defaults.
    """
    for link, lat, dist in _propagation(ctx):
        floor = dist / C_VACUUM
        if below(lat, floor):
            yield Hit(
                f"link '{link.name}': latency {quantity(lat, U.TIME)} over {quantity(dist, U.LENGTH)} is faster than light "
                f"({quantity(floor, U.TIME)} in vacuum)",
                ctx.at(link, "latency"),
                label=f"below distance / c = {quantity(floor, U.TIME)}",
                secondary=shown_label(ctx, ctx.field_span(link, "distance"), "distance"),
                help=f"over {quantity(dist, U.LENGTH)} a fibre link takes about {quantity(dist / C_FIBRE, U.TIME)}; "
                "check the latency and distance units (us or ms, m or km)",
            )
