"""Simulated transfers per second: the numpy engine against the SimPy engine, in one run.

    python bench/bench_simulate_engine.py                      # flagship at wan_load = 0.9
    python bench/bench_simulate_engine.py --seeds 5 --steps 200 --runs 3 --load 0.7
    python bench/bench_simulate_engine.py --sharing fifo       # the WAN first come, first served

The workload is the flagship (specs/llama70b_wan.ct) with its WAN at the given
background load, shared as the spec says (`sharing = fair`: processor sharing,
vector_fair.py against fair_link.py) or as `--sharing` overrides it: every scheme, `--seeds` seeds each, with the spec's simulation
settings (40 measured steps after 5 of warm-up) unless --steps/--warmup say
otherwise. Both engines run the same plans, seeds and steps; a "transfer" is a
background transfer put on the wire (`RunResult.background`, counted the same way
by both: the sync's own jobs, a few per step, are left out of both counts). The
engines take the same draws, so they simulate the same transfers: the bench
checks that the counts are equal and reports the largest relative difference of
the step times. Each engine's time is the best of `--runs`, the runs interleaved
(SimPy, numpy, SimPy, ...) so that a change in the machine's load falls on both.
The target (issue 16): the ratio numpy / SimPy >= 20. Run on demand; tests never
time anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def workload(load: str, steps: int | None, warmup: int | None, sharing: str | None = None):
    from ctdsl.api import load as load_spec
    from ctdsl.simulate.plan import build_plans
    from ctdsl.simulate.runner import settings, spawn_keys

    spec = load_spec(ROOT / "specs" / "llama70b_wan.ct", {"wan_load": load}).spec
    cfg = settings(spec, steps=steps, warmup=warmup)
    # the round model of each scheme, the one both engines run (the flagship's syncs overlap the
    # backward pass or come every step: `ctdsl simulate` runs those step by step, in SimPy only)
    plans = {n: dataclasses.replace(p, step_plan=None) for n, p in build_plans(spec).items()}
    if sharing is not None:
        from ctdsl.language.enums import Sharing

        queues = lambda p: {e: dataclasses.replace(q, sharing=Sharing(sharing)) for e, q in p.queues.items()}  # noqa: E731
        plans = {n: dataclasses.replace(p, queues=queues(p)) for n, p in plans.items()}
    return plans, spawn_keys(spec), cfg


def timed(run, plans, keys, cfg, seeds: int):
    """(seconds, background transfers, step times) of every scheme over `seeds` seeds."""
    start = time.perf_counter()
    out = [run(plan, cfg.seed, k, cfg.steps, cfg.warmup, spawn_keys=keys) for plan in plans.values() for k in range(seeds)]
    seconds = time.perf_counter() - start
    return seconds, sum(r.background for r in out), [r.step for r in out]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", default="0.9")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sharing", choices=["fair", "fifo"], default=None, help="override the WAN's sharing (default: the spec's, fair)")
    args = ap.parse_args()
    from ctdsl.simulate import engine, vector

    plans, keys, cfg = workload(args.load, args.steps, args.warmup, args.sharing)
    unsupported = {n: why for n, p in plans.items() if (why := vector.supports(p, False)) is not None}
    if unsupported:
        sys.exit(f"the numpy engine does not run: {unsupported}")
    best = {"simpy": None, "numpy": None}
    for _ in range(args.runs):
        for name, run in (("simpy", engine.run), ("numpy", vector.run)):
            got = timed(run, plans, keys, cfg, args.seeds)
            if best[name] is None or got[0] < best[name][0]:
                best[name] = got
    (ts, ns, steps_s), (tn, nn, steps_n) = best["simpy"], best["numpy"]
    if ns != nn:
        sys.exit(f"the engines simulated different numbers of transfers: SimPy {ns}, numpy {nn}")
    worst = max(abs(a - b) / abs(a) for a, b in zip(steps_s, steps_n))
    shared = args.sharing or "as the spec says (fair)"
    print(f"flagship at wan_load = {args.load}, sharing {shared}: {len(plans)} schemes x {args.seeds} seeds, {cfg.steps} steps after {cfg.warmup} of warm-up")
    print(f"  background transfers simulated: {ns:,} by each engine (step times agree to {worst:.1e} relative)")
    print(f"  SimPy engine: {ts:8.3f} s  {ns / ts:12,.0f} transfers/s")
    print(f"  numpy engine: {tn:8.3f} s  {nn / tn:12,.0f} transfers/s")
    print(f"  ratio numpy / SimPy: {ts / tn:.1f}x  (target >= 20x; best of {args.runs} interleaved runs)")


if __name__ == "__main__":
    main()
