"""Benchmark of sweep data: 10^6 points of the flagship as Parquet, Arrow and npz against CSV.

Run on demand, never from the test suite:

    python bench/bench_sweep_data.py            # 5 runs of each, interleaved
    python bench/bench_sweep_data.py --runs 3
    python bench/bench_sweep_data.py --against ../old-checkout   # its Parquet writer too, in the same run

Each run is a fresh `ctdsl sweep specs/llama70b_wan.ct` process over wan_bw 1000
log x budget 1000 lin points (10^6), with `-o` to a temporary file; `ctdsl solve`
of the same spec is timed beside them (start-up, check and solve: the part no
format can save). For each: the median wall time, the median peak resident
memory (ru_maxrss of the child) and the file size; for the data formats also
the time over the solve's (what writing the 10^6 rows costs). Targets: Parquet
written within 1.5 s for 10^6 rows (the time over the solve's) and under 300
MB peak. Ratios are of times measured in this run on this machine; `--against
DIR` runs another checkout's `ctdsl sweep -f parquet` (its package on the path)
beside them, for a before/after in one run.
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


def timed(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds (user + system) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # ru_maxrss: KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another checkout: its Parquet writer runs too")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="ctdsl-bench-"))
    cases = {"solve (no data)": ctdsl() + ["solve", str(SPEC)]}
    for fmt in ("parquet", "arrow", "npz", "csv"):
        cases[fmt] = ctdsl() + ["sweep", str(SPEC), *GRID, "-f", fmt, "-o", str(out / f"grid.{fmt}")]
    if args.against:
        code = "import sys; sys.path.insert(0, sys.argv.pop(1)); from ctdsl.cli import main; sys.argv[0] = 'ctdsl'; main()"
        cases["parquet (against)"] = [sys.executable, "-c", code, str(args.against.resolve()), "sweep", str(SPEC), *GRID,
                                      "-f", "parquet", "-o", str(out / "grid.parquet (against)")]  # fmt: skip
    results: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cases}
    try:
        for _ in range(args.runs):
            for name, cmd in cases.items():  # interleaved: each run sees the same machine
                results[name].append(timed(cmd))
        def med(name: str, i: int) -> float:
            return statistics.median(r[i] for r in results[name])

        csv_wall = med("csv", 0)
        solve_wall, solve_cpu = med("solve (no data)", 0), med("solve (no data)", 2)
        print(f"10^6 points of {SPEC.name}, {args.runs} runs each, medians (resource.getrusage of the child);")
        print("'- solve': over the solve's, what the 10^6 rows cost; CPU is user + system, less moved by other load")
        print(f"{'':18} {'wall s':>8} {'- solve':>8} {'CPU s':>8} {'- solve':>8} {'peak MB':>8} {'file MB':>8} {'vs csv':>8}")
        for name in cases:
            wall, peak, cpu = med(name, 0), med(name, 1), med(name, 2)
            path = out / f"grid.{name}"
            size = f"{path.stat().st_size / 1e6:8.1f}" if path.exists() else f"{'-':>8}"
            print(f"{name:18} {wall:8.2f} {wall - solve_wall:8.2f} {cpu:8.2f} {cpu - solve_cpu:8.2f} {peak:8.0f} {size} "
                  f"{csv_wall / wall:7.1f}x")  # fmt: skip
        pq_wall, pq_cpu, pq_peak = med("parquet", 0), med("parquet", 2), med("parquet", 1)
        print(f"parquet: {pq_wall:.2f} s, {pq_wall - solve_wall:.2f} s over the solve ({pq_cpu - solve_cpu:.2f} CPU-s; "
              f"target < 1.5 s), {pq_peak:.0f} MB peak (target < 300 MB)")  # fmt: skip
        if args.against:
            old_wall, old_cpu = med("parquet (against)", 0), med("parquet (against)", 2)
            size = (out / "grid.parquet (against)").stat().st_size / (out / "grid.parquet").stat().st_size
            print(f"against {args.against}: its Parquet takes {(old_wall - solve_wall) / max(pq_wall - solve_wall, 1e-9):.2f}x "
                  f"the wall time over the solve ({(old_cpu - solve_cpu) / max(pq_cpu - solve_cpu, 1e-9):.2f}x the CPU) "
                  f"and is {size:.2f}x the size")  # fmt: skip
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
