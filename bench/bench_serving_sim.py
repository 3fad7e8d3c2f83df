"""A serving simulation sweep: 50 rates x 3 hand-off schemes of specs/llama70b_disagg.ct (issue 28).

    python bench/bench_serving_sim.py                  # 2,000 requests a run, 2 processes
    python bench/bench_serving_sim.py --requests 1000 --jobs 1

Each point is one seeded run of the serving simulation (ctdsl/simulate/serving.py) at a rate
from 0.5 to 12 req/s (log-spaced) over 25 GbE, plain, FP8 on the GPU and FP8 in transit. An
event is an arrival, a prefill, a hand-off or a decode step. The yardstick is the training
simulator's events per second, measured in the same process on the flagship
(bench/bench_simulate.py's ctdsl_run, wan_load 0.9, 2 seeds). Wall-clock times, one run each;
tests never time anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PATHS = ("disagg/e25", "disagg/e25_fp8_gpu", "disagg/e25_fp8_mod")


_PLANS: dict = {}  # each process plans each path once (the closed forms compiled), then sweeps the rate


def _point(args):
    from ctdsl.api import load
    from ctdsl.simulate import serving as SS

    path, rate, requests = args
    if path not in _PLANS:
        _PLANS[path] = SS.plan(load(ROOT / "specs" / "llama70b_disagg.ct").spec, path)
    _, events = SS.run_counted(dataclasses.replace(_PLANS[path], rate=rate), requests, 0)
    return events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rates", type=int, default=50)
    a = ap.parse_args()
    rates = [0.5 * (24 ** (k / (a.rates - 1))) for k in range(a.rates)]
    points = [(p, r, a.requests) for p in PATHS for r in rates]
    t0 = time.perf_counter()
    if a.jobs > 1:
        with ProcessPoolExecutor(a.jobs) as ex:
            events = sum(ex.map(_point, points, chunksize=len(points) // (2 * a.jobs) or 1))
    else:
        events = sum(map(_point, points))
    wall = time.perf_counter() - t0
    from bench_simulate import ctdsl_run  # the training simulator, as its own bench runs it

    train_wall, train_events, *_ = ctdsl_run("0.9", 2)
    print(f"serving sweep: {len(points)} points x {a.requests} requests, {a.jobs} processes: {wall:.1f} s wall, {events:,} events, {events / wall:,.0f} events/s")
    print(f"training simulator (flagship, wan_load 0.9, 2 seeds, 1 process): {train_wall:.1f} s, {train_events:,} events, {train_events / train_wall:,.0f} events/s")
    print(f"ratio (serving events/s / training events/s): {events / wall / (train_events / train_wall):.2f}")


if __name__ == "__main__":
    main()
