"""Throughput of the simulation's runs over processes and on a Dask LocalCluster.

    python bench/bench_simulate_parallel.py                      # 40 seeds x 400 steps of examples/15_contention.ct
    python bench/bench_simulate_parallel.py --seeds 40 --steps 200 --spec specs/llama70b_wan.ct --set wan_load=0.9

Three timings of the same `runner.simulate` call (every scheme, `--seeds` seeds):
`-j 1` (in this process), `-j 2` (a pool of 2 processes, its start-up included:
the user waits for it), and a `LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)` through its Client (the cluster started beforehand and not
timed, as a user's cluster is up before the run). It checks that the three give
the same per-seed numbers, then prints runs per second and the ratios the issue
sets targets for: -j 2 over -j 1 (>= 1.8x on 2 cores), and the cluster's time
over -j 2's (within 1.3x). Wall-clock times are single runs: on a shared machine
they are noisy, and they say how much of the cores this process got as much as
how fast it is; so it also counts the CPU seconds of -j 2 (its workers
included) against -j 1's, the work the pool adds whatever share it gets.
Run on demand; tests never time anything.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def cpu_seconds(fn) -> tuple[float, float]:
    """(CPU seconds of this process, CPU seconds of its children reaped meanwhile) spent in fn()."""
    import resource

    def now(who):
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    s0, c0 = now(resource.RUSAGE_SELF), now(resource.RUSAGE_CHILDREN)
    fn()
    return now(resource.RUSAGE_SELF) - s0, now(resource.RUSAGE_CHILDREN) - c0


def cpu_accounting(spec, cfg, plans) -> None:
    """The work -j 2 does, whatever share of the cores it gets: its CPU seconds (workers included,
    their start-up too) over -j 1's. Started with 'spawn' here, so the workers are this process's
    children and are counted once reaped (the forkserver's are the server's)."""
    import multiprocessing

    from ctdsl.simulate import pool
    from ctdsl.simulate.runner import simulate

    here1, _ = cpu_seconds(lambda: simulate(spec, cfg, plans=plans, jobs=1))
    real = pool._context
    pool._context = lambda: multiprocessing.get_context("spawn")
    try:
        here2, kids2 = cpu_seconds(lambda: simulate(spec, cfg, plans=plans, jobs=2))
    finally:
        pool._context = real
    print(f"CPU seconds: -j 1 {here1:.2f}; -j 2 (spawn) {here2 + kids2:.2f} ({kids2:.2f} in the workers): {(here2 + kids2) / here1:.2f}x the work")
    print(f"  so on 2 idle cores -j 2 would give about {2 * here1 / (here2 + kids2):.2f}x the throughput of -j 1 (an estimate, not a measure)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--spec", default=str(ROOT / "examples" / "15_contention.ct"))
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-dask", action="store_true", help="skip the LocalCluster timing")
    ap.add_argument("--no-cpu", action="store_true", help="skip the CPU accounting of -j 2 against -j 1")
    args = ap.parse_args(argv)

    from ctdsl.api import load
    from ctdsl.simulate.plan import build_plans
    from ctdsl.simulate.runner import settings, simulate

    spec = load(args.spec, dict(s.split("=", 1) for s in args.set)).spec
    cfg = settings(spec, args.steps, args.seeds, args.warmup)
    plans = build_plans(spec)
    runs = len(plans) * cfg.seeds
    print(f"{args.spec} {' '.join(args.set)}: {len(plans)} schemes x {cfg.seeds} seeds x {cfg.steps} steps = {runs} runs")
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f} (above the cores, other work shares them)")

    t1, one = timed(lambda: simulate(spec, cfg, plans=plans, jobs=1))
    print(f"-j 1: {t1:8.2f} s  {runs / t1:8.2f} runs/s  ({one.events:,} events)")
    t2, two = timed(lambda: simulate(spec, cfg, plans=plans, jobs=2))
    print(f"-j 2: {t2:8.2f} s  {runs / t2:8.2f} runs/s")
    same = {n: repr(s.runs) for n, s in one.schemes.items()}
    assert {n: repr(s.runs) for n, s in two.schemes.items()} == same, "-j 2 differs from -j 1"
    print(f"-j 2 / -j 1 throughput: {t1 / t2:.2f}x (target >= 1.8x on 2 cores)")
    if not args.no_cpu:
        cpu_accounting(spec, cfg, plans)
    if args.no_dask:
        return 0
    import distributed

    from ctdsl.simulate import cluster

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, distributed.Client(lc) as client:
        client.run(lambda: __import__("ctdsl.simulate.tasks"))  # the workers' imports, as a running cluster has them
        t3, three = timed(lambda: simulate(spec, cfg, plans=plans, backend=cluster.backend(client)))
    print(f"LocalCluster(2): {t3:8.2f} s  {runs / t3:8.2f} runs/s")
    assert {n: repr(s.runs) for n, s in three.schemes.items()} == same, "the cluster differs from -j 1"
    print(f"LocalCluster(2) time / -j 2 time: {t3 / t2:.2f}x (target <= 1.3x)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
