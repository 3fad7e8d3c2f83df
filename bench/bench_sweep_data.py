"""Benchmark of sweep data: 10^6 points of the flagship as Parquet, Arrow and npz against CSV.

Run on demand, never from the test suite:

    python bench/bench_sweep_data.py            # 5 runs of each, interleaved
    python bench/bench_sweep_data.py --runs 3

Each run is a fresh `ctdsl sweep specs/llama70b_wan.ct` process over wan_bw 1000
log x budget 1000 lin points (10^6), with `-o` to a temporary file; `ctdsl solve`
of the same spec is timed beside them (start-up, check and solve: the part no
format can save). For each: the median wall time, the median peak resident
memory (ru_maxrss of the child) and the file size. Targets (issue "outputs"):
Parquet under 1.5 s and under 300 MB peak. Ratios are of times measured in this
run on this machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "llama70b_wan.ct"
GRID = ["--sweep", "wan_bw=0.1 GB/s:1000 GB/s:1000:log", "--sweep", "budget=10 GFLOP/s:99 GFLOP/s:1000"]


def ctdsl() -> list[str]:
    exe = Path(sys.executable).parent / "ctdsl"
    return [str(exe)] if exe.exists() else [shutil.which("ctdsl") or "ctdsl"]


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="ctdsl-bench-"))
    cases = {"solve (no data)": ctdsl() + ["solve", str(SPEC)]}
    for fmt in ("parquet", "arrow", "npz", "csv"):
        cases[fmt] = ctdsl() + ["sweep", str(SPEC), *GRID, "-f", fmt, "-o", str(out / f"grid.{fmt}")]
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    try:
        for _ in range(args.runs):
            for name, cmd in cases.items():  # interleaved: each run sees the same machine
                results[name].append(timed(cmd))
        csv_wall = statistics.median(w for w, _ in results["csv"])
        print(f"10^6 points of {SPEC.name}, {args.runs} runs each, medians (resource.getrusage of the child)")
        print(f"{'':18} {'wall s':>8} {'peak MB':>8} {'file MB':>8} {'vs csv':>8}")
        for name in cases:
            wall = statistics.median(w for w, _ in results[name])
            peak = statistics.median(m for _, m in results[name])
            path = out / f"grid.{name}"
            size = f"{path.stat().st_size / 1e6:8.1f}" if path.exists() else f"{'-':>8}"
            print(f"{name:18} {wall:8.2f} {peak:8.0f} {size} {csv_wall / wall:7.1f}x")
        pq_wall = statistics.median(w for w, _ in results["parquet"])
        pq_peak = statistics.median(m for _, m in results["parquet"])
        print(f"parquet: {pq_wall:.2f} s (target < 1.5 s), {pq_peak:.0f} MB peak (target < 300 MB)")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
