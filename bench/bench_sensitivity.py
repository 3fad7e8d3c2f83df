"""Benchmark of `ctdsl solve --sensitivity`, run on demand, never from the test suite:

    python bench/bench_sensitivity.py           # about half a minute
    python bench/bench_sensitivity.py --quick   # fewer repeats

In one process, interleaved, the median of each over the flagship spec:
(a) `solve(spec)` (what plain `ctdsl solve` does) against `sensitivity(solution)`
    (every partial of 27 quantities in 4 params): the ratio sensitivity / solve;
(b) `tornado(solution, name)` for a scheme's time to target and for a break-even
    (solved again at both ends of each param's range), against `solve`.
Reported as ratios measured in the same run, not as times.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import ctdsl
from ctdsl.symbolic.sensitivity import sensitivity
from ctdsl.symbolic.solve import solve
from ctdsl.symbolic.tornado import tornado

SPEC = Path(__file__).resolve().parents[1] / "specs" / "llama70b_wan.ct"


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    n = 3 if ap.parse_args().quick else 9
    spec = ctdsl.load(SPEC).spec
    sol = solve(spec)
    runs: dict[str, list[float]] = {"solve": [], "sensitivity": [], "tornado scheme": [], "tornado break-even": []}
    for _ in range(n):
        runs["solve"].append(_time(lambda: solve(spec)))
        runs["sensitivity"].append(_time(lambda: sensitivity(sol)))
        runs["tornado scheme"].append(_time(lambda: tornado(sol, "band_module.time_to_target")))
        runs["tornado break-even"].append(_time(lambda: tornado(sol, "breakeven.band_switch.adamw.wan_bw")))
    base = statistics.median(runs["solve"])
    for name, ts in runs.items():
        print(f"{name:20s} {statistics.median(ts) / base:6.2f} x solve")


if __name__ == "__main__":
    main()
