"""CTL001: definitions that nothing uses."""

from __future__ import annotations

from typing import Iterator

from ctdsl.diagnostics import Severity, Span
from ctdsl.language import schema as S
from ctdsl.lint.context import Context, iter_fields, iter_refs
from ctdsl.lint.registry import Hit, rule
from ctdsl.model.graph import several_sites
from ctdsl.syntax import ast
# ---- CTL001 ---------------------------------------------------------------------------

_UNUSED_KINDS = ("param", "model", "device", "link", "pluggable", "switch", "variant")
_USE_HINT = {
    "model": "train it: model = {n} in a scheme",
    "device": "use it in a dc: device = {n}",
    "link": "use it in a dc (link = {n})",
    "pluggable": "put it in a dc's ports: pluggable = {n}",
    "switch": "use it in a dc (switch = {n}) or in a scheme (at = {n}, sum_at = {n})",
    "variant": "run a scheme on it: sites = {n}",
}


def _use_hint(ctx: Context, kind: str, name: str) -> str:
    """How to use `name`, in code that is valid where it is suggested: a field of the
    param's dimension, and the spec's own schemes and dcs (never made-up names)."""
    spec = ctx.spec
    if kind != "param":
        hint = _USE_HINT[kind].format(n=name)
        dcs = list(spec.dcs)
        if kind == "link" and len(dcs) >= 2:
            hint += f" or between dcs (wan {dcs[0]} <-> {dcs[1]} = {name})"
        elif kind == "link" and dcs and several_sites(spec.dcs[dcs[0]]):
            hint += f" or between its sites (wan {dcs[0]} <-> {dcs[0]} = {name})"
        return hint
    dim = spec.params[name].dim
    fields = [(k, f.name) for k, fs in S.KINDS.items() for f in fs.values() if f.type == "quantity" and f.dim == dim]
    ways = [f"in a {k}'s field ({f} = {name})" for k, f in fields[:1]] or ["in a field of its dimension"]
    schemes = list(spec.schemes)
    if len(schemes) >= 2:
        ways.append(f"in a break-even (breakeven {schemes[0]} vs {schemes[1]} over {name})")
    return "name it " + " or ".join(ways)
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
        out.update(item.link.text for item in block.items if isinstance(item, ast.Wan))  # a variant's WAN links
        edges[name] = out & known
    spec = ctx.spec
    for s in spec.schemes.values():  # what the checker resolved: the default model
        edges.setdefault(s.name, set()).update(x for x in (s.model, s.at.name, s.sum_at, s.sites) if x)
    return edges


@rule(
    "CTL001",
    "unused-definition",
    Severity.WARNING,
    "A param, model, device, link, pluggable, switch or variant that nothing uses.",
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
    `bandwidth = wan_bw`, `2 * ib.bandwidth`), the model a scheme trains (named,
    or the spec's only model), the variant it runs on (`sites = bare`) and what
    that variant names, its WAN statements' links included. A param or definition
    named only by unused definitions is unused too.

    Only definitions in the file being linted are reported: an imported file is a
    library for its importers, and the standard library's presets are never
    reported. A file with no scheme, or with no dc, is taken to be such a library
    (see "Library files" above), and the rule is quiet there. Schemes are never unused: every scheme visible from the root file
    is solved and reported; dcs are never unused: they are the topology.
    """
    spec = ctx.spec
    if not spec.schemes or not spec.dcs:
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
            help="remove it, or " + _use_hint(ctx, kind, name),
        )
