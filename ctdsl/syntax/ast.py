"""The syntax tree of a .ct file: frozen dataclasses, each with its source span.

The tree says what was written, nothing more: names are not resolved, units are
kept as text and numbers as exact fractions. Meaning is the checker's job.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from fractions import Fraction
from typing import Union

from ctdsl.diagnostics import Span


@dataclass(frozen=True)
class Name:
    text: str
    span: Span


# ---- expressions -----------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: Fraction
    text: str
    unit: str | None
    unit_span: Span | None
    span: Span


@dataclass(frozen=True)
class Ref:
    """A name, or a dotted path to a field of a definition (`ib.bandwidth`)."""

    parts: tuple[Name, ...]
    span: Span

    @property
    def dotted(self) -> str:
        return ".".join(p.text for p in self.parts)


@dataclass(frozen=True)
class BinOp:
    op: str  # one of + - * / ^
    left: "Expr"
    right: "Expr"
    span: Span
    op_span: Span


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    span: Span


@dataclass(frozen=True)
class Call:
    func: Name
    args: tuple["Expr", ...]
    span: Span


Expr = Union[Number, Ref, BinOp, Neg, Call]


@dataclass(frozen=True)
class ListValue:
    items: tuple["Value", ...]
    span: Span


@dataclass(frozen=True)
class StringValue:
    text: str
    span: Span


Value = Union[Number, Ref, BinOp, Neg, Call, ListValue, StringValue]


# ---- statements ------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    key: Name
    value: Value
    span: Span


@dataclass(frozen=True)
class Stage:
    name: Name
    items: tuple[Union[Field, "Stage", "Wan"], ...]
    span: Span


@dataclass(frozen=True)
class Block:
    kind: str
    kind_span: Span
    name: Name
    base: Name | None
    items: tuple[Union[Field, Stage, "Wan"], ...]  # a Wan only in a variant (the checker says so)
    span: Span


@dataclass(frozen=True)
class Range:
    lo: Expr
    hi: Expr
    spacing: str | None  # "lin" | "log" | None
    count: int | None
    span: Span


@dataclass(frozen=True)
class Param:
    name: Name
    default: Expr
    range: Range | None
    display: str | None
    span: Span
    dist: Call | None = None  # `~ name(args)`: the distribution the param is drawn from (an argument may be a ListValue: `samples([...])`)


@dataclass(frozen=True)
class Import:
    path: str | None  # a quoted file path, relative to the importing file, or
    module: tuple[str, ...] | None  # a dotted library module: ("std", "links")
    span: Span


@dataclass(frozen=True)
class Wan:
    a: Name
    b: Name
    both: bool
    link: Name
    span: Span
    count: "Expr | None" = None  # `= zr400 * 64`: that many of the link in parallel


@dataclass(frozen=True)
class Breakeven:
    x: Name
    y: Name
    over: Name
    span: Span
    on: Name | None = None  # `on cost`: what is compared; None: time to target


@dataclass(frozen=True)
class Baseline:
    scheme: Name
    span: Span


@dataclass(frozen=True)
class Search:
    """`search NAME { minimise = cost; over = [wan_bw]; ... }`: fields as in a block."""

    name: Name
    items: tuple
    span: Span


@dataclass(frozen=True)
class Target:
    """`target QUANTITY = VALUE | [VALUES] over PARAM [for SCHEME, ...]`."""

    quantity: Name
    values: tuple[Expr, ...]
    over: Name
    schemes: tuple[Name, ...]  # empty: every scheme
    span: Span


@dataclass(frozen=True)
class Scenario:
    """`scenario NAME { PARAM = VALUE; ... }`: a named set of param values (fields as in a block)."""

    name: Name
    items: tuple
    span: Span


@dataclass(frozen=True)
class Observe:
    """`observe OBSERVABLE [of SUBJECT] [in SCENARIO] = VALUE [source "..."]`: a measured value."""

    observable: Name
    subject: Name | None  # a scheme; None: the spec's one scheme
    scenario: Name | None  # None: the params' defaults
    value: Expr
    source: StringValue | None
    span: Span


@dataclass(frozen=True)
class Fit:
    """`fit PARAM on SCENARIO`: the param's value at which the scenario's observation is met."""

    param: Name
    scenario: Name
    span: Span


Statement = Union[Import, Param, Block, Wan, Breakeven, Baseline, Search, Target, Scenario, Observe, Fit]


@dataclass(frozen=True)
class SpecFile:
    path: str
    statements: tuple[Statement, ...]


def nodes(value: "Value"):
    """Every node of a value, itself first: the operands of expressions and the items of lists, depth-first."""
    stack = [value]
    while stack:
        v = stack.pop()
        yield v
        if isinstance(v, BinOp):
            stack += [v.left, v.right]
        elif isinstance(v, Neg):
            stack.append(v.operand)
        elif isinstance(v, Call):
            stack += list(v.args)
        elif isinstance(v, ListValue):
            stack += list(v.items)


def to_json(node) -> object:
    """A plain-data view of any syntax node, for golden files and `--format json`."""
    if isinstance(node, Span):
        return f"{node.line}:{node.col}-{node.end_line}:{node.end_col}"
    if isinstance(node, Fraction):
        return str(node)
    if is_dataclass(node):
        out: dict[str, object] = {"node": type(node).__name__}
        for f in fields(node):
            if f.name == "on" and getattr(node, f.name) is None:  # a break-even on time, as written before `on` existed
                continue
            out[f.name] = to_json(getattr(node, f.name))
        return out
    if isinstance(node, (tuple, list)):
        return [to_json(x) for x in node]
    return node
