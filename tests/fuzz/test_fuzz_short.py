"""The short fuzz run of the normal suite: a fixed set of generated inputs through every command.

40 sentences of the grammar (hypothesis, fixed seed) and 20 mutated or
field-randomised specs and examples (random.Random, fixed seed) run through the
harness (check, lint, and for a clean spec solve, export, graph, report, explore,
sweep, simulate and lint --fix). The run fails on any crash, except one already
kept as a regression case in tests/fuzz/crashes/ and still marked xfail there: that
one fails its own test until it is fixed. 8 real specs with payloads planted
(tests/fuzz/payloads.py) go through the same commands and must also leak nothing
into any sink (tests/fuzz/sinks.py). The same inputs every run; CTDSL_FUZZ_SHORT=N
runs N grammar sentences, CTDSL_FUZZ_SHORT_MUTATED=N N mutated specs,
CTDSL_FUZZ_SHORT_PAYLOADS=N N payload inputs. A clean input runs 16 commands (about
1-15 CPU-s in all): this is the suite's sample; the long run is bench/fuzz.py.
"""

from __future__ import annotations

import os

import pytest

from backstop import HANG
from fuzz.cases import CRASHES, LIMIT, cases
from fuzz.generators import generate, is_payload, sample_grammar
from fuzz.harness import ROOT, Harness, Outcome, _from_text

N = int(os.environ.get("CTDSL_FUZZ_SHORT", "40"))
N_MUTATED = int(os.environ.get("CTDSL_FUZZ_SHORT_MUTATED", "20"))
N_PAYLOADS = int(os.environ.get("CTDSL_FUZZ_SHORT_PAYLOADS", "8"))
SEED = 2026


def _known() -> set[str]:
    """Crashes kept as regression cases and not fixed yet."""
    return {c.meta["fuzz"] for c in cases(CRASHES) if c.xfail and c.meta.get("fuzz")}


@pytest.fixture(scope="module")
def harness():
    h = Harness(limit=LIMIT)
    yield h
    h.close()


def _new_crashes(harness: Harness, inputs, leaks: bool = False) -> list[str]:
    """The crashes (and hangs) not kept as xfail cases; with `leaks`, every leak into a sink too."""
    known = _known()
    found = []
    for label, text, sets, run in inputs:
        for o in harness.run(text, sets, **run).outcomes:
            if o.kind in ("crash", "hang") and o.signature not in known:
                found.append(f"{label} {o.command}: {o.signature} at {o.where}: {o.message}\n{text[:400]!r}")
            if leaks and o.leaks:
                found.append(f"{label} {o.command}: {[x.key for x in o.leaks]} {o.leaks[0].excerpt}\n{text[:400]!r}")
    return found


def test_sentences_of_the_grammar_crash_no_command(harness):
    inputs = [(f"grammar #{i}", t, (), {}) for i, t in enumerate(sample_grammar(N, SEED))]
    assert len(inputs) == N
    found = _new_crashes(harness, inputs)
    assert not found, "\n\n".join(found)


def test_mutated_examples_crash_no_command(harness):
    inputs = []
    for i in range(N_MUTATED):
        inp = generate(SEED, i, payloads=False)  # the inputs this test ran before the payload source came in
        inputs.append((f"{inp.source} of {inp.origin} #{i}", inp.text, inp.sets, {}))
    found = _new_crashes(harness, inputs)
    assert not found, "\n\n".join(found)


def test_specs_with_payloads_crash_no_command_and_leak_into_no_sink(harness):
    """Real specs with payloads planted where their text reaches an output, under hostile file and import names."""
    numbers = [i for i in range(10 * N_PAYLOADS) if is_payload(SEED, i)][:N_PAYLOADS]
    inputs = []
    for i in numbers:
        inp = generate(SEED, i)
        assert inp.source == "payload"
        inputs.append((f"payload of {inp.origin} #{i} in {list(inp.places)} as {inp.filename!r}", inp.text, inp.sets,
                       {"filename": inp.filename, "files": inp.files}))
    assert len(inputs) == N_PAYLOADS
    found = _new_crashes(harness, inputs, leaks=True)
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


def _stopped(monkeypatch, to_json, **harness) -> Outcome:
    """The graph command on the small example, its graph replaced by `to_json`, under a harness made with `harness`."""
    import ctdsl.model.graph

    monkeypatch.setattr(ctdsl.model.graph, "to_json", to_json)
    h = Harness(**harness)
    try:
        path = h.dir / "small.ct"
        path.write_text(SMALL, encoding="utf-8")
        return h.invoke("graph-json", ["graph", str(path), "--format", "json"])
    finally:
        h.close()


def _spin(*args, **kwargs):
    while True:
        pass


def _sleep(*args, **kwargs):
    import time

    while True:
        time.sleep(0.01)


def test_a_command_that_never_ends_is_stopped_as_a_hang_by_its_clock(monkeypatch):
    """A command that computes for ever meets the CPU limit (the wall backstop is far above it); one that waits for
    ever meets the wall-clock limit. Neither can end, so neither outcome depends on how loaded the machine is."""
    o = _stopped(monkeypatch, _spin, limit=0.5, clock="cpu", backstop=HANG / 0.5)
    assert o.kind == "hang" and o.signature.startswith("Timeout @ ") and o.stopped_by == "cpu"
    o = _stopped(monkeypatch, _sleep, limit=0.5, clock="wall")
    assert o.kind == "hang" and o.signature.startswith("Timeout @ ") and o.stopped_by == "wall"


def test_the_cpu_clock_stops_a_command_that_only_waits_at_its_wall_clock_backstop(monkeypatch):
    """CPU seconds make a hang, and a command that waits for ever without computing still meets the backstop: a CPU
    limit it can never reach (an hour of CPU), a backstop of one second of wall-clock time."""
    o = _stopped(monkeypatch, _sleep, limit=HANG, clock="cpu", backstop=1.0 / HANG)
    assert o.kind == "hang" and o.stopped_by == "wall"


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


NAMED_TWICE = """import std.links
link ctdslpwn_b : eth100g { bandwidth = 100 GB/s }
"""


def test_an_import_named_as_the_input_neither_replaces_it_nor_misleads_the_fix_oracle(harness):
    """The campaign's seed 34, input 51421 (shrunk by hand): a payload planted one name as the file's
    own and as an import's. The harness wrote the import over the input, so check and lint-sarif read
    the import's text (one param, nothing to fix), while `lint --fix` ran on a copy of the input's
    text and fixed its CTL006 (100 GB/s on a 100 GbE link, with --unsafe-fixes): "changed a file with
    nothing fixable". Now the input is written last, so it is what every command reads, and the fix
    oracle reads the copy's own findings."""
    r = harness.run(NAMED_TWICE, filename="x^^5cctdslpwn.ct", files=(("x^^5cctdslpwn.ct", "param ctdslpwn_imported = 1\n"),),
                    only={"check", "lint-sarif", "lint-fix"})
    assert r.clean
    assert [(o.command, o.leaks) for o in r.outcomes] == [("check", []), ("lint-sarif", []), ("lint-fix", [])]
    fixed = (harness.dir / "fixcopy.ct").read_text(encoding="utf-8")
    assert fixed != NAMED_TWICE and "12.5 GB/s" in fixed  # the fix did change the copy, inside its finding's span


def test_the_campaign_without_pdflatex_stops_before_it_counts_each_compile_as_a_leak(tmp_path):
    """A machine without pdflatex made the long campaign report "Leak(latex: pdflatex did not run)" on every input
    it sampled for the compile check (seen on a new machine: 4 of its first 228 inputs). It now says what is missing
    and exits 2 before any input, unless --pdflatex-every 0 asks for no compile."""
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"  # a PATH with python and nothing else
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(bin_dir)}
    cmd = [sys.executable, str(ROOT / "bench" / "fuzz.py"), "--n", "1", "--jobs", "1", "--no-write"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=HANG)
    assert p.returncode == 2, p.stderr
    assert "pdflatex is not on PATH" in p.stderr and "--pdflatex-every 0" in p.stderr
    assert "inputs in" not in p.stdout  # no campaign ran
