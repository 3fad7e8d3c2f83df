"""The namespace of a spec: every param and block, and blocks with their bases merged.

All definitions share one namespace, across the root file and everything it
imports; a name defined twice is an error that points at both places. A block
`link wan : eth100g { ... }` starts from its base's fields and stages and
overrides them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ctdsl import limits
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.syntax import ast


@dataclass
class Definition:
    name: str
    kind: str  # param, or a block kind
    node: Union[ast.Param, ast.Block]
    file: str
    from_std: bool
    root: bool  # defined in the root file

    @property
    def span(self) -> Span:
        return self.node.name.span


@dataclass
class MergedStage:
    name: str
    span: Span
    fields: dict[str, ast.Field] = field(default_factory=dict)


@dataclass
class MergedBlock:
    definition: Definition
    fields: dict[str, ast.Field] = field(default_factory=dict)
    stages: dict[str, MergedStage] = field(default_factory=dict)
    extra_stages: list[ast.Stage] = field(default_factory=list)  # nested deeper than allowed
    wans: dict[tuple[str, str], ast.Wan] = field(default_factory=dict)  # a variant's WAN links, by direction
    stray_wans: list[ast.Wan] = field(default_factory=list)  # WAN statements where none belongs (in a stage)
    broken: bool = False  # its chain of bases is broken (an unknown base, one of another kind): already reported

    @property
    def kind(self) -> str:
        return self.definition.kind

    @property
    def name(self) -> str:
        return self.definition.name


class Namespace:
    def __init__(self, sink: DiagnosticSink):
        self.sink = sink
        self.defs: dict[str, Definition] = {}
        self.refused: set[str] = set()  # built-in names a definition tried to take (already reported)
        self.order: list[str] = []
        self.wans: list[ast.Wan] = []
        self.breakevens: list[ast.Breakeven] = []
        self.targets: list[ast.Target] = []
        self.baselines: list[ast.Baseline] = []
        self.searches: list[ast.Search] = []  # design searches, checked by ctdsl.check.search
        # measurements, checked by ctdsl.check.observed: scenario names are a namespace of their own
        self.scenarios: list[ast.Scenario] = []
        self.observes: list[ast.Observe] = []
        self.fits: list[ast.Fit] = []
        self._merged: dict[str, MergedBlock | None] = {}
        self._merging: list[str] = []
        self._too_deep = False
        self._depth: dict[str, int] = {}  # bases below each merged block
        self.too_many = False  # CT621: the statements were cut short, so nothing after them is checked

    def collect(self, files: list[ast.SpecFile], std: set[str], root: str) -> None:
        count = 0
        for spec in files:
            for stmt in spec.statements:
                count += 1
                if count > limits.MAX_STATEMENTS:
                    self.sink.error(
                        "CT621",
                        f"the spec and its imports hold more than {limits.MAX_STATEMENTS} statements",
                        stmt.span,
                        help="split the study into several specs",
                    )
                    self.too_many = True
                    return
                if isinstance(stmt, ast.Param):
                    self._define(Definition(stmt.name.text, "param", stmt, spec.path, spec.path in std, spec.path == root))
                elif isinstance(stmt, ast.Block):
                    self._define(Definition(stmt.name.text, stmt.kind, stmt, spec.path, spec.path in std, spec.path == root))
                elif isinstance(stmt, ast.Wan):
                    self.wans.append(stmt)
                elif isinstance(stmt, ast.Breakeven):
                    self.breakevens.append(stmt)
                elif isinstance(stmt, ast.Baseline):
                    self.baselines.append(stmt)
                elif isinstance(stmt, ast.Search):
                    self.searches.append(stmt)
                elif isinstance(stmt, ast.Target):
                    self.targets.append(stmt)
                elif isinstance(stmt, ast.Scenario):
                    self.scenarios.append(stmt)
                elif isinstance(stmt, ast.Observe):
                    self.observes.append(stmt)
                elif isinstance(stmt, ast.Fit):
                    self.fits.append(stmt)

    def _define(self, d: Definition) -> None:
        if d.name in ("gpu", "true", "false", "none"):
            self.refused.add(d.name)
            self.sink.error(
                "CT103",
                f"'{d.name}' is a built-in name and cannot be redefined",
                d.span,
                help=f"choose another name, e.g. '{d.name}_1'",
            )
            return
        prev = self.defs.get(d.name)
        if prev is not None:
            if prev.root and not d.root:
                # the root file is read first, but the one to fix is the user's own
                self.sink.error(
                    "CT103",
                    f"'{d.name}' is defined twice: here and in {d.file}",
                    prev.span,
                    label=f"{prev.kind} '{d.name}' defined here",
                    secondary=(Label(d.span, f"also defined here, as a {d.kind}"),),
                    help="every param and block shares one namespace, imports included; rename one of them",
                )
                return
            self.sink.error(
                "CT103",
                f"'{d.name}' is defined twice",
                d.span,
                label=f"{d.kind} '{d.name}' defined again here",
                secondary=(Label(prev.span, f"first defined here, as a {prev.kind}"),),
                help="every param and block shares one namespace; rename one of them",
            )
            return
        self.defs[d.name] = d
        self.order.append(d.name)

    def of_kind(self, *kinds: str) -> list[Definition]:
        return [self.defs[n] for n in self.order if self.defs[n].kind in kinds]

    def expect(self, name: ast.Name, kind: str) -> bool:
        """Whether `name` names a definition of `kind`; CT101 (unknown) or CT102 (another kind) if not."""
        d = self.defs.get(name.text)
        if d is None:
            self.sink.error(
                "CT101",
                f"unknown {kind} '{name.text}'",
                name.span,
                label="not defined",
                help=did_you_mean(name.text, self.names_of(kind)),
            )
            return False
        if d.kind != kind:
            self.sink.error(
                "CT102",
                f"expected a {kind}, but '{name.text}' is a {d.kind}",
                name.span,
                secondary=(Label(d.span, f"{d.kind} defined here"),),
                help=did_you_mean(name.text, self.names_of(kind)),
            )
            return False
        return True

    def names_of(self, *kinds: str) -> list[str]:
        return [d.name for d in self.of_kind(*kinds)]

    def merged(self, name: str) -> MergedBlock | None:
        """The block's fields and stages, its base's first; None if the chain is broken."""
        if name in self._merged:
            return self._merged[name]
        d = self.defs.get(name)
        if d is None or d.kind == "param":
            return None
        block = d.node
        assert isinstance(block, ast.Block)
        if name in self._merging:
            chain = " -> ".join(self._merging[self._merging.index(name):] + [name])
            self.sink.error(
                "CT109",
                f"'{name}' inherits from itself: {chain}",
                block.base.span if block.base else d.span,
                help="a block's base must not lead back to it",
            )
            return None
        result = MergedBlock(d)
        if block.base is not None and self._merge_base(d, block, result):
            return self._merged[name]
        self._merge_own(name, block, result)
        self._merged[name] = result
        return result

    def _merge_base(self, d: Definition, block: ast.Block, result: MergedBlock) -> bool:
        """Start `result` from the fields and stages of the block's base (reported if it has none).

        True when merging the base settled this block already (a cycle through it).
        """
        name = d.name
        base_def = self.defs.get(block.base.text)
        if base_def is None:
            result.broken = True
            self.sink.error(
                "CT101",
                f"unknown base '{block.base.text}'",
                block.base.span,
                label="not defined",
                help=did_you_mean(block.base.text, self.names_of(d.kind))
                or (f"is a library import missing? e.g. import std.{_std_module_for(d.kind)}" if _std_module_for(d.kind) else None),
            )
        elif base_def.kind != d.kind:
            result.broken = True
            self.sink.error(
                "CT102",
                f"{d.kind} '{name}' cannot extend {base_def.kind} '{base_def.name}'",
                block.base.span,
                label=f"a {base_def.kind}",
                secondary=(Label(base_def.span, f"{base_def.kind} defined here"),),
                help=f"a block extends another block of the same kind ({d.kind})",
            )
        elif len(self._merging) >= limits.MAX_INHERITANCE_DEPTH:
            return self._too_deep_at(name, block)
        else:
            self._merging.append(name)
            base = self.merged(base_def.name)
            self._merging.pop()
            if base is None and name in self._merged:
                return True
            result.broken = base is None or base.broken
            if base is not None:
                depth = self._depth.get(base_def.name, 0) + 1
                if depth > limits.MAX_INHERITANCE_DEPTH:
                    return self._too_deep_at(name, block)
                self._depth[name] = depth
                result.fields = dict(base.fields)
                result.wans = dict(base.wans)
                result.stages = {
                    k: MergedStage(v.name, v.span, dict(v.fields)) for k, v in base.stages.items()
                }
        return False

    def _too_deep_at(self, name: str, block: ast.Block) -> bool:
        """A chain of bases past the limit (CT620), reported once: every block further down is past it too."""
        if not self._too_deep:
            self._too_deep = True
            self.sink.error(
                "CT620",
                f"'{name}' inherits through more than {limits.MAX_INHERITANCE_DEPTH} bases",
                block.base.span,
                help="extend a block that has the fields already, not a long chain of copies",
            )
        self._merged[name] = None
        return True

    def _merge_own(self, name: str, block: ast.Block, result: MergedBlock) -> None:
        """The block's own fields and stages, over its base's; each may be written once."""
        own_fields: dict[str, ast.Field] = {}
        own_stages: dict[str, ast.Stage] = {}
        own_wans: dict[tuple[str, str], ast.Wan] = {}
        for item in block.items:
            if isinstance(item, ast.Wan):
                self._merge_wan(item, own_wans, result)
            elif isinstance(item, ast.Field):
                prev = own_fields.get(item.key.text)
                if prev is not None:
                    self._duplicate_field(item, prev, name)
                    continue
                own_fields[item.key.text] = item
                result.fields[item.key.text] = item
            else:
                prev_stage = own_stages.get(item.name.text)
                if prev_stage is not None:
                    self.sink.error(
                        "CT106",
                        f"stage '{item.name.text}' appears twice in '{name}'",
                        item.name.span,
                        secondary=(Label(prev_stage.name.span, "first here"),),
                    )
                    continue
                own_stages[item.name.text] = item
                stage = result.stages.get(item.name.text) or MergedStage(item.name.text, item.name.span)
                stage.span = item.name.span
                seen: dict[str, ast.Field] = {}
                for sub in item.items:
                    if isinstance(sub, ast.Stage):
                        result.extra_stages.append(sub)
                        continue
                    if isinstance(sub, ast.Wan):
                        result.stray_wans.append(sub)
                        continue
                    if sub.key.text in seen:
                        self._duplicate_field(sub, seen[sub.key.text], f"{name}.{item.name.text}")
                        continue
                    seen[sub.key.text] = sub
                    stage.fields[sub.key.text] = sub
                result.stages[item.name.text] = stage

    def _merge_wan(self, item: ast.Wan, own: dict[tuple[str, str], ast.Wan], result: MergedBlock) -> None:
        """A WAN statement in a block (a variant's), each direction once, over its base's."""
        ring = item.a.text == item.b.text  # a dc of several sites to itself: one connection, site to site
        dirs = [(item.a.text, item.b.text)] + ([(item.b.text, item.a.text)] if item.both and not ring else [])
        for d in dirs:
            if d in own:
                self.sink.error(
                    "CT414",
                    f"the WAN from '{d[0]}' to '{d[1]}' is set twice in '{result.name}'",
                    item.span,
                    secondary=(Label(own[d].span, "first set here"),),
                    help="set each direction once; '<->' sets both",
                )
                continue
            own[d] = item
            result.wans[d] = item

    def _duplicate_field(self, item: ast.Field, prev: ast.Field, where: str) -> None:
        self.sink.error(
            "CT106",
            f"field '{item.key.text}' is set twice in '{where}'",
            item.key.span,
            label="set again here",
            secondary=(Label(prev.key.span, "first set here"),),
            help="keep one of them",
        )


def _std_module_for(kind: str) -> str | None:
    return {"link": "links", "device": "devices", "model": "models"}.get(kind)
