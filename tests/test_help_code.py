"""No help line suggests invalid code.

Every chunk of tests/errors/ (checked as `solve` checks it) and of the lint
fixtures (tests/lint/fixtures/) is run, and each help line that offers code,
`FIELD = VALUE` (alone, in a block, in a stage, or as a `wan` statement), is
taken apart: the field must be a field of some kind of block or stage (the
schema, ctdsl.language.schema), and the value valid for it:

- a quantity: a number (`0.4`, `1/16`, `8.03e9`), with a unit of the field's
  dimension when it has one (units parsed with the units table);
- an enum or bool: one of its words;
- a reference: a name the chunk, its imports or the standard library defines,
  of a kind the field may name (`at = gpu` is the one keyword);
- ops: a list of known operations; a string: a quoted string.

A value written in capitals (`NAME`, `N`) is a placeholder the user fills in,
not code. Text in single quotes is a name or a quotation, not code. The old
CT410 help, `device = gpu`, is the case the test is for: no device is named gpu.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from ctdsl import units as U
from ctdsl.api import check_runnable
from ctdsl.language import schema as S
from ctdsl.language.enums import Operation

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests" / "lint"))

from chunkedfile import SPEC_NAME, read_chunks  # noqa: E402
from lintkit import FIXTURES, lint_text  # noqa: E402

DEF = re.compile(r"^\s*(device|link|switch|pluggable|model|dc|param|scheme|instance|pool|workload|handoff|slo)\s+(\w+)", re.M)
BREAKEVEN = re.compile(r"\bbreakeven\s+(\w+)\s+vs\s+(\w+)\s+over\s+(\w+)")
WAN = re.compile(r"\bwan\s+(\w+)\s*(?:<->|->)\s*(\w+)\s*=\s*(\w+)")
PAIR = re.compile(r"\b(\w+)\s*=\s*(\[[^\]]*\]|\"[^\"]*\"|[^;,(){}]+?)(?=\s*(?:;|,|\)|\}|$|\s+(?:or|to|on|in|and|for)\b))")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")
NUMBER = re.compile(r"^(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?:\s*/\s*(\d+))?(?:\s+(\S+))?$")


def _defined(texts: list[str]) -> dict[str, set[str]]:
    names: dict[str, set[str]] = {}
    for t in texts:
        for kind, name in DEF.findall(t):
            names.setdefault(kind, set()).add(name)
    return names


def _texts(folder: Path) -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.rglob("*.ct")) if p.is_file()]


STD = [p.read_text(encoding="utf-8") for p in (ROOT / "ctdsl" / "stdlib").glob("*.ct")]
IMPORTS = _texts(ROOT / "tests" / "errors" / "imports")
LIB = _texts(FIXTURES / "lib")


from ctdsl.check.search import FIELDS as SEARCH_FIELDS  # noqa: E402


def _field_specs(field: str) -> list[S.FieldSpec]:
    found = [kind[field] for kind in S.KINDS.values() if field in kind]
    return found + [stage[field] for stage in S.STAGES.values() if field in stage]


def _quantity_ok(value: str, spec: S.FieldSpec, names: dict[str, set[str]]) -> str | None:
    m = NUMBER.match(value.strip())
    if m is None:
        if value in names.get("param", ()):
            return None  # a param's dimension is checked where it is declared, its use by the checker
        return f"{value!r} is not a number with a unit, nor a param"
    unit = m.group(3)
    if unit is None:
        return None if spec.dim == U.ONE else f"{value!r} has no unit; {spec.name} is a {spec.dim.symbol()}"
    try:
        parsed = U.parse_unit(unit)
    except U.UnitError as exc:
        return str(exc)
    if parsed.dim != spec.dim:
        return f"{value!r} is a {parsed.dim.symbol()}; {spec.name} is a {spec.dim.symbol()}"
    return None


def _value_ok(spec: S.FieldSpec, value: str, names: dict[str, set[str]]) -> str | None:
    """Why `value` is not valid for the field, or None."""
    if spec.type == "quantity":
        return _quantity_ok(value, spec, names)
    if spec.type == "enum":
        return None if value in spec.choices else f"{value!r} is not one of {', '.join(spec.choices)}"
    if spec.type == "bool":
        return None if value in ("true", "false") else f"{value!r} is not true or false"
    if spec.type == "string":
        return None if value.startswith('"') and value.endswith('"') else f"{value!r} is not a string"
    if spec.type == "ops":
        words = [w.strip() for w in value.strip("[]").split(",") if w.strip()]
        bad = [w for w in words if w not in tuple(Operation)]
        return None if value.startswith("[") and not bad else f"{value!r} names unknown operations"
    if spec.type == "ref":
        if value == "gpu" and "gpu" in spec.refs:
            return None
        if any(value in names.get(kind, ()) for kind in spec.refs):
            return None
        return f"no {' or '.join(spec.refs)} is named {value!r}"
    return f"no rule for a {spec.type} field"


def code_problems(help_text: str, texts: list[str]) -> list[str]:
    """What is wrong with the code that a help line offers (empty: nothing, or none offered)."""
    names = _defined(texts + STD + IMPORTS + LIB)
    text = re.sub(r"'[^']*'", "''", help_text)  # quoted names and quotations are not code
    problems = []
    for a, b, link in WAN.findall(text):
        for dc in (a, b):
            if dc not in names.get("dc", ()):
                problems.append(f"wan names no dc {dc!r}")
        if not PLACEHOLDER.match(link) and link not in names.get("link", ()):
            problems.append(f"wan names no link {link!r}")
    text = WAN.sub("", text)
    for x, y, over in BREAKEVEN.findall(text):
        for n, kind in ((x, "scheme"), (y, "scheme"), (over, "param")):
            if n not in names.get(kind, ()):
                problems.append(f"breakeven names no {kind} {n!r}")
    for field, value in PAIR.findall(text):
        value = value.strip()
        if PLACEHOLDER.match(value):
            continue
        specs = _field_specs(field)
        if not specs and field in SEARCH_FIELDS:  # a search statement's field: its checker reads the value
            continue
        if not specs:
            problems.append(f"{field!r} is no block's field")
            continue
        why = [_value_ok(s, value, names) for s in specs]
        if all(w is not None for w in why):
            problems.append(f"{field} = {value}: {why[0]}")
    return problems


def _helps() -> list[tuple[str, str, list[str]]]:
    out: dict[tuple[str, str], tuple[str, list[str]]] = {}
    here = os.getcwd()
    try:
        for f in sorted((ROOT / "tests" / "errors").glob("*.ct")):
            os.chdir(f.parent)
            for c in read_chunks(f):
                for d in check_runnable(SPEC_NAME, text=c.text).diagnostics:
                    if d.help:
                        out.setdefault((d.code, d.help), (c.id, [c.text]))
        os.chdir(FIXTURES)
        for f in sorted(FIXTURES.glob("CTL*.ct")):
            for c in read_chunks(f):
                for d in lint_text(c.text).diagnostics:
                    if d.help:
                        out.setdefault((d.code, d.help), (c.id, [c.text]))
    finally:
        os.chdir(here)
    return [(code, h, where, texts) for (code, h), (where, texts) in sorted(out.items())]


@pytest.fixture(scope="module")
def helps() -> list[tuple[str, str, str, list[str]]]:
    """The help lines, gathered once, on the worker that runs this file's tests (not at collection, on every worker)."""
    return _helps()


def test_there_are_help_lines_offering_code(helps):
    offering = [h for _, h, _, _ in helps if PAIR.search(re.sub(r"'[^']*'", "", h))]
    assert len(offering) >= 30, offering


def test_every_help_line_offers_valid_code(helps):
    bad = []
    for code, h, where, texts in helps:
        for p in code_problems(h, texts):
            bad.append(f"{where}: {code} help {h!r}: {p}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "help_text, problem",
    [
        ("add a dc block: dc east { workers = 4; device = gpu; link = ib; switch = tor }", "no device is named 'gpu'"),
        ("e.g. bandwidth = 10 us", "is a s; bandwidth is a B/s"),
        ("set transform_charge = memory", "is not one of roofline, flops"),
        ("set colour = red", "'colour' is no block's field"),
        ("add ops = [dct, fly]", "names unknown operations"),
        ("add a WAN link: wan a <-> z = NAME", "wan names no dc 'z'"),
        ("or a break-even (breakeven a vs b over bw)", "breakeven names no scheme 'a'"),
        ("name it in a field (bandwidth = spare)", "is not a number with a unit, nor a param"),
    ],
)
def test_the_checker_of_help_lines_rejects_invalid_code(help_text, problem):
    problems = code_problems(help_text, ["dc a { workers = 1 }"])
    assert any(problem in p for p in problems), problems


def test_the_checker_of_help_lines_accepts_placeholders_and_valid_code():
    assert code_problems("add model = NAME to the scheme, or define one model in the spec", []) == []
    assert code_problems("e.g. efficiency = 0.4; fraction = 1/16; at = gpu; link = ib_ndr", []) == []
    assert code_problems("add pluggable = p to dc 'c'", ["pluggable p { ops = [dct] }"]) == []


def test_the_catalogues_help_lines_are_all_tested_here(helps):
    """docs/diagnostics.md shows help lines mostly from the same chunks; the others (codes
    no chunk can show: limits, solver errors) are checked here without a spec around them."""
    doc = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    shown = {m.strip() for m in re.findall(r"^\s*= help: (.*)$", doc, re.M)}
    checked = {h for _, h, _, _ in helps}
    assert len(shown & checked) >= 40
    bad = {h: code_problems(h, []) for h in shown - checked}
    assert not any(bad.values()), bad
