"""Field values: typing each `key = value` against its kind's schema, with bounds.

A `FieldReader` answers "what is the checked value of field f of block b",
typing it on first use. Expressions may read other blocks' fields
(`2 * ib.bandwidth`), so reads recurse; a field that depends on itself is a
cycle, reported once. Bounds (positive bandwidth, fractions in (0, 1], H >= 1)
are checked at the params' defaults and at each end of each param's range.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from ctdsl import limits
from ctdsl import units as U
from ctdsl.language import bounds as B
from ctdsl.language import schema as S
from ctdsl.language.tolerances import REL
from ctdsl.check.exprs import ExprTyper, Typed
from ctdsl.check.names import MergedBlock, Namespace
from ctdsl.diagnostics import DiagnosticSink, Label, Span, did_you_mean
from ctdsl.model import expr as E
from ctdsl.model.entities import CheckedBound, Param
from ctdsl.syntax import ast

_BUSY = object()
BUILTIN_VALUES = {"gpu", "true", "false"}


def field_spec(kind: str, stage: str | None, key: str) -> S.FieldSpec | None:
    if kind == "variant":  # a variant's stages are dcs: each takes the variant's fields
        return S.KINDS["variant"].get(key)
    table = S.STAGES.get(stage, {}) if stage else S.KINDS.get(kind, {})
    return table.get(key)


class FieldReader:
    def __init__(self, ns: Namespace, sink: DiagnosticSink, params: dict[str, Param]):
        self.ns = ns
        self.sink = sink
        self.params = params
        self._cache: dict[tuple, object] = {}
        self._costs: dict = {}  # the measured nodes (ctdsl.model.cost), shared by every field's typer
        self._stack: list[tuple] = []
        self._too_deep = False
        self.derived: dict[tuple, Typed] = {}  # e.g. (model, None, "params") from a shape
        self.counts: set[str] = set()  # params a count field is set to directly (`replicas = R`): whole numbers
        self.bounds: list[CheckedBound] = []  # the bounds checked on expressions of params (Spec.bounds)
        self._fields: dict[int, int] = {}  # id of a written field -> its number in `bounds`
        # fields already found wrong: a field inherited by several blocks is one mistake
        self._wrong: set[int] = set()

    # ---- expressions ---------------------------------------------------------

    def typer(self) -> ExprTyper:
        return ExprTyper(self.sink, self.resolve, self._costs)

    def type_expr(self, node: ast.Expr) -> Typed | None:
        typed = self.typer().type(node)
        if typed is not None and E.expanded_size(typed.expr, limits.MAX_EXPANDED_NODES + 1) > limits.MAX_EXPANDED_NODES:
            self.sink.error(
                "CT603",
                "expression grows too large once its references are expanded",
                node.span,
                label=f"more than {limits.MAX_EXPANDED_NODES} nodes",
                help="references that use each other repeatedly multiply; name a value as a param",
            )
            return None
        return typed

    def resolve(self, ref: ast.Ref) -> Typed | None:
        head = ref.parts[0]
        name = head.text
        if name in self.params:
            p = self.params[name]
            if len(ref.parts) > 1:
                self.sink.error("CT111", f"param '{name}' has no fields", ref.parts[1].span, help=f"write {name}")
                return None
            return Typed(E.Sym(name), p.dim)
        d = self.ns.defs.get(name)
        if d is None or d.kind == "param":
            if d is not None:  # a param whose own definition failed to check
                return None
            self._unknown_name(head)
            return None
        if len(ref.parts) == 1:
            example = self._first_quantity(name)
            self.sink.error(
                "CT102",
                f"'{name}' is a {d.kind}, not a quantity",
                head.span,
                label=f"a {d.kind}",
                secondary=(Label(d.span, f"{d.kind} defined here"),),
                help=f"use one of its fields, e.g. {name}.{example}" if example else None,
            )
            return None
        block = self.ns.merged(name)
        if block is None:
            return None
        parts = [p.text for p in ref.parts[1:]]
        stage = None
        if len(parts) == 2:
            stage, key = parts
            if stage not in block.stages:
                self.sink.error(
                    "CT111",
                    f"{d.kind} '{name}' has no stage '{stage}'",
                    ref.parts[1].span,
                    help=did_you_mean(stage, block.stages),
                )
                return None
        elif len(parts) == 1:
            (key,) = parts
            if key in block.stages:
                self.sink.error(
                    "CT111",
                    f"'{name}.{key}' is a stage; name one of its fields",
                    ref.span,
                    help=f"e.g. {name}.{key}.{next(iter(block.stages[key].fields), 'rate')}",
                )
                return None
        else:
            self.sink.error("CT111", f"'{ref.dotted}' has too many parts", ref.span)
            return None
        return self.read_quantity(block, stage, key, ref.parts[-1].span)

    def _unknown_name(self, head: ast.Name) -> None:
        name = head.text
        if name in BUILTIN_VALUES:
            self.sink.error("CT206", f"'{name}' is not a quantity", head.span, help="it is only a field's value, e.g. at = gpu")
            return
        pool = list(self.params) + [n for n in self.ns.defs]
        hint = did_you_mean(name, pool)
        if hint is None:
            try:
                U.parse_unit(name)
                hint = f"'{name}' is a unit: units follow a number, e.g. 1 {name}"
            except U.UnitError:
                pass
        self.sink.error("CT101", f"unknown name '{name}'", head.span, label="not defined", help=hint)

    def _first_quantity(self, name: str) -> str | None:
        d = self.ns.defs[name]
        table = S.KINDS.get(d.kind, {})
        for spec in table.values():
            if spec.type == "quantity":
                return spec.name
        return None

    # ---- fields --------------------------------------------------------------

    def read_quantity(self, block: MergedBlock, stage: str | None, key: str, at: Span | None) -> Typed | None:
        cache_key = (block.name, stage, key)
        if cache_key in self.derived:
            return self.derived[cache_key]
        table = block.stages[stage].fields if stage else block.fields
        spec = field_spec(block.kind, stage, key)
        node = table.get(key)
        where = f"{block.name}.{stage}.{key}" if stage else f"{block.name}.{key}"
        if node is None:
            if spec is not None and spec.type == "quantity" and spec.default is not None:
                return Typed(E.Num(Fraction(spec.default)), spec.dim)  # type: ignore[arg-type]
            if at is not None:
                if spec is None:
                    pool = table.keys() | {
                        k for k, f in (S.STAGES.get(stage, {}) if stage else S.KINDS.get(block.kind, {})).items()
                    }
                    self.sink.error(
                        "CT111", f"{block.kind} '{block.name}' has no field '{key}'", at, help=did_you_mean(key, pool)
                    )
                else:
                    self.sink.error(
                        "CT111",
                        f"'{where}' is not set",
                        at,
                        secondary=(Label(block.definition.span, f"{block.kind} '{block.name}' defined here"),),
                        help=f"set it, e.g. {key} = {spec.example}",
                    )
            return None
        if spec is not None and spec.type != "quantity":
            if at is not None:
                self.sink.error("CT206", f"'{where}' is a {spec.type}, not a quantity", at)
            return None
        if cache_key in self._cache:
            value = self._cache[cache_key]
            if value is _BUSY:
                i = self._stack.index(cache_key)
                chain = " -> ".join(".".join(x for x in k if x) for k in self._stack[i:] + [cache_key])
                self.sink.error(
                    "CT110",
                    f"'{where}' depends on itself: {chain}",
                    node.value.span,
                    help="break the cycle with a number or a param",
                )
                self._cache[cache_key] = None
                return None
            return value  # type: ignore[return-value]
        if len(self._stack) >= limits.MAX_REFERENCE_DEPTH:
            if not self._too_deep:  # once: each field further down the chain is past it too
                self._too_deep = True
                self.sink.error(
                    "CT622",
                    f"'{where}' is reached through more than {limits.MAX_REFERENCE_DEPTH} field references",
                    at or node.value.span,
                    help="give the value as a number or a param instead of a long chain of references",
                )
            return None
        self._cache[cache_key] = _BUSY
        self._stack.append(cache_key)
        typed = self._type_field(block, stage, key, node, spec)
        self._stack.pop()
        if self._cache.get(cache_key) is _BUSY:
            self._cache[cache_key] = typed
        return self._cache[cache_key]  # type: ignore[return-value]

    def _type_field(self, block, stage, key, node: ast.Field, spec: S.FieldSpec | None) -> Typed | None:
        if isinstance(node.value, (ast.ListValue, ast.StringValue)):
            self.sink.error(
                "CT206",
                f"'{key}' takes a quantity, not a {'list' if isinstance(node.value, ast.ListValue) else 'string'}",
                node.value.span,
                help=f"e.g. {key} = {spec.example}" if spec else None,
            )
            return None
        typed = self.type_expr(node.value)
        if typed is None or spec is None:
            return typed
        if typed.dim != spec.dim:
            if id(node) in self._wrong:
                return None
            self._wrong.add(id(node))
            owner = f"{block.kind} '{block.name}'" + (f", stage {stage}," if stage else "")
            self.sink.error(
                "CT202",
                f"{owner} {key} must be {spec.dim.describe()}, but this is {typed.dim.describe()}",
                node.value.span,
                label=f"this is {typed.dim.describe()}",
                help=f"e.g. {key} = {spec.example}",
            )
            return None
        return typed

    def check_bounds(self, block: MergedBlock, stage: str | None, key: str, typed: Typed, spec: S.FieldSpec) -> None:
        table = block.stages[stage].fields if stage else block.fields
        node = table.get(key)
        if node is None or spec.bound is None or id(node) in self._wrong:
            return
        owner = f"{block.name}.{stage}.{key}" if stage else f"{block.name}.{key}"
        if not check_bound(self.sink, typed, spec.bound, owner, node.value.span, self.params, spec):
            self._wrong.add(id(node))
            return
        self.note_bound(checked_bound(typed, spec.bound, owner, node.value.span, self.field_number(node), spec))
        if spec.bound == "count":
            self.count_param(typed)

    def field_number(self, node: object) -> int:
        """A number per written field (a node of the syntax tree), in the order first met."""
        return self._fields.setdefault(id(node), len(self._fields))

    def note_bound(self, bound: CheckedBound | None) -> None:
        if bound is not None:
            self.bounds.append(bound)

    def count_param(self, typed: Typed) -> None:
        """Note a param that a count is set to directly: it takes whole values only (its range's ends were checked)."""
        if isinstance(typed.expr, E.Sym):
            self.counts.add(typed.expr.name)


def points(expr: E.Expr, params: dict[str, Param]) -> Iterable[tuple[str, dict[str, float]]]:
    """The environments a bound is checked at: the params' defaults, then each end of the range of each param `expr` names."""
    base = {p.name: p.default for p in params.values()}
    yield "", base
    for name in sorted(E.symbols(expr)):
        p = params.get(name)
        if p is None or p.lo is None:
            continue
        for end, value in (("low", p.lo), ("high", p.hi)):
            env = dict(base)
            env[name] = value
            yield B.WHEN.format(param=name, end=end), env


def check_bound(
    sink: DiagnosticSink,
    typed: Typed,
    bound: str,
    owner: str,
    span: Span,
    params: dict[str, Param],
    spec: S.FieldSpec | None = None,
) -> bool:
    """Whether `typed` keeps its bound (ctdsl.language.bounds) at the defaults and the range ends; else one error."""
    b = B.BOUNDS[bound]
    key = owner.rsplit(".", 1)[-1]
    for when, env in points(typed.expr, params):
        try:
            value = E.evaluate(typed.expr, env)
        except E.EvalError as err:
            code, message = B.NOT_EVALUATED
            sink.error(code, message.format(owner=owner, when=when, error=err), span)
            return False
        if not b.ok(value):
            shown = U.format_quantity(value, typed.dim)
            sink.error(
                b.code,
                b.message.format(owner=owner, words=b.words, shown=shown, value=f"{value:g}", when=when),
                span,
                label=shown,
                help=B.bound_help(bound, key, spec.example if spec else None),
            )
            return False
        if b.whole and abs(value - round(value)) > REL * max(1.0, abs(value)):
            code, message, help = B.NOT_WHOLE
            sink.error(code, message.format(owner=owner, value=f"{value:g}", when=when), span, help=help)
            return False
        if b.whole and round(value) < 1:  # positive, and whole to within REL: of zero (1e-12)
            code, message, help = B.BELOW_ONE
            sink.error(code, message.format(owner=owner, value=f"{value:g}", when=when), span, label=f"{value:g}", help=help)
            return False
    return True


def checked_bound(typed: Typed, bound: str, owner: str, span: Span, field: int, spec: S.FieldSpec | None = None) -> CheckedBound | None:
    """The bound as the model keeps it for a reader that tests other values (None: a constant, which cannot change)."""
    if not E.symbols(typed.expr):
        return None
    key = owner.rsplit(".", 1)[-1]
    return CheckedBound(owner, bound, typed.expr, typed.dim, span, B.bound_help(bound, key, spec.example if spec else None), field)
