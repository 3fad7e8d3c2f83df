"""Completion from the text before the cursor, which need not parse.

The block at hand is found by scanning the braces before the cursor (strings and
comments skipped): the innermost open `kind NAME [: BASE] {` is the block, an
open `NAME {` inside it a stage. Then, by what the line says so far:

- `import `: the standard library's modules;
- `kind NAME : `: the presets (and other blocks) of that kind;
- `key = ` in a block: for a reference field, the definitions of the kinds it
  may name; for an enum, its values; for `ops`/`performs`, the operations; for
  a bool, true and false; after a number, the units of the field's dimension;
  otherwise the params;
- a key position in a block: the block's (or stage's) fields not yet written,
  and a pluggable's stages;
- `~ ` after a param's value: the kinds of distribution;
- a statement position: the kinds of block and the statement keywords.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ctdsl import units as U
from ctdsl.check.distributions import KINDS as DIST_KINDS
from ctdsl.check.loader import std_modules
from ctdsl.diagnostics.lines import split_lines
from ctdsl.language.schema import KINDS, OPERATIONS, STAGES
from ctdsl.lsp.index import Index

STATEMENTS = ("import", "param", "wan", "breakeven", "baseline", "target", "search")
_HEADER = re.compile(r"(?:^|[\s;{])(" + "|".join(KINDS) + r")\s+([A-Za-z_]\w*)(?:\s*:\s*[A-Za-z_]\w*)?\s*$")
_STAGE = re.compile(r"(?:^|[\s;{])([A-Za-z_]\w*)\s*$")


@dataclass(frozen=True)
class Item:
    label: str
    kind: str  # keyword | field | module | reference | enum | unit | variable | stage | function
    detail: str = ""


def _strip(text: str) -> str:
    """The text with strings and comments blanked out (same length)."""
    out, in_string, in_comment = [], False, False
    for ch in text:
        if ch == "\n":
            in_string = in_comment = False
            out.append(ch)
        elif in_comment:
            out.append(" ")
        elif ch == '"':
            in_string = not in_string
            out.append(" ")
        elif in_string:
            out.append(" ")
        elif ch == "#":
            in_comment = True
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def enclosing(before: str) -> list[str]:
    """The headers of the open braces before the cursor, outermost first."""
    clean = _strip(before)
    stack: list[int] = []
    for i, ch in enumerate(clean):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            stack.pop()
    heads = []
    for i in stack:
        start = max(clean.rfind("\n", 0, i), clean.rfind(";", 0, i), clean.rfind("{", 0, i), clean.rfind("}", 0, i)) + 1
        heads.append(clean[start:i].strip())
    return heads


@lru_cache(maxsize=None)
def units_of(d: U.Dim | None) -> tuple[str, ...]:
    """The units of a dimension: the named ones, and rates and ratios over s, bit, B and FLOP."""
    atoms = sorted(U.UNITS)
    out = [u for u in atoms if d is None or U.UNITS[u].dim == d]
    for num in atoms:
        for den in ("s", "bit", "B", "FLOP"):
            name = f"{num}/{den}"
            try:
                unit = U.parse_unit(name)
            except U.UnitError:
                continue
            if (d is None or unit.dim == d) and not unit.dim.dimensionless:
                out.append(name)
    return tuple(dict.fromkeys(out))


def _value_items(kind: str, stage: str | None, key: str, typed: str, index: Index | None) -> list[Item]:
    table = STAGES.get(stage, {}) if stage else KINDS.get(kind, {})
    fs = table.get(key)
    if fs is None:
        return []
    if fs.type in ("ref", "refs"):  # a name, or a list of names (a hand-off's route)
        return [Item(s.name, "reference", s.kind) for k in fs.refs for s in (index.names(k) if index else [])]
    if fs.type == "enum":
        return [Item(str(c), "enum", key) for c in fs.choices]
    if fs.type == "ops" or key == "performs":
        return [Item(str(o), "enum", "operation") for o in OPERATIONS]
    if fs.type == "bool":
        return [Item("true", "keyword"), Item("false", "keyword")]
    if re.search(r"[\d.]\s+[A-Za-z%]*$", typed) or re.search(r"\d[A-Za-z]+$", typed):
        return [Item(u, "unit", fs.dim.symbol() if fs.dim is not None else "") for u in units_of(fs.dim)]
    return [Item(s.name, "variable", "param") for s in (index.names("param") if index else [])]


def _block_of(heads: list[str]) -> tuple[str | None, str | None]:
    """(kind of the block at hand, the stage open in it)."""
    kind, stage = None, None
    for h in heads:
        m = _HEADER.search(h)
        if m:
            kind, stage = m.group(1), None
        elif kind is not None:
            s = _STAGE.search(h)
            stage = s.group(1) if s else None
    return kind, stage


def _written_keys(before: str) -> set[str]:
    clean = _strip(before)
    start = clean.rfind("{")
    return set(re.findall(r"(?:^|[\s;{])([A-Za-z_]\w*)\s*=", clean[start + 1 :]))


def complete(text: str, line: int, col: int, index: Index | None) -> list[Item]:
    """Items for the cursor at (line, col), 1-based (col in code points)."""
    lines = split_lines(text) or [""]  # the parser's lines
    before = "\n".join(lines[: line - 1] + [lines[line - 1][: col - 1] if line - 1 < len(lines) else ""])
    current = before.rsplit("\n", 1)[-1]
    segment = re.split(r"[;{]", _strip(current))[-1]
    if re.match(r"^\s*import\s+\S*$", current):
        return [Item(f"std.{m}", "module", "the standard library") for m in std_modules()]
    m = re.search(r"(?:^|[\s;])(" + "|".join(KINDS) + r")\s+[A-Za-z_]\w*\s*:\s*\w*$", current)
    if m:
        return [Item(s.name, "reference", f"{s.kind} ({s.span.file})") for s in (index.names(m.group(1)) if index else [])]
    if re.match(r"^\s*param\s+[A-Za-z_]\w*\s*=[^~]*~\s*\w*$", segment):
        return [Item(k, "function", f"~ {k}({_dist_args(k)})") for k in DIST_KINDS]
    kind, stage = _block_of(enclosing(before))
    if kind is not None:
        v = re.search(r"([A-Za-z_]\w*)\s*=\s*(.*)$", segment)
        if v:
            return _value_items(kind, stage, v.group(1), v.group(2), index)
        table = STAGES.get(stage, {}) if stage else KINDS.get(kind, {})
        written = _written_keys(before)
        items = [Item(k, "field", f.doc) for k, f in table.items() if k not in written]
        if kind == "pluggable" and stage is None:
            items += [Item(s, "stage", "a stage of the module") for s in STAGES]
        return items
    if re.search(r"\d\s*[A-Za-z%]*$", segment) and "=" in segment:
        return [Item(u, "unit") for u in units_of(None)]
    if re.match(r"^\s*\w*$", segment):
        return [Item(k, "keyword", "block") for k in KINDS] + [Item(k, "keyword", "statement") for k in STATEMENTS]
    return [Item(s.name, "variable", s.kind) for s in (index.names() if index else [])]


def _dist_args(kind: str) -> str:
    names, _ = DIST_KINDS[kind]
    return "[v1, v2, ...]" if kind == "samples" else ", ".join(names)


__all__ = ["Item", "complete", "enclosing", "units_of"]
