"""Whatever the input, checking it gives a result or diagnostics, never another exception.

Two sources of inputs:

- sentences of the grammar itself (hypothesis.extra.lark.from_lark), with
  words, numbers and units drawn from small lists of real and fake ones so that
  names often resolve and units are often right, and a space after every token;
- the flagship spec, mutated: lines deleted, duplicated or swapped, tokens and
  characters inserted, characters deleted.

A clean result must also go through every later stage that reads the model
(its JSON view and the graph), and every diagnostic must render. The fuzz
campaign (tests/fuzz, bench/fuzz.py) runs the same grammar strategy, and more
mutations, through every command.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctdsl.api import check
from ctdsl.diagnostics import render_concise, render_json, render_text
from ctdsl.model.graph import build_graph
from ctdsl.model.graph import to_json as graph_to_json
from ctdsl.model.serialize import spec_to_json
from fuzz.generators import grammar_strategy

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
FLAGSHIP_TEXT = FLAGSHIP.read_text(encoding="utf-8")
# generated specs "live" next to the test data, so that quoted imports resolve (and mostly fail)
GENERATED = ROOT / "tests" / "data" / "generated.ct"

# the grammar's sentences, with their word lists, are shared with the fuzz campaign (tests/fuzz)
_grammar_strategy = grammar_strategy


def _check_never_crashes(path: Path, text: str) -> None:
    result = check(str(path), text=text)
    for d in result.diagnostics:
        render_text(d, result.sources)
        assert "\n" not in render_concise(d)
    json.loads(render_json(result.diagnostics))
    if result.ok:
        spec = result.spec
        assert spec is not None
        json.dumps(spec_to_json(spec))
        graph_to_json(build_graph(spec), spec.defaults())
    else:
        assert result.spec is None


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_grammar_strategy())
def test_sentences_of_the_grammar(text):
    _check_never_crashes(GENERATED, text)


TOKENS = [
    "{", "}", "=", "==", ";", ",", "(", ")", "[", "]", "..", ".", ":", "^", "/", "*", "-", "+", "<->", "->",
    '"', "'", "#", "\t", "\n", "\r\n", "\x00", "\u00b5", "\u00e9", "\ufeff", "param", "import", "model",
    "wan", "in", "log", "lin", "vs", "over", "baseline", "breakeven", "gpu", "true", "12.5 GB/s", "5 ms", "0",
    "-1", "1e999", "1/0", "x", "east", "tor", "qsfp", "wan_bw", "hier_allgather", "topk", "std.links",
]


@st.composite
def mutated_flagship(draw) -> str:
    lines = FLAGSHIP_TEXT.split("\n")
    for _ in range(draw(st.integers(1, 4))):
        n = len(lines)
        op = draw(st.sampled_from(["delete", "duplicate", "swap", "insert", "delete_chars", "replace_line"]))
        i = draw(st.integers(0, n - 1))
        if op == "delete" and n > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(i, lines[i])
        elif op == "swap":
            j = draw(st.integers(0, n - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "insert":
            line = lines[i]
            at = draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(TOKENS)) + line[at:]
        elif op == "delete_chars" and lines[i]:
            line = lines[i]
            at = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:at] + line[at + draw(st.integers(1, 8)) :]
        elif op == "replace_line":
            lines[i] = draw(st.text(alphabet=st.sampled_from("abc{}=;:.\"#0123456789 GBs/<->^()[],\t"), max_size=30))
    return "\n".join(lines)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_flagship())
def test_mutations_of_the_flagship(text):
    _check_never_crashes(FLAGSHIP, text)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text(text):
    _check_never_crashes(GENERATED, text)


def test_the_unmutated_flagship_is_clean():
    assert check(str(FLAGSHIP), text=FLAGSHIP_TEXT).ok
