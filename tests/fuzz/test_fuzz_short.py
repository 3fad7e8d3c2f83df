"""The short fuzz run of the normal suite: a fixed set of generated inputs through every command.

40 sentences of the grammar (hypothesis, fixed seed) and 40 mutated or
field-randomised specs and examples (random.Random, fixed seed) run through the
harness (check, lint, and for a clean spec solve, export, graph, report, sweep and
simulate). The run fails on any crash, except one already kept as a regression case
in tests/fuzz/crashes/ and still marked xfail there: that one fails its own test
until it is fixed. The same inputs every run; CTDSL_FUZZ_SHORT=N runs N of each.
The long run is bench/fuzz.py.
"""

from __future__ import annotations

import os

import pytest

from fuzz.cases import CRASHES, cases
from fuzz.generators import generate, sample_grammar
from fuzz.harness import ROOT, Harness, _from_text

N = int(os.environ.get("CTDSL_FUZZ_SHORT", "40"))
SEED = 2026
LIMIT = 20.0  # seconds per command: only a bound on the suite


def _known() -> set[str]:
    """Crashes kept as regression cases and not fixed yet."""
    return {c.meta["fuzz"] for c in cases(CRASHES) if c.xfail and c.meta.get("fuzz")}


@pytest.fixture(scope="module")
def harness():
    h = Harness(limit=LIMIT)
    yield h
    h.close()


def _new_crashes(harness: Harness, inputs) -> list[str]:
    known = _known()
    found = []
    for label, text, sets in inputs:
        for o in harness.run(text, sets).outcomes:
            if o.kind == "crash" and o.signature not in known:
                found.append(f"{label} {o.command}: {o.signature} at {o.where}: {o.message}\n{text[:400]!r}")
    return found


def test_sentences_of_the_grammar_crash_no_command(harness):
    inputs = [(f"grammar #{i}", t, ()) for i, t in enumerate(sample_grammar(N, SEED))]
    assert len(inputs) == N
    found = _new_crashes(harness, inputs)
    assert not found, "\n\n".join(found)


def test_mutated_examples_crash_no_command(harness):
    inputs = []
    for i in range(N):
        inp = generate(SEED, i)
        inputs.append((f"{inp.source} of {inp.origin} #{i}", inp.text, inp.sets))
    found = _new_crashes(harness, inputs)
    assert not found, "\n\n".join(found)


FLAGSHIP = (ROOT / "specs" / "llama70b_wan.ct").read_text(encoding="utf-8")
SMALL = (ROOT / "examples" / "fig_one_link_ndr.ct").read_text(encoding="utf-8")  # checks and builds in milliseconds


def test_an_exception_out_of_a_command_is_a_crash(monkeypatch):
    """The classification is not vacuous: a command that raises is a crash, named by type and innermost ctdsl frame."""
    import ctdsl.model.graph

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(ctdsl.model.graph, "to_json", broken)
    h = Harness(limit=LIMIT)
    try:
        res = h.run(FLAGSHIP, only={"check", "graph-json"})
    finally:
        h.close()
    by = {o.command: o for o in res.outcomes}
    assert by["check"].kind != "crash"
    assert by["graph-json"].kind == "crash"
    assert by["graph-json"].signature == "RuntimeError @ ctdsl/cli/spec_cmds.py:graph"


@pytest.mark.parametrize("clock", ["wall", "cpu"])
def test_a_command_past_the_limit_is_stopped_as_a_hang(monkeypatch, clock):
    """Past the limit of its clock: a command that waits (wall-clock) or computes (CPU seconds) without end."""
    import time

    import ctdsl.model.graph
    from fuzz.harness import WALL_BACKSTOP

    def forever(*args, **kwargs):
        while True:
            if clock == "wall":
                time.sleep(0.01)

    monkeypatch.setattr(ctdsl.model.graph, "to_json", forever)
    h = Harness(limit=0.5, clock=clock)
    try:
        res = h.run(SMALL, only={"graph-json"})
    finally:
        h.close()
    (o,) = res.outcomes
    assert o.kind == "hang" and o.signature.startswith("Timeout @ ")
    if clock == "cpu":  # stopped by its CPU seconds (the kernel counts them in ticks), well before the backstop
        assert o.cpu > 0.4 and o.seconds < 0.5 * WALL_BACKSTOP


def test_the_cpu_clock_stops_a_command_that_only_waits_at_its_wall_clock_backstop(monkeypatch):
    """CPU seconds, not a starved process's wall-clock, make a hang; a command that waits for ever meets the backstop."""
    import time

    import ctdsl.model.graph
    from fuzz.harness import WALL_BACKSTOP

    def waits(seconds):
        def to_json(*args, **kwargs):
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                time.sleep(0.01)
            return "{}"

        return to_json

    limit = 0.3  # CPU seconds: checking the small spec and building its graph take a few hundredths
    h = Harness(limit=limit, clock="cpu")
    try:
        monkeypatch.setattr(ctdsl.model.graph, "to_json", waits(4 * limit))
        (short,) = h.run(SMALL, only={"graph-json"}).outcomes
        monkeypatch.setattr(ctdsl.model.graph, "to_json", waits(float("inf")))
        (endless,) = h.run(SMALL, only={"graph-json"}).outcomes
    finally:
        h.close()
    assert short.kind == "ok" and short.seconds >= 4 * limit  # past the limit in wall-clock, not in CPU seconds
    assert endless.kind == "hang" and limit * WALL_BACKSTOP <= endless.seconds < limit * WALL_BACKSTOP + 2


def test_an_internal_error_exit_is_a_crash_named_from_its_traceback():
    """Exit 3 with `--debug`'s traceback on stderr (the CLI's own handler): named from the printed frames."""
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{ROOT}/ctdsl/cli/app.py", line 70, in invoke\n    return super().invoke(ctx)\n'
        f'  File "{ROOT}/ctdsl/symbolic/stragglers.py", line 100, in sum_law\n    x = math.exp(y)\n'
        '  File "/usr/lib/python3.11/site-packages/mpmath/x.py", line 5, in f\n    pass\n'
        "OverflowError: math range error\n"
        "internal error: OverflowError: math range error; please report\n"
    )
    signature, where = _from_text(text)
    assert signature == "OverflowError @ ctdsl/symbolic/stragglers.py:sum_law"
    assert where == "ctdsl/symbolic/stragglers.py:100 sum_law"
