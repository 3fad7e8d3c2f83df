"""The parser: text -> syntax tree, with exact numbers, units as written and spans.

Expected trees are written by hand from the grammar (grammar/ctdsl.lark) and the
text of each input; spans are 1-based line:col, end exclusive.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from ctdsl.diagnostics import DiagnosticSink
from ctdsl.syntax import ast
from ctdsl.syntax.parser import lark_parser, parse_expression, parse_text


def parse(text: str) -> ast.SpecFile:
    sink = DiagnosticSink()
    tree = parse_text(text, "t.ct", sink)
    assert sink.items == [], [d.message for d in sink.items]
    assert tree is not None
    return tree


def expr(text: str) -> ast.Expr:
    sink = DiagnosticSink()
    node = parse_expression(text, "e", sink)
    assert sink.items == [], [d.message for d in sink.items]
    return node


def shape(node) -> object:
    """A compact view of an expression: numbers as (value, unit), refs dotted, ops as tuples."""
    if isinstance(node, ast.Number):
        return (node.value, node.unit) if node.unit else node.value
    if isinstance(node, ast.Ref):
        return node.dotted
    if isinstance(node, ast.Neg):
        return ("neg", shape(node.operand))
    if isinstance(node, ast.BinOp):
        return (node.op, shape(node.left), shape(node.right))
    if isinstance(node, ast.Call):
        return (node.func.text + "()", *[shape(a) for a in node.args])
    if isinstance(node, ast.ListValue):
        return [shape(v) for v in node.items]
    if isinstance(node, ast.StringValue):
        return f'"{node.text}"'
    raise TypeError(node)


def span(s) -> str:
    return f"{s.line}:{s.col}-{s.end_line}:{s.end_col}"


# ---- expressions -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 + 2 * 3", ("+", 1, ("*", 2, 3))),
        ("(1 + 2) * 3", ("*", ("+", 1, 2), 3)),
        ("8 - 4 - 2", ("-", ("-", 8, 4), 2)),  # left-associative
        ("8 / 4 / 2", ("/", ("/", 8, 4), 2)),
        ("2 ^ 3 ^ 2", ("^", 2, ("^", 3, 2))),  # right-associative
        ("-2 ^ 2", ("neg", ("^", 2, 2))),  # the power binds tighter than the sign
        ("2 ^ -1", ("^", 2, ("neg", 1))),
        ("- - 1", ("neg", ("neg", 1))),
        ("a.b.c * 2", ("*", "a.b.c", 2)),
        ("min(1 GB, x)", ("min()", (1, "GB"), "x")),
        ("ceil(log2(65536) / 8)", ("ceil()", ("/", ("log2()", 65536), 8))),
        ("max()", ("max()",)),
        ("12.5 GB/s", (Fraction(25, 2), "GB/s")),
        ("12.5GB/s", (Fraction(25, 2), "GB/s")),
        ("15 pJ/bit", (15, "pJ/bit")),
        ("1/16", ("/", 1, 16)),
        ("1 B / 8", ("/", (1, "B"), 8)),
        ("40 %", (40, "%")),
        ("5 \u00b5s", (5, "\u00b5s")),
    ],
)
def test_expression_shapes(text, expected):
    assert shape(expr(text)) == expected


@pytest.mark.parametrize(
    "text, value",
    [
        ("70.55e9", Fraction(7055, 100) * 10**9),
        ("1_000_000", Fraction(10**6)),
        (".5", Fraction(1, 2)),
        ("1e-3", Fraction(1, 1000)),
        ("2E+2", Fraction(200)),
        ("0.1", Fraction(1, 10)),  # exact: no binary rounding
        ("3." + "3" * 60, Fraction(int("3" * 61), 10**60)),
    ],
)
def test_numbers_are_exact(text, value):
    node = expr(text)
    assert isinstance(node, ast.Number)
    assert node.value == value and node.text == text


def test_number_and_unit_spans():
    node = parse("param bw = 12.5 GB/s\n").statements[0].default
    assert span(node.span) == "1:12-1:21"
    assert span(node.unit_span) == "1:17-1:21"


def test_binop_spans_point_at_the_operator():
    node = expr("1 GB + 2 s")
    assert span(node.span) == "1:1-1:11" and span(node.op_span) == "1:6-1:7"


# ---- statements ----------------------------------------------------------------------


def test_param_with_range_and_display():
    (p,) = parse('param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41 "b_{\\mathrm{WAN}}"\n').statements
    assert isinstance(p, ast.Param)
    assert p.name.text == "wan_bw" and span(p.name.span) == "1:7-1:13"
    assert shape(p.range.lo) == (Fraction(1, 10), "GB/s") and shape(p.range.hi) == (1000, "GB/s")
    assert p.range.spacing == "log" and p.range.count == 41
    assert p.display == "b_{\\mathrm{WAN}}"


@pytest.mark.parametrize("spacing", ["lin", "log"])
def test_sweep_after_a_unitless_range_end(spacing):
    # `2 log 10`: `log` is the spacing here, not a unit of the 2
    (p,) = parse(f"param x = 1 in 0.5 .. 2 {spacing} 10\n").statements
    assert shape(p.range.hi) == 2 and p.range.spacing == spacing and p.range.count == 10


def test_param_without_range():
    (p,) = parse("param eff = 0.4\n").statements
    assert p.range is None and p.display is None


def test_block_with_base_fields_and_stages():
    (b,) = parse(
        "pluggable qsfp : base {\n"
        "  port { rate = 25 GB/s; host = 50 GB/s }\n"
        "  latency = 1 us\n"
        "  ops = [fft, dct]\n"
        "}\n"
    ).statements
    assert isinstance(b, ast.Block)
    assert b.kind == "pluggable" and b.name.text == "qsfp" and b.base.text == "base"
    assert span(b.span) == "1:1-5:2" and span(b.kind_span) == "1:1-1:10"
    stage, latency, ops = b.items
    assert isinstance(stage, ast.Stage) and stage.name.text == "port"
    assert [(f.key.text, shape(f.value)) for f in stage.items] == [("rate", (25, "GB/s")), ("host", (50, "GB/s"))]
    assert (latency.key.text, shape(latency.value)) == ("latency", (1, "us"))
    assert shape(ops.value) == ["fft", "dct"]


def test_reserved_words_as_keys_and_names():
    # the contextual lexer lets a key or a name be a word that starts statements elsewhere
    (dc, link) = parse("dc east { link = wan; device = model; switch = tor }\nlink wan { bandwidth = 1 GB/s }\n").statements
    assert [f.key.text for f in dc.items] == ["link", "device", "switch"]
    assert shape(dc.items[1].value) == "model"
    assert link.name.text == "wan"


def test_strings_lists_and_empty_things():
    (s,) = parse('scheme s { label = "DiLoCo, H=100"; ops = []; empty = [1, "x", a.b] }\n').statements
    assert [shape(f.value) for f in s.items] == ['"DiLoCo, H=100"', [], [1, '"x"', "a.b"]]
    (e,) = parse("switch s {}\n").statements
    assert e.items == ()


def test_imports_wan_breakeven_baseline():
    statements = parse(
        'import "common/x.ct"; import std.links\n'
        "wan a <-> b = l\n"
        "wan a -> b = m\n"
        "breakeven x vs y over bw\n"
        "baseline x\n"
    ).statements
    imp_file, imp_std, both, one, be, base = statements
    assert (imp_file.path, imp_file.module) == ("common/x.ct", None)
    assert (imp_std.path, imp_std.module) == (None, ("std", "links"))
    assert (both.a.text, both.b.text, both.both, both.link.text) == ("a", "b", True, "l")
    assert (one.both, one.link.text) == (False, "m")
    assert (be.x.text, be.y.text, be.over.text) == ("x", "y", "bw")
    assert base.scheme.text == "x"


def test_separators_comments_and_blank_lines():
    text = "\n\n# a comment\nparam a = 1 # trailing\n;;\nparam b = 2; param c = 3\n\n"
    names = [s.name.text for s in parse(text).statements]
    assert names == ["a", "b", "c"]


def test_crlf_and_tabs():
    (b,) = parse("link l {\r\n\tbandwidth = 5 GB/s\r\n}\r\n").statements
    field = b.items[0]
    assert span(field.key.span) == "2:2-2:11"  # a tab is one column


def test_no_final_newline():
    (p,) = parse("param x = 1").statements
    assert p.name.text == "x"


def test_empty_file():
    assert parse("").statements == ()
    assert parse("# only a comment").statements == ()


def test_to_json_round_trips_through_json():
    import json

    tree = parse("param x = 1/16 in 0.5 .. 2\nlink l { bandwidth = min(1 GB/s, x * 1 GB/s) }\n")
    data = ast.to_json(tree)
    assert json.loads(json.dumps(data)) == data
    assert data["statements"][0]["default"]["node"] == "BinOp"
    assert data["statements"][0]["range"]["lo"]["value"] == "1/2"


def test_parser_is_cached():
    assert lark_parser() is lark_parser()


def test_parse_expression_rejects_trailing_text():
    sink = DiagnosticSink()
    assert parse_expression("25 GB/s extra", "--set x", sink) is None
    assert [(d.code, d.message, d.span.col) for d in sink.items] == [("CT002", "unexpected 'extra' after the value", 9)]
