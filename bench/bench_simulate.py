"""Simulated events per second of `ctdsl simulate`, against a bare SimPy M/D/1 loop of the same size.

    python bench/bench_simulate.py                 # flagship at wan_load = 0.9, best of 3
    python bench/bench_simulate.py --seeds 4 --runs 5 --load 0.7

The workload is the flagship (specs/llama70b_wan.ct) with its WAN at the given
background load: every scheme, `--seeds` seeds each, with the spec's simulation
settings (steps, warm-up). Most of its events are background transfers on the two
WAN directions, so the yardstick is the textbook SimPy M/D/1 model: per direction a
source process that waits an exponential gap and starts a customer process, which
requests a capacity-one Resource, holds it for S and releases it, run until it has
served as many transfers as the ctdsl run did, with the same rho and S.

Both are driven by the same loop (`env.step()` until done, counting each call), so
"events" means the same thing on both sides: SimPy events processed. Because the two
models need different numbers of events per transfer (ctdsl's background uses
callbacks, the textbook loop a process per customer), the bench also reports
transfers per second, the rate at which each gets through the same work. The figure
the issue sets a target for is events per second: ctdsl within 1.5x of the bare loop.
Wall-clock times are the best of `--runs`. Run on demand; tests never time anything.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ctdsl_run(load: str, seeds: int):
    from ctdsl.api import load as load_spec
    from ctdsl.simulate import engine
    from ctdsl.simulate.plan import build_plans
    from ctdsl.simulate.runner import settings, spawn_keys

    spec = load_spec(ROOT / "specs" / "llama70b_wan.ct", {"wan_load": load}).spec
    cfg = settings(spec)
    plans = build_plans(spec)
    keys = spawn_keys(spec)
    queues = next(next(iter(p.queues.values())) for p in plans.values() if p.queues)
    start = time.perf_counter()
    events = transfers = 0
    for plan in plans.values():
        for k in range(seeds):
            r = engine.run(plan, cfg.seed, k, cfg.steps, cfg.warmup, spawn_keys=keys)
            events += r.events
            transfers += r.background
    return time.perf_counter() - start, events, transfers, queues, len(keys), cfg


def bare_md1(rho: float, service: float, links: int, transfers: int, seed: int = 1):
    """The textbook SimPy M/D/1: a source process per link, a process per customer."""
    import simpy

    env = simpy.Environment()
    served = [0]
    rng = random.Random(seed)

    def customer(res):
        with res.request() as req:
            yield req
            yield env.timeout(service)
        served[0] += 1

    def source(res):
        while True:
            yield env.timeout(rng.expovariate(rho / service))
            env.process(customer(res))

    for _ in range(links):
        env.process(source(simpy.Resource(env, capacity=1)))
    start = time.perf_counter()
    events = 0
    step = env.step
    while served[0] < transfers:
        step()
        events += 1
    return time.perf_counter() - start, events, served[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", default="0.9", help="the flagship's wan_load")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    best_c = best_b = None
    for i in range(args.runs):
        wall, events, transfers, q, links, cfg = ctdsl_run(args.load, args.seeds)
        bwall, bevents, bserved = bare_md1(q.rho, q.service, links, transfers)
        print(
            f"run {i + 1}: ctdsl {events:,} events, {transfers:,} transfers in {wall:.3f} s; "
            f"bare M/D/1 {bevents:,} events, {bserved:,} transfers in {bwall:.3f} s"
        )
        if best_c is None or wall < best_c[0]:
            best_c = (wall, events, transfers)
        if best_b is None or bwall < best_b[0]:
            best_b = (bwall, bevents, bserved)
    (wall, events, transfers), (bwall, bevents, bserved) = best_c, best_b
    ev_c, ev_b = events / wall, bevents / bwall
    tr_c, tr_b = transfers / wall, bserved / bwall
    print()
    print(
        f"workload: specs/llama70b_wan.ct at wan_load = {args.load}, 8 schemes x {args.seeds} seeds x "
        f"({cfg.warmup} + {cfg.steps}) steps; rho = {q.rho:g}, S = {q.service:g} s on {links} WAN directions"
    )
    print(f"ctdsl simulate : {ev_c:12,.0f} events/s  {tr_c:10,.0f} transfers/s")
    print(f"bare SimPy M/D/1: {ev_b:12,.0f} events/s  {tr_b:10,.0f} transfers/s")
    print(f"ctdsl / bare   : {ev_c / ev_b:12.2f}x events/s  {tr_c / tr_b:9.2f}x transfers/s (target: events/s within 1.5x, i.e. >= 0.67x)")


if __name__ == "__main__":
    main()
