"""Every crash the fuzz campaign found, and one hostile case per class of issue 18, end no worse than a diagnostic.

Each case runs through every command its `# commands:` line names (all of them by
default: check, lint --format sarif, solve as a table and as JSON, export latex,
graph, report, a small sweep, simulate) in-process, each under a limit of CPU seconds,
and must end with exit code 0, 1 or 2, no traceback, within the limit. The case
stops at its first crash or hang: one is enough to fail, and a hang costs the limit.

A case that still fails is marked xfail(strict=True) with the class of issue 18 it
belongs to, from its `# xfail:` line (files) or from hostile_large.LARGE: the suite
stays green, and the day it is fixed the test turns red until the mark is removed.
"""

from __future__ import annotations

import pytest

from fuzz.cases import CRASHES, HOSTILE, LIMIT, cases
from fuzz.harness import Harness
from fuzz.hostile_large import LARGE


def _cases():
    out = []
    for c in cases(CRASHES) + cases(HOSTILE):
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        out.append(pytest.param(c.data, c.commands, c.sets, c.limit, id=f"{c.path.parent.name}/{c.id}", marks=marks))
    for name, case in LARGE.items():
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        commands = set(case.commands) if case.commands else None
        out.append(pytest.param(case.build, commands, (), case.limit or LIMIT, id=f"large/{name}", marks=marks))
    return out


@pytest.fixture(scope="module")
def harness():
    h = Harness(limit=LIMIT)
    yield h
    h.close()


@pytest.mark.parametrize("data, commands, sets, limit", _cases())
def test_no_crash_and_no_hang(harness, data, commands, sets, limit):
    harness.limit = limit
    text = data() if callable(data) else data
    result = harness.run(text, sets=sets, only=commands, first_problem=True)
    bad = [o for o in result.outcomes if o.kind in ("crash", "hang")]
    assert not bad, "\n".join(f"{o.command}: {o.signature} at {o.where}: {o.message}\n{o.trace[-1500:]}" for o in bad)


def test_the_cases_are_there():
    """At least one hostile case for each class of issue 18, and every crash file says its signature."""
    classes = {c.meta.get("class", "").split(" ")[0] for c in cases(HOSTILE)} | {v.cls.split(" ")[0] for v in LARGE.values()}
    assert {str(n) for n in range(1, 12)} <= classes
    assert all(c.meta.get("fuzz") for c in cases(CRASHES)), "a crash file without its '# fuzz:' signature"
