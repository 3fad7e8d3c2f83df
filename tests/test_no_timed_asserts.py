"""No test asserts on wall-clock or CPU time: speed is measured by bench/, as ratios.

A timed assertion passes on an idle machine and fails on a loaded one (a CPU-time
assertion of the fuzz tests failed at a load of 18). This test reads every Python
file under tests/ and finds:

1. clock reads (`perf_counter`, `process_time`, `thread_time`, `monotonic`,
   `time.time()`, `getrusage`, `RLIMIT_CPU`, interval timers): only in the files
   of ALLOWED, each for a stated reason that is not an assertion;
2. assertions on time: an `assert` whose expression reads a clock, or uses a name
   bound from a clock read in the same function, or a timing attribute of an
   outcome (`.seconds`, `.cpu`, `.elapsed`, `.duration`);
3. time-outs that fail a test when they run out: every `timeout=` is a backstop
   for a hang, HANG of tests/backstop.py (or a number at least as large, in
   seconds), far above what any wait takes on a loaded machine, and the bounds
   of the deadline loops (WAIT, TIMEOUT, LIMIT) are HANG too.

The checks are run on snippets of the assertions that were removed, so that the
test is not vacuous.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
CLOCK = re.compile(r"\b(perf_counter|process_time|thread_time|monotonic|getrusage|RLIMIT_CPU|setitimer|ITIMER_\w+)\b|\btime\.time\(")
CLOCK_CALLS = {"perf_counter", "perf_counter_ns", "process_time", "process_time_ns", "thread_time", "monotonic", "monotonic_ns", "getrusage", "time", "time_ns"}
TIMED_ATTRS = {"seconds", "cpu", "elapsed", "duration"}
BOUNDS = {"WAIT", "TIMEOUT", "LIMIT"}

# file -> why it reads a clock; none of them asserts on what it reads
ALLOWED = {
    "tests/fuzz/harness.py": "the limit mechanism (interval timers) and the times the campaign and the benchmark report; "
                             "the suite reads them through injectable clocks and asserts none",
    "tests/fuzz/shrink.py": "the campaign's shrinker tries for at most a budget of seconds (bench/fuzz.py); the suite never shrinks",
    "tests/lspkit.py": "records when diagnostics arrive, for bench/bench_lsp.py; no test reads it",
    "tests/test_simulate_partial.py": "waits for a subprocess to reach a point, bounded by HANG",
    "tests/test_simulate_parallel.py": "waits for a subprocess to reach a point, bounded by HANG",
    "tests/test_simulate_dask.py": "waits for a subprocess or a cluster to reach a point, bounded by HANG",
    "tests/test_hostile_sweeps.py": "waits for a sweep's .part file to grow before signalling it, bounded by HANG",
    "tests/test_no_timed_asserts.py": "this test: the patterns it looks for",
}


def _files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr in CLOCK_CALLS:
        return f.attr != "time" or (isinstance(f.value, ast.Name) and f.value.id == "time")
    return isinstance(f, ast.Name) and f.id in CLOCK_CALLS - {"time"}


def timed_assertions(source: str) -> list[int]:
    """Lines of the asserts in `source` that depend on a clock read or on an outcome's timing attribute."""
    tree = ast.parse(source)
    lines = []
    scopes = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))]
    for scope in scopes:
        timed: set[str] = set()
        for node in ast.walk(scope):  # names bound from a clock read (or from another such name)
            if isinstance(node, ast.Assign) and any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in timed)
                                                    for n in ast.walk(node.value)):  # fmt: skip
                timed |= {t.id for tgt in node.targets for t in ast.walk(tgt) if isinstance(t, ast.Name)}
        for node in ast.walk(scope):
            if not isinstance(node, ast.Assert):
                continue
            for n in ast.walk(node.test):
                if _is_clock_call(n) or (isinstance(n, ast.Name) and n.id in timed) or (
                    isinstance(n, ast.Attribute) and n.attr in TIMED_ATTRS
                ):
                    lines.append(node.lineno)
                    break
    return sorted(set(lines))


def _module_bounds(tree: ast.Module) -> dict[str, ast.AST]:
    return {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def _is_backstop(value: ast.AST, bounds: dict[str, ast.AST], seen=()) -> bool:
    """HANG (or HANG_MS), a name bound to it, or a number of seconds at least HANG."""
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
        return value.value >= HANG
    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    if names & {"HANG", "HANG_MS"}:
        return True
    return bool(names) and all(n in bounds and n not in seen and _is_backstop(bounds[n], bounds, seen + (n,)) for n in names)


def short_timeouts(source: str) -> list[int]:
    """Lines of `timeout=` arguments and WAIT/TIMEOUT/LIMIT bounds that are not a backstop."""
    tree = ast.parse(source)
    bounds = _module_bounds(tree)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            lines += [k.value.lineno for k in node.keywords if k.arg == "timeout" and not _is_backstop(k.value, bounds)]
    lines += [v.lineno for name, v in bounds.items() if name in BOUNDS and not _is_backstop(v, bounds)]
    return sorted(set(lines))


def test_clocks_are_read_only_where_allowed():
    readers = {p.relative_to(ROOT).as_posix() for p in _files() if CLOCK.search(p.read_text(encoding="utf-8"))}
    assert readers - set(ALLOWED) == set(), "a test reads a clock: measure in bench/ instead (or say why in ALLOWED)"
    assert set(ALLOWED) - readers == set(), "ALLOWED lists a file that no longer reads a clock"


def test_no_assert_depends_on_time():
    found = []
    for p in _files():
        if p.name == "test_no_timed_asserts.py":
            continue
        found += [f"{p.relative_to(ROOT)}:{line}" for line in timed_assertions(p.read_text(encoding="utf-8"))]
    assert found == []


def test_every_timeout_is_a_backstop():
    found = []
    for p in _files():
        found += [f"{p.relative_to(ROOT)}:{line}" for line in short_timeouts(p.read_text(encoding="utf-8"))]
    assert found == [], f"a time-out that could run out on a loaded machine: use HANG (tests/backstop.py) {found}"


def test_the_checks_find_the_assertions_that_were_removed():
    """What the fuzz and harness tests asserted before, and a plain stopwatch: each is found; its timeless form is not."""
    removed = '''
def test_cpu(o):
    assert o.kind == "hang" and o.cpu > 0.4 and o.seconds < 0.5 * WALL_BACKSTOP

def test_stopwatch(run):
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    assert took < 2.0

def test_direct():
    assert time.process_time() < 10
'''
    assert timed_assertions(removed) == [3, 9, 12]
    kept = '''
def test_hang(o):
    assert o.kind == "hang" and o.stopped_by == "cpu"
    assert json["step"]["seconds"] == 1.5
'''
    assert timed_assertions(kept) == []
    short = '''
WAIT = 240
LIMIT = HANG / 6
def f():
    subprocess.run(cmd, timeout=120)
    subprocess.run(cmd, timeout=WAIT)
    subprocess.run(cmd, timeout=HANG)
    page.wait_for_function("x", timeout=HANG_MS)
    subprocess.run(cmd, timeout=LIMIT)
'''
    assert short_timeouts(short) == [2, 5, 6]
