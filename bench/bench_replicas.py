"""Benchmarks of dcs of replicas at datacentre scale, as ratios measured in one run.

Run on demand, never from the test suite:

    python bench/bench_replicas.py            # a few minutes
    python bench/bench_replicas.py --quick    # fewer repeats

(a) `ctdsl solve specs/llama405b_3dc.ct` (102,400 GPUs over three sites) against
    the dependency floor `python -c "import sympy, numpy, lark, networkx, rich,
    typer"`, fresh processes, interleaved, the median of each.         target <= 1.5x
    and its peak RSS (ru_maxrss of the solve process).               target < 400 MB
(b) solve time over a generated family of specs, identical but for the number of
    replicas per site, from 10^3 to 10^6 GPUs in all (three sites of 128-GPU
    replicas): in-process `load(...).solve()`, the median of several runs each;
    the spread of the medians over the family,                   target: within 10%
    and, as a measure a loaded machine cannot blur, the Python function calls of
    one solve of each (cProfile's count).
(c) the same over a family identical but for the number of alike sites of one dc
    (`sites = K`, a ring of K sites of 300 replicas and one more dc), K from 3 to
    3,000 (10^5 to 10^8 GPUs): the spread of the medians,        target: within 10%
    and the Python calls of one solve of each.

Ratios are of times measured in this run on this machine; absolute times are
printed for context only.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from bench_solve_sweep import bench_startup  # noqa: E402

SPEC = ROOT / "specs" / "llama405b_3dc.ct"

FAMILY = """
import std.devices
import std.links
import std.models
model m : llama3_405b {{ tokens = 16 * 8192 }}
device g : h100 {{ efficiency = 0.4 }}
switch fabric {{}}
replica r {{ tp = 8; pp = 16; first_stage_layers = 7; last_stage_layers = 7; zero = 1 }}
dc east {{ replica = r; replicas = {a}; device = g; link = ib_ndr; switch = fabric }}
dc central : east {{ replicas = {b} }}
dc west : east {{ replicas = {c} }}
wan east <-> central = zr400 * 64
wan central <-> west = zr400 * 64
wan west <-> east = zr400 * 64
scheme adamw {{ payload = dense; collective = hier_allreduce; steps = 100000 }}
scheme diloco {{ payload = dense; collective = hier_allreduce; period = 100; steps = 125000 }}
scheme band {{ payload = band; fraction = 1/16; collective = hier_allreduce; steps = 115000 }}
"""


SITES = """
import std.devices
import std.links
import std.models
model m : llama3_405b {{ tokens = 16 * 8192 }}
device g : h100 {{ efficiency = 0.4 }}
switch fabric {{}}
replica r {{ tp = 8; pp = 16; first_stage_layers = 7; last_stage_layers = 7; zero = 1 }}
dc region {{ replica = r; replicas = 300; sites = {k}; device = g; link = ib_ndr; switch = fabric }}
dc hub : region {{ replicas = 220; sites = 1 }}
wan region <-> region = zr400 * 64
wan region <-> hub = zr400 * 64
scheme adamw {{ payload = dense; collective = hier_allreduce; steps = 100000 }}
scheme diloco {{ payload = dense; collective = hier_allreduce; period = 100; steps = 125000 }}
scheme band {{ payload = band; fraction = 1/16; collective = hier_allreduce; steps = 115000 }}
"""


def startup(runs: int) -> dict:
    return bench_startup(runs, SPEC)


def peak_rss_mb() -> float:
    code = (
        "import resource, ctdsl; ctdsl.load(%r).solve(); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)" % str(SPEC)
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return int(out.stdout.split()[-1]) / 1024  # KiB on Linux


def family(runs: int) -> list[tuple[int, float, int]]:
    """Median solve time per size of the replicas' family, and the Python calls of one solve."""
    specs = {}
    for gpus in (1_000, 10_000, 100_000, 1_000_000):
        per_site = max(1, round(gpus / 128 / 3))
        specs[128 * (3 * per_site + 1)] = FAMILY.format(a=per_site, b=per_site, c=per_site + 1)
    return timed_family(specs, runs)


def sites_family(runs: int) -> list[tuple[int, float, int]]:
    """The same over the number of sites of one dc: K = 3 to 3,000."""
    return timed_family({k: SITES.format(k=k) for k in (3, 30, 300, 3_000)}, runs)


def timed_family(specs: dict[int, str], runs: int) -> list[tuple[int, float, int]]:
    """Median solve time per member; the members are warmed first, then timed in rotation."""
    import ctdsl

    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for key, text in specs.items():
            paths[key] = Path(tmp) / f"family_{key}.ct"
            paths[key].write_text(text)
        for path in paths.values():  # warm every cache of this process once
            ctdsl.load(path).solve()
        calls = {}
        for key, path in paths.items():  # the work itself, which a loaded machine cannot blur
            prof = cProfile.Profile()
            prof.enable()
            ctdsl.load(path).solve()
            prof.disable()
            calls[key] = pstats.Stats(prof).total_calls
        times: dict[int, list[float]] = {k: [] for k in paths}
        for _ in range(runs):
            for key, path in paths.items():
                t = time.perf_counter()
                ctdsl.load(path).solve()
                times[key].append(time.perf_counter() - t)
    return [(k, statistics.median(ts), calls[k]) for k, ts in times.items()]


def spread(rows: list[tuple[int, float, int]]) -> str:
    ts = [t for _, t, _ in rows]
    ns = [n for _, _, n in rows]
    return (
        f"    spread of the medians: {(max(ts) - min(ts)) / min(ts) * 100:.1f}% (target within 10%)\n"
        f"    spread of the calls: {(max(ns) - min(ns)) / min(ns) * 100:.2f}%"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    runs = 3 if args.quick else 7
    s = startup(runs)
    print(f"(a) solve {SPEC.name}: {s['median']['solve']:.3f} s, floor {s['median']['floor']:.3f} s, ratio {s['ratio']:.2f}x (target <= 1.5x)")
    print(f"    peak RSS of the solve: {peak_rss_mb():.0f} MB (target < 400 MB)")
    fam = family(runs)
    for gpus, t, n in fam:
        print(f"(b) {gpus:>9,} GPUs: solve {t * 1e3:.1f} ms, {n:,} Python function calls")
    print(spread(fam))
    sites = sites_family(runs)
    for k, t, n in sites:
        print(f"(c) {k:>5,} sites ({128 * (300 * k + 220):,} GPUs): solve {t * 1e3:.1f} ms, {n:,} Python function calls")
    print(spread(sites))


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
