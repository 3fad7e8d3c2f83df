"""Variants of the sites: each resolved to complete dcs and WAN links, checked, and its graph built.

A `variant NAME [: BASE] { ... }` block says how a set of sites differs from the
declared one. A field written directly (`pluggable = none`) applies to every dc;
a stage named after a dc (`east { switch = tor2 }`) to that dc only, over the
direct fields; a WAN statement inside it (`wan east <-> west = wan400`) replaces
the link of a connection the declared sites have. Inheritance between variants
is the namespace's (a base's fields, stages and WANs first, CT109 on a cycle).

Each variant is resolved against the declared dcs, which are checked first, and
then checked as the declared sites are: what its dcs and WAN links use is
complete, the sizes stay within the limits, the schemes that run on it place
their work where it exists, every worker reaches every other; then its graph is
built, once. A diagnostic found on a variant carries a note naming it, and
points at the variant's field where the variant changed that field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from ctdsl.check.blocks import NONE, BlockChecker
from ctdsl.check.complete import Completeness
from ctdsl.check.draft import Draft
from ctdsl.check.fields import check_bound, checked_bound
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.check.placement import PlacementCheck
from ctdsl.diagnostics import DiagnosticSink, Span
from ctdsl import units as U
from ctdsl.language import schema as S
from ctdsl.model import entities as M
from ctdsl.model import expr as E


def wan_count(sink, reader, stmt) -> "E.Expr | None":
    """The count of a WAN statement's `= link * N`, a whole number (a param may set it), or None.

    None where the statement has no count (one link) and where the count is wrong
    (reported: CT202 for a count with a unit, the bound checks for the rest).
    """
    if stmt.count is None:
        return None
    typed = reader.type_expr(stmt.count)
    if typed is None:
        return None
    if typed.dim != U.ONE:
        sink.error(
            "CT202",
            f"the WAN's count of links must be a plain number, not {typed.dim.describe()}",
            stmt.count.span,
            help=f"write wan {stmt.a.text} <-> {stmt.b.text} = {stmt.link.text} * 64",
        )
        return None
    owner = f"the WAN {stmt.a.text} - {stmt.b.text}'s count"
    if not check_bound(sink, typed, "count", owner, stmt.count.span, reader.params):
        return None
    reader.note_bound(checked_bound(typed, "count", owner, stmt.count.span, reader.field_number(stmt.count)))
    reader.count_param(typed)
    return typed.expr


class Tables:
    """One set of sites with the spec's definitions, as the topology checks and `build_graph` read them."""

    def __init__(self, draft: Draft, dcs: Mapping[str, M.DataCentre], wans: Sequence[M.WanLink]):
        self.dcs, self.wans = dict(dcs), list(wans)
        self.links, self.pluggables, self.switches = draft.links, draft.pluggables, draft.switches
        self.replicas = draft.replicas


class _Noting:
    """A sink that adds a note naming the variant to every diagnostic found on it."""

    def __init__(self, sink: DiagnosticSink, note: str):
        self.sink, self.note = sink, note
        self._seen: set[tuple[str, Span | None]] = set()

    def error(self, code: str, message: str, span: Span | None, **kw) -> None:
        """Once per code and place: two dcs of a variant that use one incomplete definition are one mistake."""
        if (code, span) in self._seen:
            return
        self._seen.add((code, span))
        kw["notes"] = tuple(kw.get("notes", ())) + (self.note,)
        self.sink.error(code, message, span, **kw)

    @property
    def items(self):
        return self.sink.items

    @property
    def has_errors(self) -> bool:
        return self.sink.has_errors


class VariantCheck:
    def __init__(self, draft: Draft, ns: Namespace, sink: DiagnosticSink, blocks: BlockChecker):
        self.draft, self.ns, self.sink, self.blocks = draft, ns, sink, blocks

    def resolve(self, name: str) -> Tables | None:
        """The variant's complete dcs and WAN links, or None (reported) where a change is wrong."""
        block = self.ns.merged(name)
        if block is None:
            return None
        dcs: dict[str, M.DataCentre] = {}
        ok = True
        for dc_name, dc in self.draft.dcs.items():
            changed = self._dc(block, dc)
            ok &= changed is not None
            dcs[dc_name] = changed or dc
        wans = self._wans(block)
        if not ok or wans is None:
            return None
        return Tables(self.draft, dcs, wans)

    def _dc(self, block: MergedBlock, dc: M.DataCentre) -> M.DataCentre | None:
        changes: dict[str, object] = {}
        spans = dict(dc.spans)
        for key in S.KINDS["variant"]:
            for stage in (None, dc.name):
                fields = block.fields if stage is None else (block.stages[stage].fields if stage in block.stages else {})
                if key not in fields:
                    continue
                value = self.blocks.value(block, key, stage)
                if value is None:
                    return None  # written wrong: reported by the block checker
                changes[key] = value
                spans[key] = fields[key].span
        if "workers" in changes:
            changes["workers"] = self._workers(changes["workers"], spans["workers"])
            if changes["workers"] is None:
                return None
        if changes.get("pluggable") == NONE:
            changes["pluggable"] = None
        return replace(dc, **changes, spans=spans) if changes else dc

    def _workers(self, expr: E.Expr, span: Span) -> int | None:
        if E.symbols(expr):
            self.sink.error("CT309", "a variant's workers must be a constant; the topology cannot depend on a param", span)
            return None
        try:
            return int(round(E.evaluate(expr, self.draft.defaults())))
        except E.EvalError:
            return None

    def _wans(self, block: MergedBlock) -> list[M.WanLink] | None:
        declared = {(w.a, w.b): i for i, w in enumerate(self.draft.wans)}
        wans = list(self.draft.wans)
        ok = True
        for (a, b), stmt in block.wans.items():
            if not all(self.ns.expect(n, "dc") for n in (stmt.a, stmt.b)) or not self.ns.expect(stmt.link, "link"):
                ok = False
                continue
            if (a, b) not in declared:
                have = ", ".join(f"{w.a} -> {w.b}" for w in self.draft.wans) or "none"
                self.sink.error(
                    "CT416",
                    f"variant '{block.name}' replaces the WAN from '{a}' to '{b}', which the sites do not have",
                    stmt.span,
                    label="no such WAN connection",
                    help=f"a variant replaces the link of a declared connection ({have}); declare it with wan {a} -> {b} = NAME",
                )
                ok = False
                continue
            count = wan_count(self.sink, self.blocks.reader, stmt)
            if stmt.count is not None and count is None:
                ok = False
                continue
            wans[declared[(a, b)]] = M.WanLink(a, b, stmt.link.text, stmt.span, count)
        return wans if ok else None

    def check(self, name: str, tables: Tables, complete: Completeness, schemes: list[M.Scheme]):
        """The checks the declared sites pass, on the variant's; a sink that notes the variant."""
        noting = _Noting(self.sink, f"on variant '{name}' of the sites")
        complete.sink = noting
        try:
            for dc_name, dc in tables.dcs.items():
                if dc is not self.draft.dcs[dc_name]:
                    complete.dc(dc, own=False)
            declared = {(w.a, w.b): w.link for w in self.draft.wans}
            for w in tables.wans:
                if declared.get((w.a, w.b)) != w.link:
                    complete.wan_link(w.link, w.span, f"the WAN {w.a} -> {w.b} of variant '{name}'")
        finally:
            complete.sink = self.sink
        placement = PlacementCheck(tables, noting)
        for scheme in schemes:
            placement.scheme(scheme)
        return noting


__all__ = ["VariantCheck", "Tables", "wan_count"]
