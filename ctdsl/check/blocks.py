"""Every field of every block, typed once against its kind's schema.

`BlockChecker.validate` reports unknown fields and stages and types each field
that is written: quantities through the `FieldReader` (dimensions, bounds at
the defaults and the range ends), and strings, operation lists, booleans,
choices and references here. Each checked value is kept, so that building the
definitions reads it (`value`) instead of typing the field a second time; a
field that is not written takes its schema default.
"""

from __future__ import annotations

from fractions import Fraction

from ctdsl.check.fields import FieldReader, field_spec
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, did_you_mean
from ctdsl.language import schema as S
from ctdsl.language.enums import Operation
from ctdsl.model import expr as E
from ctdsl.syntax import ast

FieldKey = tuple[str, "str | None", str]  # block, stage, field
NONE = "none"  # the checked value of `pluggable = none` in a variant: no module


class BlockChecker:
    def __init__(self, ns: Namespace, sink: DiagnosticSink, reader: FieldReader):
        self.ns = ns
        self.sink = sink
        self.reader = reader
        self._values: dict[FieldKey, object] = {}  # checked strings, ops, bools and choices
        self._refs: dict[tuple[str, str], str | None] = {}
        self._validated: set[str] = set()

    # ---- the checked value of a field ----------------------------------------------

    def value(self, block: MergedBlock, key: str, stage: str | None = None):
        """The checked value of a field, or its schema default when it is not written.

        None when it is neither written nor defaulted, or written wrong (reported).
        """
        fields = block.stages[stage].fields if stage else block.fields
        spec = field_spec(block.kind, stage, key)
        if key not in fields:
            if spec.type == "quantity":
                return E.Num(Fraction(spec.default)) if spec.default is not None else None
            return spec.default
        if spec.type == "quantity" and _word(fields[key].value) in spec.words:
            return _word(fields[key].value)  # a word it takes instead of a quantity (`bucket = layer`)
        if spec.type == "quantity":
            typed = self.reader.read_quantity(block, stage, key, None)
            return typed.expr if typed else None
        if spec.type == "ref":
            return self._refs.get((block.name, stage, key))
        return self._values.get((block.name, stage, key))

    # ---- checking every field ------------------------------------------------------

    def validate(self, block: MergedBlock) -> None:
        if block.name in self._validated:
            return
        self._validated.add(block.name)
        kind = block.kind
        table = S.KINDS[kind]
        for key, node in block.fields.items():
            spec = table.get(key)
            if spec is None:
                where = f"{kind} '{block.name}'"
                hint = S.RENAMED.get((kind, key)) or (  # a stage before a near name ('compute' is not 'counted')
                    f"'{key}' is a stage: write {key} {{ ... }}" if key in S.STAGES and kind == "pluggable" else None
                ) or did_you_mean(key, table)
                self.sink.error(
                    "CT104",
                    f"{where} has no field '{key}'",
                    node.key.span,
                    label="unknown field",
                    help=hint or f"{kind} fields are: {', '.join(table)}",
                )
                continue
            self._field(block, None, key, spec)
        for stage_name, stage in block.stages.items():
            if kind == "variant":
                self._variant_stage(block, stage_name, stage)
            else:
                self._stage(block, stage_name, stage)
        for extra in block.extra_stages:
            self.sink.error("CT104", f"stage '{extra.name.text}' cannot nest inside another stage", extra.span)
        stray = block.stray_wans + ([] if kind == "variant" else list(dict.fromkeys(block.wans.values())))
        for wan in stray:
            self.sink.error(
                "CT417",
                f"a WAN statement cannot stand inside {'a stage' if kind == 'variant' else f'a {kind}'}",
                wan.span,
                help="write it on its own line at the top level, or in a variant to replace that WAN's link",
            )

    def _variant_stage(self, block: MergedBlock, stage_name: str, stage) -> None:
        """A variant's stage: the fields of one dc, each typed as the variant's fields are."""
        d = self.ns.defs.get(stage_name)
        if d is None or d.kind != "dc":
            self.sink.error(
                "CT114",
                f"a variant's stage '{stage_name}' is not a dc" + ("" if d is None else f" but a {d.kind}"),
                stage.span,
                label="not a dc",
                secondary=(Label(d.span, f"{d.kind} defined here"),) if d is not None else (),
                help=did_you_mean(stage_name, self.ns.names_of("dc"))
                or f"a variant's stages name its dcs: {', '.join(self.ns.names_of('dc')) or 'none defined'}",
            )
            return
        table = S.KINDS["variant"]
        for key, node in stage.fields.items():
            spec = table.get(key)
            if spec is None:
                self.sink.error(
                    "CT104",
                    f"variant '{block.name}' cannot change '{key}' of dc '{stage_name}'",
                    node.key.span,
                    label="not a field a variant changes",
                    help=did_you_mean(key, table) or f"a variant changes: {', '.join(table)}",
                )
                continue
            self._field(block, stage_name, key, spec)

    def _stage(self, block: MergedBlock, stage_name: str, stage) -> None:
        kind = block.kind
        if kind != "pluggable":
            self.sink.error(
                "CT104",
                f"a {kind} has no stages, but '{block.name}' has '{stage_name}'",
                stage.span,
                help="stages (port, optics, compute, fpga) belong to a pluggable",
            )
            return
        if stage_name not in S.STAGES:
            self.sink.error(
                "CT104",
                f"pluggable '{block.name}' has no stage '{stage_name}'",
                stage.span,
                label="unknown stage",
                help=did_you_mean(stage_name, S.STAGES) or f"stages are: {', '.join(S.STAGES)}",
            )
            return
        for key, node in stage.fields.items():
            spec = S.STAGES[stage_name].get(key)
            if spec is None:
                self.sink.error(
                    "CT104",
                    f"stage {stage_name} of '{block.name}' has no field '{key}'",
                    node.key.span,
                    help=did_you_mean(key, S.STAGES[stage_name])
                    or f"{stage_name} fields are: {', '.join(S.STAGES[stage_name])}",
                )
                continue
            self._field(block, stage_name, key, spec)

    def _field(self, block: MergedBlock, stage: str | None, key: str, spec: S.FieldSpec) -> None:
        node = (block.stages[stage].fields if stage else block.fields)[key]
        value = node.value
        if spec.type == "quantity" and _word(value) in spec.words:
            return  # a word it takes instead of a quantity (`bucket = layer`), read by `value`
        if spec.type == "quantity":
            typed = self.reader.read_quantity(block, stage, key, None)
            if typed is not None:
                self.reader.check_bounds(block, stage, key, typed, spec)
            return
        if spec.type == "ref":
            self._ref(block, stage, key, spec, value)
            return
        if spec.type == "string":
            result: object = self._string(key, spec, value)
        elif spec.type == "ops":
            result = self._ops(key, spec, value)
        elif spec.type == "refs":
            result = self._ref_list(key, spec, value)
        elif spec.type == "bool":
            result = self._bool(key, value)
        elif spec.type == "enum":
            result = self._choice(key, spec, value)
        else:  # pragma: no cover
            raise AssertionError(spec.type)
        self._values[(block.name, stage, key)] = result

    def _string(self, key: str, spec: S.FieldSpec, value: ast.Value) -> str | None:
        if not isinstance(value, ast.StringValue):
            self.sink.error("CT206", f"'{key}' takes a string in double quotes", value.span, help=f"e.g. {key} = {spec.example}")
            return None
        return value.text

    def _ops(self, key: str, spec: S.FieldSpec, value: ast.Value) -> tuple[Operation, ...] | None:
        if not isinstance(value, ast.ListValue):
            self.sink.error("CT206", f"'{key}' takes a list of operations", value.span, help=f"e.g. {key} = {spec.example}")
            return None
        ops = []
        for item in value.items:
            word = _word(item)
            if word is None or word not in S.OPERATIONS:
                self.sink.error(
                    "CT108",
                    f"unknown operation {_show(item)}",
                    item.span,
                    help=(did_you_mean(word, S.OPERATIONS) if word else None)
                    or f"operations are: {', '.join(S.OPERATIONS)}",
                )
                continue
            ops.append(Operation(word))
        return tuple(ops)

    def _ref_list(self, key: str, spec: S.FieldSpec, value: ast.Value) -> tuple[str, ...] | None:
        """A list of names of the field's kinds (a hand-off's route of links); None if any is wrong (reported)."""
        if not isinstance(value, ast.ListValue) or not value.items:
            self.sink.error("CT206", f"'{key}' takes a list of {' or '.join(spec.refs)} names", value.span, help=f"e.g. {key} = {spec.example}")
            return None
        names = []
        for item in value.items:
            word = _word(item)
            if word is None:
                self.sink.error("CT206", f"'{key}' names {' or '.join(spec.refs)}s, not {_show(item)}", item.span, help=f"e.g. {key} = {spec.example}")
                names.append(None)
                continue
            names.append(None if word in self.ns.refused else self._named(key, spec.refs, word, item))
        return None if None in names else tuple(names)

    def _bool(self, key: str, value: ast.Value) -> bool | None:
        word = _word(value)
        if word not in ("true", "false"):
            self.sink.error("CT206", f"'{key}' is true or false, not {_show(value)}", value.span)
            return None
        return word == "true"

    def _choice(self, key: str, spec: S.FieldSpec, value: ast.Value):
        """One of the field's choices: the enum member (`Payload.BAND` for `band`)."""
        word = _word(value)
        if word not in spec.choices:
            self.sink.error(
                "CT108",
                f"unknown {key} {_show(value)}",
                value.span,
                label=f"not a {key}",
                help=(did_you_mean(word, spec.choices) if word else None)
                or f"{key} is one of: {', '.join(spec.choices)}",
            )
            return None
        return spec.choices[spec.choices.index(word)]

    def _ref(self, block: MergedBlock, stage: str | None, key: str, spec: S.FieldSpec, value: ast.Value) -> str | None:
        cache = (block.name, stage, key)
        if cache in self._refs:
            return self._refs[cache]
        word = _word(value)
        result = None
        kinds = spec.refs
        if word is None:
            self.sink.error(
                "CT206",
                f"'{key}' names a {' or '.join(kinds)}, not {_show(value)}",
                value.span,
                help=f"e.g. {key} = {spec.example}",
            )
        elif word == "gpu" and "gpu" in kinds:
            result = "gpu"
        elif word == "none":
            result = self._none(block, key, value)
        elif word in self.ns.refused:
            pass  # its definition was refused as a built-in name: reported there, once
        else:
            result = self._named(key, kinds, word, value)
        self._refs[cache] = result
        return result

    def _none(self, block: MergedBlock, key: str, value: ast.Value) -> str | None:
        """`none` removes an optional ref in a variant (`pluggable = none`): NONE, or None reported."""
        dc = S.KINDS["dc"].get(key)
        if block.kind == "variant" and dc is not None and not dc.required:
            return NONE
        where = f"a dc needs its {key}" if block.kind == "variant" else "none removes a field only in a variant"
        self.sink.error(
            "CT115",
            f"'{key}' cannot be none: {where}",
            value.span,
            help="give another definition instead" if block.kind == "variant" else f"name a definition: {key} = NAME",
        )
        return None

    def _named(self, key: str, kinds: tuple[str, ...], word: str, value: ast.Value) -> str | None:
        """`word` if it names a definition of one of `kinds`; else None, reported."""
        d = self.ns.defs.get(word)
        if d is None:
            pool = [x.name for x in self.ns.of_kind(*kinds)] + (["gpu"] if "gpu" in kinds else [])
            self.sink.error(
                "CT101",
                f"unknown {' or '.join(k for k in kinds)} '{word}'",
                value.span,
                label="not defined",
                help=did_you_mean(word, pool) or _missing_import_hint(kinds),
            )
        elif d.kind not in kinds and key == "sum_at":
            self.sink.error(
                "CT402",
                f"a sum can only run at a switch, but '{word}' is a {d.kind}",
                value.span,
                label=f"a {d.kind}",
                secondary=(Label(d.span, f"{d.kind} '{word}' defined here"),),
                notes=("a link module sees one worker's stream; it cannot sum across workers",),
                help="name a switch with sum = true",
            )
        elif d.kind not in kinds:
            self.sink.error(
                "CT102",
                f"'{key}' names a {' or '.join(kinds)}, but '{word}' is a {d.kind}",
                value.span,
                label=f"a {d.kind}",
                secondary=(Label(d.span, f"{d.kind} '{word}' defined here"),),
                help=did_you_mean(word, [x.name for x in self.ns.of_kind(*kinds)]),
            )
        else:
            return word
        return None


def _word(value: ast.Value) -> str | None:
    if isinstance(value, ast.Ref) and len(value.parts) == 1:
        return value.parts[0].text
    return None


def _show(value: ast.Value) -> str:
    if isinstance(value, ast.Ref):
        return f"'{value.dotted}'"
    if isinstance(value, ast.Number):
        return f"the number {value.text}" + (f" {value.unit}" if value.unit else "")
    if isinstance(value, ast.StringValue):
        return "a string"
    if isinstance(value, ast.ListValue):
        return "a list"
    return "an expression"


def _missing_import_hint(kinds: tuple[str, ...]) -> str | None:
    for kind, module in (("link", "links"), ("device", "devices"), ("model", "models")):
        if kind in kinds:
            return f"is an import missing? The presets are in std.{module}"
    return None
