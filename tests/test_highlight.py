"""The Pygments lexer (ctdsl/highlight.py): registered, error-free on every spec, and
classifying a line as written out by hand."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pygments = pytest.importorskip("pygments")

from pygments.lexers import get_lexer_by_name, get_lexer_for_filename  # noqa: E402
from pygments.token import Error, Token  # noqa: E402

from ctdsl.check.distributions import KINDS as DIST_KINDS  # noqa: E402
from ctdsl.highlight import DISTRIBUTIONS, KINDS, STATEMENT_WORDS, CtLexer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(
    [*ROOT.glob("specs/**/*.ct"), *ROOT.glob("examples/**/*.ct"), *ROOT.glob("ctdsl/stdlib/*.ct"), *ROOT.glob("tests/lint/fixtures/**/*.ct")]
)


def _doc_blocks() -> list[tuple[str, str]]:
    out = []
    for page in sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]:
        for i, m in enumerate(re.finditer(r"^```ct\n(.*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)):
            out.append((f"{page.name}#{i}", m.group(1)))
    return out


def test_the_lexer_is_registered_through_the_entry_point():
    (ep,) = [e for e in entry_points(group="pygments.lexers") if e.name == "ct"]
    assert ep.value == "ctdsl.highlight:CtLexer"
    assert isinstance(get_lexer_by_name("ct"), CtLexer)
    assert isinstance(get_lexer_for_filename("study.ct"), CtLexer)


def test_the_keywords_are_the_grammars():
    grammar = (ROOT / "grammar" / "ctdsl.lark").read_text(encoding="utf-8")
    kind_rule = re.search(r"^!kind:(.*)$", grammar, re.M).group(1)
    assert set(re.findall(r'"(\w+)"', kind_rule)) == set(KINDS)
    literals = set(re.findall(r'"([a-z]+)"', grammar))
    assert literals == set(KINDS) | set(STATEMENT_WORDS)


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_spec_highlights_without_error_tokens(path):
    text = path.read_text(encoding="utf-8")
    tokens = list(CtLexer().get_tokens(text))
    bad = [v for t, v in tokens if t in Error]
    assert bad == []
    assert "".join(v for _, v in tokens) == text if text.endswith("\n") else text + "\n"


@pytest.mark.parametrize("name, text", _doc_blocks(), ids=lambda x: x if isinstance(x, str) and "#" in x else "")
def test_every_docs_block_highlights_without_error_tokens(name, text):
    assert [v for t, v in CtLexer().get_tokens(text) if t in Error] == []


def test_a_line_is_classified_as_the_grammar_reads_it():
    line = 'link wan : eth100g { bandwidth = 12.5 GB/s; ops = [dct] }  # 100 GbE\nparam x = 1e3 in 1 .. 2 log 5 "x"\n'
    got = [(t, v) for t, v in CtLexer().get_tokens(line) if t not in Token.Text.Whitespace]
    assert got == [
        (Token.Keyword.Declaration, "link"),
        (Token.Name.Class, "wan"),
        (Token.Punctuation, ":"),
        (Token.Name.Class, "eth100g"),
        (Token.Punctuation, "{"),
        (Token.Name.Attribute, "bandwidth"),
        (Token.Operator, "="),
        (Token.Literal.Number.Float, "12.5"),
        (Token.Keyword.Type, "GB/s"),
        (Token.Punctuation, ";"),
        (Token.Name.Attribute, "ops"),
        (Token.Operator, "="),
        (Token.Punctuation, "["),
        (Token.Name, "dct"),
        (Token.Punctuation, "]"),
        (Token.Punctuation, "}"),
        (Token.Comment.Single, "# 100 GbE"),
        (Token.Keyword, "param"),
        (Token.Name.Variable, "x"),
        (Token.Operator, "="),
        (Token.Literal.Number.Float, "1e3"),
        (Token.Keyword, "in"),
        (Token.Literal.Number.Integer, "1"),
        (Token.Operator, ".."),
        (Token.Literal.Number.Integer, "2"),
        (Token.Keyword, "log"),
        (Token.Literal.Number.Integer, "5"),
        (Token.Literal.String.Double, '"x"'),
    ]


def test_the_distribution_after_a_tilde_is_a_builtin_and_the_lexer_knows_every_kind():
    assert set(DISTRIBUTIONS) == set(DIST_KINDS)
    line = "param r = 1.1 in 0.9 .. 1.5 ~ samples([1.02, 1.3 s])\nparam samples = 2\n"
    got = [(t, v) for t, v in CtLexer().get_tokens(line) if t not in Token.Text.Whitespace]
    assert got[8:16] == [
        (Token.Operator, "~"),
        (Token.Name.Builtin, "samples"),
        (Token.Punctuation, "("),
        (Token.Punctuation, "["),
        (Token.Literal.Number.Float, "1.02"),
        (Token.Punctuation, ","),
        (Token.Literal.Number.Float, "1.3"),
        (Token.Keyword.Type, "s"),
    ]
    assert (Token.Name.Variable, "samples") in got  # a param may still be named so: only after ~ is it the distribution
