"""Lint never crashes: on specs with their numbers changed at random, every rule runs
(no CTL000, which marks a rule that raised) and every format renders."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lintkit import ROOT

from ctdsl.lint import LintConfig, lint_files
from ctdsl.lint.formats import FORMATS, render

FLAGSHIP = (ROOT / "specs" / "llama70b_wan.ct").read_text(encoding="utf-8")
BAD = (ROOT / "tests" / "lint" / "bad_everything.ct").read_text(encoding="utf-8")
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
VALUES = st.sampled_from(["0", "1", "2", "0.5", "1e-9", "1e9", "3", "16", "65536", "1e30", "7.25"])


def mutate(text: str, changes: list[tuple[int, str]]) -> str:
    """Replace a few of the numbers: (position among the numbers, new text)."""
    count = len(NUMBER.findall(text))
    new = {i % count: v for i, v in changes}
    seen = iter(range(count))
    return NUMBER.sub(lambda m: new.get(next(seen), m.group(0)), text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    base=st.sampled_from([FLAGSHIP, BAD]),
    changes=st.lists(st.tuples(st.integers(0, 10_000), VALUES), min_size=1, max_size=4),
)
def test_rules_never_raise(tmp_path_factory, base, changes):
    folder = tmp_path_factory.mktemp("spec")
    text = mutate(base, changes)
    path = str(folder / "s.ct")
    report = lint_files([path], LintConfig(), texts={path: text})
    assert not [d for d in report.diagnostics if d.code == "CTL000"], [d.message for d in report.diagnostics]
    for fmt in FORMATS:
        out = render(report, fmt)
        if fmt in ("json", "sarif"):
            json.loads(out)
