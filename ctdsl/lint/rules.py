"""The lint rules: specs that parse and check, but look physically wrong.

Each rule is a function over a `Context` (a checked spec, its syntax trees and its
text) that yields `Hit`s; the registry gives them the rule's code and severity.
A rule's docstring is its explanation in docs/lint-rules.md, and says how its
numbers are judged. Numbers are taken at the params' defaults. Definitions from
the standard library (`<std>/...`) are presets, correct by construction, and are
never reported themselves; a user's definition that extends one is.

Constants a rule compares against are named here, with where they come from.
"""

from __future__ import annotations

import re
from typing import Iterator

from ctdsl import units as U
from ctdsl.diagnostics import Label, Severity, Span
from ctdsl.language import schema as S
from ctdsl.language.transforms import optical_needs, optics_performs_transform
from ctdsl.lint.context import Context, iter_fields, iter_refs
from ctdsl.lint.registry import Hit, rule
from ctdsl.model import entities as M
from ctdsl.model.payload import dense_bytes, index_bytes, payload_bytes
from ctdsl.syntax import ast

# The speed of light in vacuum, m/s (exact, by the definition of the metre): no
# signal covers a distance faster. Light in silica fibre travels at c / n with a
# group index n of about 1.47-1.5: 2e8 m/s is the usual planning figure (5 us/km).
C_VACUUM = 299_792_458.0
C_FIBRE = 2.0e8

# A stage of a module may be faster than the line rate it serves (engineering
# headroom); more than this factor above it, the figure can never matter and is
# more often a unit slip (Gb/s written GB/s is 8x, a prefix slip 1000x).
STAGE_HEADROOM = 2.0

# A linear sweep over this ratio or more (three decades) puts almost all of its
# points in the top decade.
LIN_SWEEP_DECADES = 1000.0

# Two rates "match" within this relative tolerance (bit/byte slips are exact 8x).
MATCH = 0.02


def _q(value: float, dim: U.Dim) -> str:
    return U.format_quantity(value, dim)


def _x(factor: float) -> str:
    return f"{factor:,.0f}x" if factor >= 1000 else f"{factor:.3g}x"


def _near(a: float, b: float, tol: float = MATCH) -> bool:
    return abs(a - b) <= tol * max(abs(a), abs(b))


def _user(ctx: Context, d: M.Definition) -> bool:
    return not d.from_std and not ctx.is_std(d.file)


def _label(ctx: Context, span: Span | None, text: str) -> tuple[Label, ...]:
    return (Label(span, text),) if ctx.shown(span) else ()


# ---- CTL001 ---------------------------------------------------------------------------

_UNUSED_KINDS = ("param", "model", "device", "link", "pluggable", "switch")
_USE_HINT = {
    "param": "name it in a field (bandwidth = {n}) or a break-even (breakeven a vs b over {n})",
    "model": "train it: model = {n} in a scheme",
    "device": "use it in a dc: device = {n}",
    "link": "use it in a dc (link = {n}) or between dcs (wan a <-> b = {n})",
    "pluggable": "put it in a dc's ports: pluggable = {n}",
    "switch": "use it in a dc (switch = {n}) or in a scheme (at = {n}, sum_at = {n})",
}
# field types whose words are choices or flags, never names of definitions
_NOT_NAMES = ("ops", "enum", "bool", "string")


def _references(ctx: Context) -> dict[str, set[str]]:
    """name -> the definitions and params its block names (bases and references)."""
    known = set(ctx.blocks) | set(ctx.param_nodes)
    edges: dict[str, set[str]] = {}
    for name, block in ctx.blocks.items():
        out: set[str] = set()
        if block.base is not None:
            out.add(block.base.text)
        for stage, f in iter_fields(block.items):
            table = S.STAGES.get(stage or "", {}) if stage else S.KINDS.get(block.kind, {})
            spec = table.get(f.key.text)
            if spec is not None and spec.type in _NOT_NAMES:
                continue
            out.update(r.parts[0].text for r in iter_refs(f.value))
        edges[name] = out & known
    spec = ctx.spec
    for s in spec.schemes.values():  # what the checker resolved: the default model
        edges.setdefault(s.name, set()).update(x for x in (s.model, s.at.name, s.sum_at) if x)
    return edges


@rule(
    "CTL001",
    "unused-definition",
    Severity.WARNING,
    "A param, model, device, link, pluggable or switch that nothing uses.",
    bad="""
    link ib_hdr { bandwidth = 25 GB/s; latency = 10 us }   # left over: every dc uses ib_ndr
    """,
    good="""
    # remove it, or use it: dc east { ...; link = ib_hdr }
    """,
)
def unused_definition(ctx: Context) -> Iterator[Hit]:
    """
    A definition that no scheme, dc, WAN link, break-even or simulation reaches is
    dead text: a reader takes it for part of the study, and an edit to it changes
    nothing. Often it is the definition that was meant to be used, with a typo or a
    stale name where it should be named.

    What counts as used: every scheme, dc and the simulation block (they are the
    study); every link named by a `wan` statement; every param named by a
    break-even; and, from there, whatever a used definition names: its base
    (`link wan : eth100g`), the definitions and params in its fields (`link = ib`,
    `bandwidth = wan_bw`, `2 * ib.bandwidth`), and the model a scheme trains (named,
    or the spec's only model). A param or definition named only by unused
    definitions is unused too.

    Only definitions in the file being linted are reported: an imported file is a
    library for its importers, and the standard library's presets are never
    reported. A file with no scheme is taken to be such a library, and the rule is
    quiet there. Schemes are never unused: every scheme visible from the root file
    is solved and reported; dcs are never unused: they are the topology.
    """
    spec = ctx.spec
    if not spec.schemes:
        return
    edges = _references(ctx)
    roots: set[str] = set(spec.schemes) | set(spec.dcs)
    if spec.simulation is not None:
        roots.add(spec.simulation.name)
    roots |= {w.link for w in spec.wans}
    roots |= {b.over for b in spec.breakevens}
    used: set[str] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in used:
            continue
        used.add(n)
        stack.extend(edges.get(n, ()))
    kind_of = {n: b.kind for n, b in ctx.blocks.items()}
    kind_of.update({n: "param" for n in ctx.param_nodes})
    named_by: dict[str, list[str]] = {}
    for src, targets in edges.items():
        for t in targets:
            named_by.setdefault(t, []).append(src)
    candidates: list[tuple[str, Span]] = [(p.name, p.span) for p in spec.params.values() if p.span is not None]
    candidates += [(n, b.name.span) for n, b in ctx.blocks.items() if b.kind in _UNUSED_KINDS]
    for name, span in sorted(candidates, key=lambda c: (c[1].line, c[1].col)):
        kind = kind_of.get(name)
        if kind not in _UNUSED_KINDS or name in used or span.file != ctx.root or not ctx.shown(span):
            continue
        users = sorted(named_by.get(name, []))
        notes: tuple[str, ...] = ()
        if users:
            named = ", ".join(f"{kind_of.get(u, 'definition')} '{u}'" for u in users)
            notes = (f"only named by unused {named}",)
        yield Hit(
            f"{kind} '{name}' is defined but never used",
            span,
            label="never used",
            notes=notes,
            help="remove it, or " + _USE_HINT[kind].format(n=name),
        )


# ---- CTL002 ---------------------------------------------------------------------------


@rule(
    "CTL002",
    "module-rate-never-binds",
    Severity.WARNING,
    "A pluggable's line rate above its host port, or a stage far faster than the line rate: it can never bind.",
    bad="""
    pluggable qsfp {
      port { rate = 25 GB/s; host = 12.5 GB/s }
      optics { rate = 140 GB/s }      # meant 14 GB/s
      ...
    }
    """,
    good="""
    pluggable qsfp {
      port { rate = 25 GB/s; host = 50 GB/s }
      optics { rate = 14 GB/s }
      ...
    }
    """,
)
def module_rate_never_binds(ctx: Context) -> Iterator[Hit]:
    """
    A module's stream passes its stages in a pipeline and the slowest sets the
    rate. The port stage's `rate` is the module's line rate, capped by the `host`
    port it sits in: a line rate above the host port can never bind (the module
    runs at the host's rate), so one of the two is likely mis-typed.

    The optics and FPGA stages serve the line: a stage somewhat faster than the
    line rate is ordinary headroom (the flagship's 40 GB/s FPGA on a 25 GB/s line),
    but one more than twice as fast never matters to any result and is more often
    a unit slip (Gb/s written as GB/s is a factor of 8, a prefix slip 1000). Such a
    stage is reported. Rates are compared at the params' defaults.
    """
    for plug in ctx.spec.pluggables.values():
        if not _user(ctx, plug):
            continue
        port = plug.stages.get("port")
        rate = ctx.value(port.rate) if port is not None else None
        if rate is None:
            continue
        host = ctx.value(port.host)
        line = rate
        if host is not None:
            line = min(rate, host)
            if rate > host * (1 + 1e-9):
                yield Hit(
                    f"pluggable '{plug.name}': line rate {_q(rate, U.RATE)} is above its host port's "
                    f"{_q(host, U.RATE)}, so it can never bind",
                    ctx.at(plug, "port.rate", "port"),
                    label=f"capped at {_q(host, U.RATE)} by the host port",
                    secondary=_label(ctx, ctx.field_span(plug, "port.host"), "host port"),
                    notes=("the module runs at min(rate, host): the line rate written here changes nothing",),
                    help="check both rates and their units (GB/s or Gb/s); the line rate is the module's own, "
                    "the host rate is the port it sits in",
                )
        for sname in ("optics", "fpga"):
            st = plug.stages.get(sname)
            r = ctx.value(st.rate) if st is not None else None
            if r is None or r <= STAGE_HEADROOM * line:
                continue
            yield Hit(
                f"pluggable '{plug.name}': {sname} rate {_q(r, U.RATE)} is {_x(r / line)} the line rate "
                f"{_q(line, U.RATE)}, so it can never bind",
                ctx.at(plug, f"{sname}.rate", sname),
                label=f"{_x(r / line)} the line rate",
                secondary=_label(ctx, ctx.field_span(plug, "port.rate"), "line rate"),
                notes=(f"the stage never sees more than the line rate; a bit/byte slip would make it {_q(r / 8, U.RATE)}",),
                help=f"check the {sname} rate and its unit; a stage faster than the line it serves only needs "
                f"to be written if it could bind",
            )


# ---- CTL003 ---------------------------------------------------------------------------

@rule(
    "CTL003",
    "charged-transform-over-budget",
    Severity.WARNING,
    "A transform charged to a module needs more FLOPs per byte than the module's budget per byte.",
    bad="""
    pluggable qsfp { port { rate = 25 GB/s }; compute { budget = 50 GFLOP/s }; ops = [dct] }
    scheme band { payload = band; fraction = 1/16; cost = 10 FLOP/B; at = qsfp; ... }
    """,
    good="""
    # let the optics perform the DCT (free), raise the budget, or run it on the GPU
    pluggable qsfp { port { rate = 25 GB/s }; optics { rate = 25 GB/s; performs = [dct] }; ops = [dct] }
    """,
)
def charged_transform_over_budget(ctx: Context) -> Iterator[Hit]:
    """
    A scheme placed on a pluggable (`at = qsfp`) runs its transform in the module.
    Unless the optics performs it (`optics { performs = [dct] }`), its arithmetic is
    charged against the compute stage's budget. The budget per byte is budget /
    line rate: a 50 GFLOP/s budget on a 25 GB/s module affords 2 FLOP per byte.
    A transform that needs more (a DCT costs about 10 to 15 FLOP per BF16 byte)
    makes the compute stage the slowest: the module then runs at budget / cost,
    below its line rate, by the factor reported. That may be the point of a study,
    but more often a budget was given in the wrong unit or the optics was meant to
    do the work; if it is intended, suppress the finding on that line.

    A module with no compute stage has no budget: any charged cost binds it.
    Values are taken at the params' defaults.
    """
    spec = ctx.spec
    for s in spec.schemes.values():
        if s.at.kind != "pluggable" or s.at.name not in spec.pluggables:
            continue
        plug = spec.pluggables[s.at.name]
        cost = ctx.value(s.cost)
        if not cost:
            continue
        optics = plug.stages.get("optics")
        if optics is not None and optics_performs_transform(s.payload, optics.performs):
            continue  # the optics performs the transform: it costs the budget nothing
        port = plug.stages.get("port")
        line = ctx.value(plug.line_rate) if port is not None and port.rate is not None else None
        if not line:
            continue
        compute = plug.stages.get("compute")
        budget = ctx.value(compute.budget) if compute is not None else None
        where = ctx.at(s, "at")
        cost_label = _label(ctx, ctx.own_span(s, "cost"), f"{cost:g} FLOP/B")
        if not budget:
            yield Hit(
                f"scheme '{s.name}' charges {cost:g} FLOP/B to pluggable '{plug.name}', which has no compute budget",
                where,
                label=f"runs the transform in '{plug.name}'",
                secondary=cost_label,
                help="give the module a compute stage (compute { budget = 50 GFLOP/s }), let its optics "
                "perform the transform, or run it on the GPU (at = gpu)",
            )
            continue
        per_byte = budget / line
        if cost <= per_byte * (1 + 1e-9):
            continue
        factor = cost / per_byte
        yield Hit(
            f"scheme '{s.name}': its transform needs {cost:g} FLOP/B, but pluggable '{plug.name}' affords "
            f"{per_byte:.3g} FLOP/B ({_q(budget, U.OPS_RATE)} / {_q(line, U.RATE)}): it binds the module by {_x(factor)}",
            where,
            label=f"charged to '{plug.name}'",
            secondary=cost_label + _label(ctx, ctx.field_span(plug, "compute.budget"), f"{per_byte:.3g} FLOP/B at the line rate"),
            notes=(
                f"the compute stage runs at {_q(budget / cost, U.RATE)}, {_x(factor)} below the line rate "
                f"{_q(line, U.RATE)}",
            ),
            help=f"a budget of {_q(cost * line, U.OPS_RATE)} keeps up with the line; or let the optics perform "
            f"the transform (performs = [{', '.join(optical_needs(s.payload)) or 'dct'}]), or run it on the GPU (at = gpu)",
        )


# ---- CTL004, CTL005 -------------------------------------------------------------------


def _propagation(ctx: Context) -> Iterator[tuple[M.Link, float, float]]:
    """(link, latency, distance) for each user link that states a distance."""
    for link in ctx.spec.links.values():
        if not _user(ctx, link) or link.distance is None:
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
    for w in spec.wans:
        wl = spec.links.get(w.link)
        bw = ctx.value(wl.bandwidth) if wl is not None else None
        if bw is None:
            continue
        for dc_name in (w.a, w.b):
            dc = spec.dcs.get(dc_name)
            dl = spec.links.get(dc.link) if dc is not None else None
            dbw = ctx.value(dl.bandwidth) if dl is not None else None
            if dbw is None or bw <= dbw * (1 + 1e-9) or (wl.name, dl.name) in seen:
                continue
            seen.add((wl.name, dl.name))
            span = ctx.own_span(wl, "bandwidth") if _user(ctx, wl) else None
            yield Hit(
                f"WAN link '{wl.name}' ({_q(bw, U.RATE)}) is faster than link '{dl.name}' "
                f"({_q(dbw, U.RATE)}) inside dc '{dc.name}'",
                span or w.span,
                label=f"{_x(bw / dbw)} the intra-DC link",
                secondary=_label(ctx, ctx.own_span(dc, "link") or ctx.field_span(dc, "link"), f"{_q(dbw, U.RATE)} per worker"),
                notes=("between data centres the WAN is the slow link; one faster than the links inside a dc is unusual",),
                help="check the WAN's bandwidth and its unit (GB/s or Gb/s), and which link each dc uses",
            )
    for link, lat, dist in _propagation(ctx):
        fibre = dist / C_FIBRE
        if dist / C_VACUUM <= lat < fibre * (1 - 1e-9):
            yield Hit(
                f"link '{link.name}': latency {_q(lat, U.TIME)} over {_q(dist, U.LENGTH)} is below the "
                f"{_q(fibre, U.TIME)} light needs in fibre",
                ctx.at(link, "latency"),
                label=f"below distance / 2e8 m/s = {_q(fibre, U.TIME)}",
                secondary=_label(ctx, ctx.field_span(link, "distance"), "distance"),
                notes=("light in fibre covers about 200 km per ms (5 us per km)",),
                help=f"a fibre link of {_q(dist, U.LENGTH)} has a one-way latency of at least {_q(fibre, U.TIME)}; "
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
        if lat < floor * (1 - 1e-9):
            yield Hit(
                f"link '{link.name}': latency {_q(lat, U.TIME)} over {_q(dist, U.LENGTH)} is faster than light "
                f"({_q(floor, U.TIME)} in vacuum)",
                ctx.at(link, "latency"),
                label=f"below distance / c = {_q(floor, U.TIME)}",
                secondary=_label(ctx, ctx.field_span(link, "distance"), "distance"),
                help=f"over {_q(dist, U.LENGTH)} a fibre link takes about {_q(dist / C_FIBRE, U.TIME)}; "
                "check the latency and distance units (us or ms, m or km)",
            )


# ---- CTL006 ---------------------------------------------------------------------------

# rates written in names, one '_'-separated part at a time: eth100g, 100gbe, wan_400g,
# gbe25, eth1p6t (lower case; 'gb' alone is ambiguous and is not read)
_NAME_RATE = re.compile(r"[a-z]*?(\d+(?:p\d+)?)(g|t)(?:be|bps|bit|ige|e)?")
_NAME_RATE_AFTER = re.compile(r"(?:gbe|gige|gbit)(\d+(?:p\d+)?)")
# rates written in comments: 100 GbE, 400G, 100 Gb/s, 1.6T, 12.5 GB/s
_COMMENT_RATE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(GbE|GBASE|GigE|Gbps|Gbit/s|Gb/s|Gbit|G|Tb/s|Tbps|T|GB/s|GBps|TB/s)(?![A-Za-z0-9/])"
)


def _name_rates(name: str) -> list[tuple[float, str]]:
    """Nominal rates (bits/s) a definition's name states, with how it was written."""
    low = name.lower()
    out = []
    for part in re.split(r"_+", low):
        m = _NAME_RATE.fullmatch(part)
        if m is None:
            m2 = _NAME_RATE_AFTER.fullmatch(part)
            if m2 is None:
                continue
            num, prefix = m2.group(1), "g"
        else:
            num, prefix = m.group(1), m.group(2)
        value = float(num.replace("p", "."))
        out.append((value * (1e12 if prefix == "t" else 1e9), part))
    return out


def _comment_rates(text: str) -> list[tuple[float, bool, str]]:
    """(rate in B/s if read as written, written in bits?, the text) for each rate in a comment."""
    out = []
    for m in _COMMENT_RATE.finditer(text):
        value, unit = float(m.group(1)), m.group(2)
        scale = 1e12 if unit.startswith("T") else 1e9
        bits = unit not in ("GB/s", "GBps", "TB/s")
        out.append((value * scale / (8 if bits else 1), bits, m.group(0)))
    return out


def _per_unit_slip(key: str, node: ast.Value | None) -> str | None:
    """'per byte' or 'per bit' when a *_per_bit / *_per_byte field is written in the other."""
    if not isinstance(node, ast.Number) or not node.unit or "/" not in node.unit:
        return None
    atom = node.unit.rsplit("/", 1)[1]
    unit = U.UNITS.get(atom)
    if unit is None or unit.dim != U.DATA:
        return None
    in_bits = atom in ("b", "bit", "bits") or atom.endswith("b")
    if key.endswith("_per_bit") and not in_bits:
        return "per byte"
    if key.endswith("_per_byte") and in_bits:
        return "per bit"
    return None


@rule(
    "CTL006",
    "bit-byte-slip",
    Severity.WARNING,
    "A value that looks like a bit/byte confusion, e.g. a link called 100 GbE with a bandwidth of 100 GB/s.",
    bad="""
    link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }   # 100 GbE
    link ib { bandwidth = 50 GB/s; latency = 10 us; energy_per_bit = 15 pJ/B }
    """,
    good="""
    link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }  # 100 GbE = 100 Gb/s
    link ib { bandwidth = 50 GB/s; latency = 10 us; energy_per_bit = 15 pJ/bit }
    """,
)
def bit_byte_slip(ctx: Context) -> Iterator[Hit]:
    """
    Network rates are quoted in bits (100 GbE carries 100 Gb/s = 12.5 GB/s), ctdsl
    works in bytes, and a factor of 8 is easy to lose. A link (or a pluggable) is
    flagged when its name, the name of a block it extends, or a comment on its
    lines (or on the comment lines just above it) states a rate, and its bandwidth
    (a pluggable's line rate) is that rate read in the other unit: exactly 8x too
    high (100 GbE with 100 GB/s) or 8x too low (a comment of 400 GB/s with 50 GB/s).
    A bandwidth that matches some stated
    rate is never flagged, nor is one that differs by another factor (two links
    bonded, a share of a link): those are not unit slips.

    Names are read as an Ethernet-style rate in bits: `eth100g`, `100gbe`,
    `wan_400g`, `gbe25` (the standard library's `eth100g` is 12.5 GB/s, correct).
    Comments are read with their units: `100 GbE`, `400G`, `100 Gb/s`, `1.6T` are
    bits; `12.5 GB/s` is bytes.

    Also flagged: a field named per bit written per byte, or the reverse
    (`energy_per_bit = 15 pJ/B` is 1.875 pJ/bit, 8x off if the datasheet said
    15 pJ/bit). Values are taken at the params' defaults.
    """
    spec = ctx.spec
    rated: list[tuple[M.Definition, str, str]] = [(link, "bandwidth", "bandwidth") for link in spec.links.values()]
    rated += [(plug, "port.rate", "line rate") for plug in spec.pluggables.values()]
    for d, key, what in rated:
        if not _user(ctx, d):
            continue
        expr = d.bandwidth if isinstance(d, M.Link) else (d.stages["port"].rate if "port" in d.stages else None)
        bw = ctx.value(expr)
        block = ctx.blocks.get(d.name)
        if bw is None or block is None:
            continue
        stated: list[tuple[float, bool, str, Span | None]] = []  # (B/s as written, bits?, text, where)
        for name in [d.name] + ctx.bases(d.name):
            for rate, part in _name_rates(name):
                stated.append((rate / 8, True, f"'{name}'", None))
        for span, text in ctx.comments_of(block):
            for rate, bits, shown in _comment_rates(text):
                stated.append((rate, bits, shown, span))
        if not stated or any(_near(bw, r) for r, _, _, _ in stated):
            continue
        kind = "link" if isinstance(d, M.Link) else "pluggable"
        for rate, bits, shown, where in stated:
            slipped = rate * 8 if bits else rate / 8
            if not _near(bw, slipped):
                continue
            said = f"the name {shown}" if where is None else f"the comment '{shown}'"
            if bits:
                message = (
                    f"{kind} '{d.name}': {said} means {_q(rate, U.RATE)}, but its {what} is "
                    f"{_q(bw, U.RATE)}, 8x more: bits read as bytes?"
                )
            else:
                message = (
                    f"{kind} '{d.name}': {said} says {_q(rate, U.RATE)}, but its {what} is "
                    f"{_q(bw, U.RATE)}, 8x less: bytes read as bits?"
                )
            written = "rate" if key == "port.rate" else key
            yield Hit(
                message,
                ctx.at(d, key, key.split(".")[0]),
                label=f"8x {'above' if bits else 'below'} the stated rate",
                secondary=_label(ctx, where, "rate stated here") if where is not None else (),
                notes=("1 B = 8 b: 100 GbE carries 100 Gb/s = 12.5 GB/s",),
                help=f"write {written} = {_q(rate, U.RATE)}"
                + (f" (or {_q(rate * 8, U.RATE).replace('B/s', 'b/s')})" if bits else ""),
            )
            break
    for name, block in ctx.blocks.items():
        d = spec.definition(name)
        if d is None or not _user(ctx, d):
            continue
        for stage, f in iter_fields(block.items):
            key = f.key.text
            other = _per_unit_slip(key, f.value)
            if other is None or not ctx.shown(f.span):
                continue
            num = f.value
            assert isinstance(num, ast.Number)
            unit = U.parse_unit(num.unit)
            base = float(num.value * unit.scale)  # J/B
            shown_as = f"{base / 8 / 1e-12:.4g} pJ/bit" if other == "per byte" else f"{base / 1e-12:.4g} pJ/B"
            yield Hit(
                f"{block.kind} '{name}': {key} is written {other} ({num.text} {num.unit} = {shown_as})",
                num.unit_span if ctx.shown(num.unit_span) else f.span,
                label=f"a unit {other}",
                notes=("1 B = 8 b: a value per byte is 8x the same value per bit",),
                help=f"if the figure is {'per bit' if other == 'per byte' else 'per byte'}, write it so: "
                f"{num.text} {num.unit.rsplit('/', 1)[0]}/{'bit' if other == 'per byte' else 'B'}",
            )


# ---- CTL007 ---------------------------------------------------------------------------


@rule(
    "CTL007",
    "compression-inflates",
    Severity.WARNING,
    "A 'compression' that sends at least as many bytes as the dense buffer.",
    bad="""
    scheme topk { payload = topk; fraction = 1/2; index = 8 B; ... }   # 2 + 8 bytes for half the values
    """,
    good="""
    scheme topk { payload = topk; fraction = 1/16; chunk = 65536; ... }  # 2-byte positions
    """,
)
def compression_inflates(ctx: Context) -> Iterator[Hit]:
    """
    A compressed payload that is not smaller than the dense buffer (v bytes per
    value times P) costs its transform and saves nothing. Top-k sends each kept
    value with its position: keeping a fraction f at v bytes with i-byte positions
    sends f (v + i) bytes per parameter, more than v once f > v / (v + i); top-k at
    1/2 with 8-byte positions sends 5 bytes per BF16 parameter against 2. DeMo's
    k values per chunk inflate the same way, and quantising to as many bits as a
    value already has saves nothing. Payloads use the model layer's formulas
    (`ctdsl.model.payload`) at the params' defaults.
    """
    spec = ctx.spec
    for s in spec.schemes.values():
        if s.payload == "dense" or s.model not in spec.models:
            continue
        model = spec.models[s.model]
        try:
            sent, dense = ctx.value(payload_bytes(s, model)), ctx.value(dense_bytes(model))
        except (TypeError, AttributeError):  # an incomplete model: the checker has said so
            continue
        if sent is None or not dense or sent < dense * (1 - 1e-12):
            continue
        ratio = sent / dense
        notes: list[str] = []
        v = ctx.value(model.bytes_per_value)
        if s.payload in ("topk", "demo") and v:
            i = ctx.value(index_bytes(s, model))
            if i is not None and s.payload == "topk":
                f = ctx.value(s.fraction)
                notes.append(
                    f"top-k sends {f:.4g} x ({v:g} B value + {i:g} B position) = {f * (v + i):.4g} B per parameter; "
                    f"dense sends {v:g} B"
                )
                help_ = f"keep a fraction below {v / (v + i):.3g}, or send narrower positions (a 2 B index addresses a chunk of 65,536)"
            else:
                help_ = "keep fewer values per chunk (k), or send narrower positions (index)"
        elif s.payload == "quantise":
            help_ = "quantise to fewer bits than a value has (e.g. bits = 2 b for 8x)"
        else:
            help_ = "keep a smaller fraction"
        yield Hit(
            f"scheme '{s.name}' sends {_q(sent, U.DATA)} per sync, {_x(ratio)} the dense {_q(dense, U.DATA)}: "
            f"its compression {'inflates' if ratio > 1 + 1e-12 else 'saves nothing'}",
            ctx.at(s, "payload"),
            label=f"{_x(ratio)} the dense payload",
            secondary=sum((_label(ctx, ctx.own_span(s, k), k) for k in ("fraction", "index", "k", "bits")), ()),
            notes=tuple(notes),
            help=help_,
        )


# ---- CTL008 ---------------------------------------------------------------------------


@rule(
    "CTL008",
    "missing-steps-to-target",
    Severity.WARNING,
    "A break-even is requested, but a scheme it compares has no steps to target.",
    bad="""
    scheme band { payload = band; fraction = 1/16; collective = hier_allgather }
    breakeven band vs adamw over wan_bw
    """,
    good="""
    scheme band { payload = band; fraction = 1/16; collective = hier_allgather; steps = 11500 }
    breakeven band vs adamw over wan_bw
    """,
)
def missing_steps(ctx: Context) -> Iterator[Hit]:
    """
    A break-even compares time to target, steps x step time: where two schemes
    need different numbers of steps (top-k and DiLoCo usually need more), the
    bandwidth at which they tie depends on those numbers. A scheme without
    `steps` has no time to target, so the break-even can only compare step times,
    which is rarely the question asked. Steps to target are measured by
    experiment and given as inputs.
    """
    spec = ctx.spec
    for b in spec.breakevens:
        for name in dict.fromkeys((b.x, b.y)):
            s = spec.schemes.get(name)
            if s is None or s.steps is not None:
                continue
            yield Hit(
                f"break-even of '{b.x}' vs '{b.y}' needs steps to target, but scheme '{name}' has none",
                b.span,
                label="compares time to target",
                secondary=_label(ctx, s.span, "no steps"),
                notes=("time to target = steps to target x step time",),
                help=f"add steps = N to scheme '{name}' (measured by experiment)",
            )


# ---- CTL009 ---------------------------------------------------------------------------


@rule(
    "CTL009",
    "sweep-oddity",
    Severity.WARNING,
    "A sweep with one point, or a linear sweep over three decades or more.",
    bad="""
    param wan_bw = 12.5 GB/s in 1 GB/s .. 100 GB/s lin 1
    param budget = 50 GFLOP/s in 1 GFLOP/s .. 10 TFLOP/s lin 20
    """,
    good="""
    param wan_bw = 12.5 GB/s in 1 GB/s .. 100 GB/s log 21
    param budget = 50 GFLOP/s in 1 GFLOP/s .. 10 TFLOP/s log 20
    """,
)
def sweep_oddity(ctx: Context) -> Iterator[Hit]:
    """
    A sweep of one point over a range says two things that disagree: a range to
    explore, and a single value. A linear sweep from lo to hi with hi / lo of 1000
    or more puts nearly all of its points in the top decade (0.1 to 1000 GB/s in
    41 linear points has one point below 25 GB/s): a log sweep was likely meant.

    A log sweep over a range that includes zero cannot be taken at all; the
    checker rejects it (CT307), and lint reports that error under the checker's
    code.
    """
    for p in ctx.spec.params.values():
        node = ctx.param_nodes.get(p.name)
        if node is None or node.range is None or not ctx.shown(node.range.span) or p.lo is None or p.hi is None:
            continue
        span = node.range.span
        ends = f"{_q(p.lo, p.dim)} .. {_q(p.hi, p.dim)}"
        if p.count == 1:
            yield Hit(
                f"param '{p.name}' sweeps a single point over {ends}",
                span,
                label="one point",
                help="sweep at least two points (e.g. lin 10), or drop the range and keep the default",
            )
        elif p.spacing == "lin" and p.lo > 0 and p.hi / p.lo >= LIN_SWEEP_DECADES:
            top = (p.hi - p.hi / 10) / (p.hi - p.lo) * 100
            yield Hit(
                f"param '{p.name}' sweeps {ends} linearly: {_x(p.hi / p.lo)}, with {top:.0f}% of its points in the top decade",
                span,
                label="lin over three decades or more",
                help=f"sweep it with log: in {ends} log {p.count or 21}",
            )


# ---- CTL010 ---------------------------------------------------------------------------


@rule(
    "CTL010",
    "degenerate-hierarchy",
    Severity.WARNING,
    "A dc with a single worker under a hierarchical collective, whose intra-DC phases then do nothing.",
    bad="""
    dc east { workers = 1; device = gpu; link = ib_ndr; switch = tor }
    scheme adamw { payload = dense; collective = hier_allreduce; ... }
    """,
    good="""
    dc east { workers = 8; device = gpu; link = ib_ndr; switch = tor }
    # or, with one worker per dc: collective = ring_allreduce
    """,
)
def degenerate_hierarchy(ctx: Context) -> Iterator[Hit]:
    """
    A hierarchical collective (hier_allreduce, hier_allgather) reduces or gathers
    inside each dc, exchanges between dcs, then distributes inside each dc. With
    one worker in a dc the inside phases move nothing and the hierarchy is a flat
    exchange between data centres. That is rarely what was meant: usually the
    worker count is a placeholder, or a flat collective (ring_allreduce,
    allgather) was intended.
    """
    spec = ctx.spec
    hier = [s for s in spec.schemes.values() if s.collective in ("hier_allreduce", "hier_allgather")]
    if not hier:
        return
    first = hier[0]
    for dc in spec.dcs.values():
        if not _user(ctx, dc) or dc.workers != 1:
            continue
        names = ", ".join(f"'{s.name}'" for s in hier[:3]) + (" and others" if len(hier) > 3 else "")
        yield Hit(
            f"dc '{dc.name}' has a single worker, so the intra-DC phases of {first.collective} "
            f"(scheme{'s' * (len(hier) > 1)} {names}) do nothing",
            ctx.at(dc, "workers"),
            label="one worker",
            secondary=_label(ctx, ctx.own_span(first, "collective"), first.collective),
            notes=("with one worker per dc the hierarchy is a flat exchange between data centres",),
            help="give the dc its real number of workers, or use a flat collective (ring_allreduce, allgather)",
        )


# ---- CTL011 (the runner applies it) ---------------------------------------------------

UNUSED_SUPPRESSION_DOC = """
A suppression comment silences the findings of the named rules on its own line:
`# ctdsl: ignore[CTL003]`, or several codes, `# ctdsl: ignore[CTL003, CTL007]`.
Once the problem is fixed, or the line moves, a comment left behind suppresses
nothing, and would hide the next real finding there. A suppression is reported
when none of its codes (of rules that ran) had a finding on its line, or when
it names a code that does not exist. Checker errors (CT codes) cannot be
suppressed: a spec that does not check cannot be solved. The rule looks only at
files linted as roots (given on the command line or found in a directory), and
only at those that checked.
"""

rule(
    "CTL011",
    "unused-suppression",
    Severity.WARNING,
    "A `# ctdsl: ignore[...]` comment that suppresses nothing, or names an unknown code.",
    bad="""
    link ib { bandwidth = 50 GB/s; latency = 10 us }   # ctdsl: ignore[CTL006]
    """,
    good="""
    link ib { bandwidth = 50 GB/s; latency = 10 us }
    """,
    doc=UNUSED_SUPPRESSION_DOC,
)(None)
