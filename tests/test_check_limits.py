"""Limits that need inputs too large for a chunk in tests/errors/60_limits.ct.

Each breach is one diagnostic with its code, never an exception, and is found
without doing the expensive work the limit guards against.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctdsl import limits
from ctdsl.api import check
from ctdsl.diagnostics import render_text

ROOT = Path(__file__).resolve().parents[1]


def codes(result) -> list[str]:
    for d in result.diagnostics:
        render_text(d, result.sources)  # rendering a huge input must work too
    return [d.code for d in result.diagnostics]


def test_file_too_large_as_text(monkeypatch):
    import ctdsl.syntax.parser as parser

    def no_parsing():
        raise AssertionError("a file over the limit must be rejected before it is parsed")

    monkeypatch.setattr(parser, "lark_parser", no_parsing)
    text = "# padding\n" * (limits.MAX_FILE_BYTES // 10 + 1)
    result = check("big.ct", text=text)
    assert codes(result) == ["CT601"]
    assert result.diagnostics[0].span.line == 1


def test_file_too_large_on_disk(tmp_path):
    path = tmp_path / "big.ct"
    path.write_bytes(b"#" * (limits.MAX_FILE_BYTES + 1) + b"\n")
    result = check(str(path))
    assert codes(result) == ["CT601"]
    assert f"larger than {limits.MAX_FILE_BYTES // 1024} KiB" in result.diagnostics[0].message


def test_file_at_the_limit_is_read(tmp_path):
    text = "# padding\n" * (limits.MAX_FILE_BYTES // 10 - 10) + "param x = 1\n"
    assert len(text.encode()) <= limits.MAX_FILE_BYTES
    assert codes(check("edge.ct", text=text)) == []


def test_imported_file_too_large(tmp_path):
    (tmp_path / "big.ct").write_bytes(b"#" * (limits.MAX_FILE_BYTES + 1))
    root = tmp_path / "root.ct"
    root.write_text('import "big.ct"\n', encoding="utf-8")
    result = check(str(root))
    assert codes(result) == ["CT601"]


def test_too_many_expression_nodes_in_a_file():
    # 3000 params of ten terms: shallow, but more than 50,000 nodes in all
    text = "".join(f"param p{i} = 1+1+1+1+1+1+1+1+1+1\n" for i in range(3000))
    result = check("wide.ct", text=text)
    assert codes(result) == ["CT603"]
    assert str(limits.MAX_EXPR_NODES) in result.diagnostics[0].message


def test_deep_parentheses_are_not_deep_expressions():
    # parentheses only group: they add no node, so this is the number 1
    text = "param x = " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    assert codes(check("parens.ct", text=text)) == []


@pytest.mark.parametrize(
    "expr",
    [
        "1+" * 5000 + "1",  # a long sum is a deep tree
        "-" * 5000 + "1",
        "2^" * 5000 + "1",
        "max(" * 5000 + "1" + ")" * 5000,
    ],
    ids=["sum", "neg", "pow", "calls"],
)
def test_deep_expressions_give_one_diagnostic(expr):
    result = check("deep.ct", text=f"param x = {expr}\n")
    assert codes(result) == ["CT602"]


def test_deeply_nested_blocks_are_a_syntax_or_nesting_error():
    text = "pluggable p " + "{ a " * 5000 + "}" * 5000 + "\n"
    assert codes(check("braces.ct", text=text)) == ["CT002"]  # a stage needs a name before '{'
    text = "pluggable p { " + "a { " * 5000 + "}" * 5001 + "\n"
    assert codes(check("braces.ct", text=text)) == ["CT602"]


def test_too_many_files(tmp_path):
    n = limits.MAX_IMPORTS + 5
    for i in range(n):
        (tmp_path / f"f{i}.ct").write_text(f"param p{i} = {i}\n", encoding="utf-8")
    root = tmp_path / "root.ct"
    root.write_text("".join(f'import "f{i}.ct"\n' for i in range(n)), encoding="utf-8")
    result = check(str(root))
    found = codes(result)
    assert set(found) == {"CT505"}
    assert f"at most {limits.MAX_IMPORTS} files" in result.diagnostics[0].message


def test_import_chain_too_deep(tmp_path):
    depth = limits.MAX_IMPORT_DEPTH + 3
    for i in range(depth):
        nxt = f'import "f{i + 1}.ct"\n' if i + 1 < depth else "param last = 1\n"
        (tmp_path / f"f{i}.ct").write_text(nxt, encoding="utf-8")
    result = check(str(tmp_path / "f0.ct"))
    assert codes(result) == ["CT505"]
    assert result.diagnostics[0].span.file.endswith(f"f{limits.MAX_IMPORT_DEPTH - 1}.ct")


def test_import_chain_at_the_limit_is_followed(tmp_path):
    depth = limits.MAX_IMPORT_DEPTH
    for i in range(depth):
        nxt = f'import "f{i + 1}.ct"\n' if i + 1 < depth else "param last = 1\n"
        (tmp_path / f"f{i}.ct").write_text(nxt, encoding="utf-8")
    result = check(str(tmp_path / "f0.ct"))
    assert codes(result) == []
    assert "last" in result.spec.params


def test_override_value_too_long():
    result = check(ROOT / "specs" / "llama70b_wan.ct", overrides={"wan_bw": "1" * 20_000})
    assert "CT601" in codes(result)


def _table(n: int) -> str:
    return "param r = 1 in 0 .. 2 ~ samples([" + ", ".join(f"{1 + (i % 7) / 10}" for i in range(n)) + "])\n"


def test_a_table_of_samples_over_the_limit_is_ct629_before_any_sample_is_typed(monkeypatch):
    import ctdsl.check.distributions as D

    def no_typing(*args, **kwargs):
        raise AssertionError("a table over the limit must be refused before its samples are typed")

    monkeypatch.setattr(D, "_nodes", no_typing)  # the first thing done to each sample
    result = check("table.ct", text=_table(limits.MAX_DIST_SAMPLES + 1))
    assert codes(result) == ["CT629"]
    assert f"a table of {limits.MAX_DIST_SAMPLES + 1:,} samples; at most {limits.MAX_DIST_SAMPLES:,}" in result.diagnostics[0].message
    assert (result.diagnostics[0].span.line, result.diagnostics[0].span.col) == (1, 33)  # the table's bracket


def test_a_table_at_the_limit_is_read_and_the_model_refuses_a_larger_one(monkeypatch):
    from ctdsl.model.distribution import Distribution

    monkeypatch.setattr(limits, "MAX_DIST_SAMPLES", 50)
    result = check("table.ct", text=_table(50))
    assert codes(result) == [] and len(result.spec.params["r"].dist.args) == 50
    assert codes(check("table.ct", text=_table(51))) == ["CT629"]
    # the model's own bound, for a Distribution made in Python without the checker
    with pytest.raises(ValueError, match="1 .. 50"):
        Distribution("samples", tuple(range(51)), result.spec.params["r"].dist.span)
