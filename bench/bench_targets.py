"""Benchmark of targets in `ctdsl solve`, run on demand, never from the test suite:

    python bench/bench_targets.py           # about a minute
    python bench/bench_targets.py --quick   # fewer repeats

In one process, interleaved, the median of `solve(spec)` over the flagship spec
(specs/llama70b_wan.ct) as it is, and with one statement appended:
`target utilisation = [0.5, 0.8, 0.9, 0.95, 0.99] over wan_bw for adamw` (a
five-target table), and the same statement for every scheme (five targets x
each scheme). Printed: each median, the difference from plain solve in seconds
(the issue asks that a five-target table add under 0.2 s), and the ratio to
plain solve, all measured in the same run. The machine is shared with other
jobs: the seconds move from run to run, the ratios less.

In one process sympy's cache serves a repeated solve from the previous one, so
the in-process figures are of warm solves; the second part runs
`ctdsl solve FILE --format markdown` as a fresh process for each (cold: parsing,
checking, every sympy form from scratch, and the CLI's start-up), interleaved.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import statistics
import tempfile
import time
from pathlib import Path

import ctdsl
from ctdsl.symbolic.solve import solve

SPEC = Path(__file__).resolve().parents[1] / "specs" / "llama70b_wan.ct"
FIVE = "target utilisation = [0.5, 0.8, 0.9, 0.95, 0.99] over wan_bw"


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _with(folder: Path, name: str, statement: str):
    path = folder / name
    path.write_text(SPEC.read_text() + "\n" + statement + "\n")
    return ctdsl.load(path).spec


def _cold(paths: dict[str, Path], n: int) -> None:
    exe = shutil.which("ctdsl")
    if exe is None:  # pragma: no cover
        print("cold: no ctdsl on PATH")
        return
    runs: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(n):
        for name, path in paths.items():
            runs[name].append(_time(lambda: subprocess.run([exe, "solve", str(path), "--format", "markdown"], capture_output=True, check=False)))
    base = statistics.median(runs["solve"])
    for name, ts in runs.items():
        m = statistics.median(ts)
        print(f"cold {name:25s} {m:7.3f} s  {m - base:+7.3f} s  {m / base:5.2f} x solve")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    n = 3 if ap.parse_args().quick else 9
    with tempfile.TemporaryDirectory() as tmp:
        specs = {
            "solve": ctdsl.load(SPEC).spec,
            "+ five targets, one scheme": _with(Path(tmp), "one.ct", FIVE + " for adamw"),
            "+ five targets, every scheme": _with(Path(tmp), "all.ct", FIVE),
        }
        _cold({"solve": SPEC, "+ five, one scheme": Path(tmp) / "one.ct", "+ five, every scheme": Path(tmp) / "all.ct"}, n)
    runs: dict[str, list[float]] = {k: [] for k in specs}
    for _ in range(n):
        for name, spec in specs.items():
            runs[name].append(_time(lambda: solve(spec)))
    base = statistics.median(runs["solve"])
    for name, ts in runs.items():
        m = statistics.median(ts)
        roots = len(specs[name].targets)
        print(f"{name:30s} {m:7.3f} s  {m - base:+7.3f} s  {m / base:5.2f} x solve  ({roots} targets)")


if __name__ == "__main__":
    main()
