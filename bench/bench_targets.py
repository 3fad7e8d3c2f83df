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
"""

from __future__ import annotations

import argparse
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
