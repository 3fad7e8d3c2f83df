"""Every crash the fuzz campaign found, and one hostile case per class of issue 18, end no worse than a diagnostic.

Each case runs through every command its `# commands:` line names (all of them by
default: check, lint --format sarif, solve as a table and as JSON, export latex,
graph, report, a small sweep, simulate) in-process, each under a limit of CPU seconds,
and must end with exit code 0, 1 or 2 and no traceback. The limit (cases.LIMIT) is a
backstop far above any command's time on a loaded machine: a command is stopped
there only when it would never end. The case stops at its first crash or hang.

How fast the cases run is not asserted: bench/bench_regressions.py measures it. A
case first found as a timeout (a command that took seconds for work it should have
done once) names in its `counted by:` line the test that keeps the fix by counting
that work (solves, labels drawn, characters laid out), and the last test here
checks that every such case has one and that it exists.

A case that still fails is marked xfail(strict=True) with the class of issue 18 it
belongs to, from its `# xfail:` line (files) or from hostile_large.LARGE: the suite
stays green, and the day it is fixed the test turns red until the mark is removed.
"""

from __future__ import annotations

import pytest

from fuzz.cases import CRASHES, HOSTILE, LIMIT, cases
from fuzz.harness import ROOT, Harness
from fuzz.hostile_large import LARGE


def _cases():
    out = []
    for c in cases(CRASHES) + cases(HOSTILE):
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c.data, c.commands, c.sets, c.filename, id=f"{c.path.parent.name}/{c.id}", marks=marks))
    for name, case in LARGE.items():
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        commands = set(case.commands) if case.commands else None
        out.append(pytest.param(case.build, commands, (), "fuzz.ct", id=f"large/{name}", marks=marks))
    return out


@pytest.fixture(scope="module")
def harness():
    h = Harness(limit=LIMIT)
    yield h
    h.close()


@pytest.mark.parametrize("data, commands, sets, filename", _cases())
def test_no_crash_and_no_hang(harness, data, commands, sets, filename):
    text = data() if callable(data) else data
    result = harness.run(text, sets=sets, only=commands, first_problem=True, filename=filename)
    bad = [o for o in result.outcomes if o.kind in ("crash", "hang")]
    assert not bad, "\n".join(f"{o.command}: {o.signature} at {o.where}: {o.message}\n{o.trace[-1500:]}" for o in bad)


def test_the_cases_are_there():
    """At least one hostile case for each class of issue 18, and every crash file says its signature."""
    classes = {c.meta.get("class", "").split(" ")[0] for c in cases(HOSTILE)} | {v.cls.split(" ")[0] for v in LARGE.values()}
    assert {str(n) for n in range(1, 12)} <= classes
    assert all(c.meta.get("fuzz") for c in cases(CRASHES)), "a crash file without its '# fuzz:' signature"


def test_every_case_found_as_a_timeout_names_the_test_that_counts_its_work():
    import ast

    timeouts = [(c.id, c.counted_by) for c in cases(CRASHES) + cases(HOSTILE) if c.meta.get("fuzz", "").startswith("Timeout")]
    timeouts += [(name, case.counted_by) for name, case in LARGE.items() if case.counted_by]
    assert timeouts, "no case was found as a timeout: this test would check nothing"
    for case, ref in timeouts:
        assert ref, f"{case}: a case found as a timeout needs a `counted by:` test"
        path, _, name = ref.partition("::")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert name in {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}, f"{case}: no test {ref}"
