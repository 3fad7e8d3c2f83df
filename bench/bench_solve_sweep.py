"""Benchmarks of `ctdsl solve` and of sweeps, as ratios measured in one run.

Run on demand, never from the test suite:

    /work/venv/bin/python bench/bench_solve_sweep.py            # everything, a few minutes
    /work/venv/bin/python bench/bench_solve_sweep.py --quick    # fewer repeats

(a) start-up: wall time of `ctdsl solve specs/llama70b_wan.ct` against the
    dependency floor `python -c "import sympy, numpy, lark, networkx, rich, typer"`,
    both run as fresh processes, interleaved, the median of each.          target <= 1.5x
(b) a sweep of every scheme of the 70B spec over 10^6 points (wan_bw 1000 log
    points x budget 1000 lin points): ctdsl's lambdified forms, evaluated in
    chunks with binding and winner, against
    - the same closed forms written by hand in numpy (the limit; chunked and
      whole-array, the faster counts), and                                 target <= 1.5x
    - the same forms in a plain Python loop, one point at a time (timed on a
      sample of points and scaled to 10^6).                                target >= 100x
    The hand-written forms are transcribed from `ctdsl solve --explain`; before
    timing, they are checked against ctdsl's values at every point, so a
    change to the spec that makes them stale stops the benchmark.
(c) peak memory (max RSS) of a process that sweeps 10^7 points (wan_bw 10^4 x
    budget 10^3) through the chunked evaluator, keeping a running summary.  target < 1 GB

Ratios are of times measured in this run on this machine; the absolute times
are printed too, for context only.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "llama70b_wan.ct"
# the hand-written forms of (b) and (c) are transcribed from the study as it was with
# single-GPU workers, kept as a fixture so that they stay right as the flagship changes
FORMS_SPEC = ROOT / "tests" / "data" / "llama70b_workers.ct"
FLOOR = "import sympy, numpy, lark, networkx, rich, typer"
CHUNK = 1 << 16  # the default chunk of ctdsl sweep


def ctdsl_command() -> list[str]:
    exe = Path(sys.executable).parent / "ctdsl"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ctdsl")
    return [found] if found else [sys.executable, "-c", "from ctdsl.cli import main; main()"]


# ---- (a) ----------------------------------------------------------------------------------


def compile_bytecode() -> None:
    """ctdsl's modules as bytecode, as `pip install .` leaves an installed package and its dependencies:
    an editable checkout run with PYTHONDONTWRITEBYTECODE set (as some containers are) would otherwise
    compile its 130 or so modules from source at every start, about 0.3 s the floor does not pay."""
    import compileall

    compileall.compile_dir(str(ROOT / "ctdsl"), quiet=1)


def bench_startup(runs: int, spec: Path = SPEC) -> dict:
    """`ctdsl solve SPEC` against the import floor, fresh processes, interleaved: medians and minima."""
    compile_bytecode()
    solve = ctdsl_command() + ["solve", str(spec)]
    floor = [sys.executable, "-c", FLOOR]
    times = {"solve": [], "floor": []}
    for cmd in (solve, floor):  # warm the OS cache and the .pyc files once
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT)
    for _ in range(runs):
        for key, cmd in (("floor", floor), ("solve", solve)):
            t = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, cwd=ROOT)
            times[key].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    return {"median": med, "min": low, "ratio": med["solve"] / med["floor"], "ratio_min": low["solve"] / low["floor"]}


# ---- (b) the closed forms by hand -------------------------------------------------------------
#
# Transcribed from `ctdsl solve tests/data/llama70b_workers.ct --explain SCHEME` (exact
# rationals written as int / int, which Python rounds correctly). b: wan_bw (B/s),
# F: budget (FLOP/s), eta: eff, L: wan_load.

SCHEMES = ["adamw", "topk", "demo", "band_gpu", "band_ring", "band_module", "band_switch", "diloco"]
STEPS = [10000, 12500, 11000, 11500, 11500, 11500, 11500, 12500]
TOPK_TR = 137797632 / 3271484375


def _forms(mx, mn, b, F, eta, L):
    """Every scheme's components, step and energy per step, with max/min given: numpy's
    elementwise ones for arrays, Python's builtins for one point."""
    inv_b = 1.0 / b
    q = L * inv_b / (2 - 2 * L)
    c = (1693257302016 / 241455078125) / eta  # compute
    ec = (1517158542606336 / 241455078125) / eta  # energy of compute per step
    m1 = mx(34449408 / 48828125, 70552387584 * inv_b)
    mt = mx(137797632 / 3271484375, (68898816 / 48291015625) / eta)
    m13 = mx(2153088 / 9765625, 22047621120 * inv_b)
    m16 = mx(17224704 / 48828125, 35276193792 * inv_b)
    m24 = mx(2153088 / 48828125, 4409524224 * inv_b)
    inv_mod = 1.0 / mn(14000000000.0, F / 10)
    q4, q8 = 4000000000 * q, 8000000000 * q
    comps = [
        [c, 6614389461 / 1562500000, 2 * m1 + 21 / 250000, 6614389461 / 1562500000, q8],
        [c, TOPK_TR, 3307246293 / 1562500000, m1 + 21 / 500000, 3307246293 / 1562500000, q4],
        [c, mt, 206717073 / 312500000, m13 + 21 / 500000, 206717073 / 312500000, q4],
        [c, mt, 1653674709 / 1562500000, m16 + 21 / 500000, 1653674709 / 1562500000, q4],
        [c, mt, 413496021 / 1562500000, 2 * m24 + 21 / 250000, 413496021 / 1562500000, q8],
        [c, 1 / 1000000 + 141104775168 * inv_mod, 1653674709 / 1562500000, m16 + 21 / 500000, 1653674709 / 1562500000, q4],
        [c, 17638131271 / 3125000000, 1 / 25000 + 8819048448 * inv_b, 2204796487 / 3125000000, q8],
        [c, 6614389461 / 156250000000, m1 / 50 + 21 / 25000000, 6614389461 / 156250000000, 80000000 * q],
    ]
    step = [
        2 * m1 + 3307227543 / 390625000 + q8 + c,
        m1 + TOPK_TR + 6614558211 / 1562500000 + q4 + c,
        mt + m13 + 413447271 / 312500000 + q4 + c,
        mt + m16 + 3307415043 / 1562500000 + q4 + c,
        mt + 2 * m24 + 206780823 / 390625000 + q8 + c,
        m16 + 6614833211 / 3125000000 + 141104775168 * inv_mod + q4 + c,
        9921526379 / 1562500000 + q8 + 8819048448 * inv_b + c,
        m1 / 50 + 3307227543 / 39062500000 + 80000000 * q + c,
    ]
    energy = [
        1792 * m1 + 15522123709008 / 244140625 + 7168000000000 * q + ec,
        896 * m1 + 896 * TOPK_TR + 14550641215908 / 244140625 + 3584000000000 * q + ec,
        896 * mt + 896 * m13 + 13874140966308 / 244140625 + 3584000000000 * q + ec,
        896 * mt + 896 * m16 + 14059392657828 / 244140625 + 3584000000000 * q + ec,
        896 * mt + 1792 * m24 + 13688898462288 / 244140625 + 7168000000000 * q + ec,
        896 * m16 + 14040101208098 / 244140625 + 126429878550528 * inv_mod + 3584000000000 * q + ec,
        14972794210948 / 244140625 + 7168000000000 * q + 7901867409408 * inv_b + ec,
        448 * m1 / 25 + 67829095345284 / 1220703125 + 71680000000 * q + ec,
    ]
    return comps, step, energy


def handwritten(np, b, F, eta, L):
    """Every scheme's step, time and energy to target, components, binding and winner."""
    comps, step, energy = _forms(np.maximum, np.minimum, b, F, eta, L)
    ttt = [n * s for n, s in zip(STEPS, step)]
    ett = [n * e for n, e in zip(STEPS, energy)]
    binding = [_first_max(np, cs) for cs in comps]
    best, win = ttt[0], np.int16(0)
    for i, t in enumerate(ttt[1:], 1):
        lt = t < best
        best = np.where(lt, t, best)
        win = np.where(lt, np.int16(i), win)
    return step, ttt, ett, comps, binding, win


def _first_max(np, values):
    """The first largest value's index; a constant below an earlier constant cannot win and is skipped."""
    best, idx, top = values[0], np.int16(0), None
    if isinstance(values[0], float):
        top = values[0]
    for i, v in enumerate(values[1:], 1):
        if isinstance(v, float):
            if top is not None and top >= v:
                continue
            top = v if top is None or v > top else top
        gt = v > best
        best = np.where(gt, v, best)
        idx = np.where(gt, np.int16(i), idx)
    return idx


def handwritten_point(b, F, eta, L):
    """The same forms for one point, in plain Python."""
    comps, step, energy = _forms(max, min, b, F, eta, L)
    ttt = [n * s for n, s in zip(STEPS, step)]
    ett = [n * e for n, e in zip(STEPS, energy)]
    binding = [max(range(len(cs)), key=cs.__getitem__) for cs in comps]
    win = min(range(len(ttt)), key=ttt.__getitem__)
    return step, ttt, ett, binding, win


def _grid(n_b: int, n_f: int):
    from ctdsl.numeric import Axis, Grid

    return Grid([Axis("wan_bw", 1e8, 1e12, n_b, "log"), Axis("budget", 1e10, 9.9e10, n_f, "lin")])


def check_handwritten(forms, grid) -> None:
    """Stop unless the hand-written forms give ctdsl's values at every point."""
    import numpy as np

    from ctdsl.numeric import iter_chunks

    eta, L = forms.defaults["eff"], forms.defaults["wan_load"]
    for ch in iter_chunks(forms, grid, CHUNK):
        b, F = ch.params["wan_bw"], ch.params["budget"]
        step, ttt, ett, comps, binding, win = handwritten(np, b, F, eta, L)
        for k, s in enumerate(SCHEMES):
            for mine, key in ((step[k], "step"), (ttt[k], "time_to_target"), (ett[k], "energy_to_target")):
                if not np.allclose(mine, ch.values[(s, key)], rtol=1e-12, atol=0):
                    raise SystemExit(f"hand-written {key} of {s} differs from ctdsl's: the spec changed; update bench/bench_solve_sweep.py")
            for i, comp in enumerate(forms.schemes[s].components):
                if not np.allclose(comps[k][i], ch.values[(s, "component:" + comp)], rtol=1e-12, atol=0):
                    raise SystemExit(f"hand-written component {comp} of {s} differs from ctdsl's")
            if not np.array_equal(np.broadcast_to(binding[k], b.shape), ch.binding[s]):
                raise SystemExit(f"hand-written binding of {s} differs from ctdsl's")
        if not np.array_equal(np.broadcast_to(win, b.shape), ch.winner):
            raise SystemExit("hand-written winner differs from ctdsl's")
        for j in range(0, len(b), 997):  # and the scalar version, at a sample of points
            st, tt, et, bd, w = handwritten_point(float(b[j]), float(F[j]), eta, L)
            for k, s in enumerate(SCHEMES):
                if not math.isclose(tt[k], ch.values[(s, "time_to_target")][j], rel_tol=1e-12) or bd[k] != ch.binding[s][j]:
                    raise SystemExit(f"hand-written scalar forms of {s} differ from ctdsl's")
            if w != ch.winner[j]:
                raise SystemExit("hand-written scalar winner differs from ctdsl's")


SWEEP_CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import bench_solve_sweep as B
from ctdsl.numeric.alloc import keep_freed_memory
keep_freed_memory()  # as ctdsl sweep does; the same for every contender
import numpy as np
import ctdsl
from ctdsl.numeric import CompiledForms, iter_chunks
mode, repeats = sys.argv[2], int(sys.argv[3])
sol = ctdsl.load(B.FORMS_SPEC).solve()
forms = CompiledForms(sol)
grid = B._grid(1000, 1000)
eta, L = forms.defaults["eff"], forms.defaults["wan_load"]
if mode == "ctdsl":
    def run():
        for ch in iter_chunks(forms, grid, B.CHUNK):
            pass
elif mode == "hand":
    chunk = int(sys.argv[4])
    def run():
        for start in range(0, grid.size, chunk):
            p = grid.points(start, start + chunk)
            B.handwritten(np, p["wan_bw"], p["budget"], eta, L)
elif mode == "hand-grid":
    # the grid's rows as blocks, params in broadcast shapes, as ctdsl does
    chunk = int(sys.argv[4])
    bv, fv = grid.axes[0].values, grid.axes[1].values
    rows = max(1, chunk // len(fv))
    F2 = fv.reshape(1, -1)
    def run():
        for r in range(0, len(bv), rows):
            B.handwritten(np, bv[r : r + rows].reshape(-1, 1), F2, eta, L)
elif mode == "hand-whole":
    pts = grid.points(0, grid.size)
    def run():
        B.handwritten(np, pts["wan_bw"], pts["budget"], eta, L)
elif mode == "loop-forms":
    # ctdsl's own forms, compiled for Python floats (math), called once per point,
    # with the binding and the winner picked in Python as the solver picks them
    import math
    import sympy as sp
    fn = sp.lambdify(forms.args, forms.exprs, modules=[{"_ceil_tol": lambda x: math.ceil(x - 1e-12 * max(1.0, abs(x)))}, "math"], cse=True, dummify=True)
    pos = {k: i for i, k in enumerate(forms.keys)}
    scaled = [(pos[src], factor) for key, src, factor in forms.scaled if key[1] == "time_to_target"]
    comps = [[pos[(s, "component:" + c)] for c in sf.components] for s, sf in forms.schemes.items()]
    n = int(sys.argv[4])
    idx = np.linspace(0, grid.size - 1, n).astype(np.int64)
    pts = grid.points(0, grid.size)
    bs, fs = pts["wan_bw"][idx].tolist(), pts["budget"][idx].tolist()
    def run():
        for b, f in zip(bs, fs):
            out = fn(b, f, eta, L)
            ttt = [factor * out[i] for i, factor in scaled]
            binding = [max(cs, key=out.__getitem__) for cs in comps]
            win = min(range(len(ttt)), key=ttt.__getitem__)
elif mode == "loop":
    n = int(sys.argv[4])
    idx = np.linspace(0, grid.size - 1, n).astype(np.int64)
    pts = grid.points(0, grid.size)
    bs, fs = pts["wan_bw"][idx].tolist(), pts["budget"][idx].tolist()
    def run():
        for b, f in zip(bs, fs):
            B.handwritten_point(b, f, eta, L)
best = float("inf")
for _ in range(repeats):
    t = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t)
if mode.startswith("loop"):
    best *= grid.size / n
print(best)
"""


def _child_time(mode: str, repeats: int, extra: list[str] | None = None) -> float:
    cmd = [sys.executable, "-c", SWEEP_CHILD, str(Path(__file__).parent), mode, str(repeats)] + (extra or [])
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(p.stderr)
    return float(p.stdout.strip())


def bench_sweep(rounds: int, repeats: int, loop_sample: int) -> dict:
    import ctdsl
    from ctdsl.numeric import CompiledForms

    sol = ctdsl.load(FORMS_SPEC).solve()
    t = time.perf_counter()
    forms = CompiledForms(sol)
    compile_s = time.perf_counter() - t
    if list(forms.schemes) != SCHEMES or set(forms.names) != {"wan_bw", "budget", "eff", "wan_load"}:
        raise SystemExit("the flagship's schemes or params changed; update bench/bench_solve_sweep.py")
    check_handwritten(forms, _grid(200, 50))
    times: dict[str, list[float]] = {"ctdsl": [], "hand": [], "hand-grid": [], "hand-whole": [], "loop": [], "loop-forms": []}
    for _ in range(rounds):  # each contender in a fresh process, interleaved
        times["ctdsl"].append(_child_time("ctdsl", repeats))
        # the hand-written numpy gets its best chunk size, flat and as blocks of rows
        times["hand"].append(min(_child_time("hand", repeats, [str(c)]) for c in (1 << 13, 1 << 14, 1 << 16)))
        times["hand-grid"].append(min(_child_time("hand-grid", repeats, [str(c)]) for c in (1 << 14, 1 << 16, 1 << 18, 1 << 20)))
        times["hand-whole"].append(_child_time("hand-whole", max(1, repeats // 2)))
        times["loop"].append(_child_time("loop", 1, [str(loop_sample)]))
        times["loop-forms"].append(_child_time("loop-forms", 1, [str(loop_sample)]))
    best = {k: min(v) for k, v in times.items()}
    hand = min(best["hand"], best["hand-grid"], best["hand-whole"])
    return {
        "points": 1000 * 1000,
        "compile": compile_s,
        "ctdsl": best["ctdsl"],
        "hand_chunked": best["hand"],
        "hand_whole": best["hand-whole"],
        "hand_grid": best["hand-grid"],
        "hand": hand,
        "loop": best["loop"],
        "loop_sample": loop_sample,
        "ratio_hand": best["ctdsl"] / hand,
        "ratio_hand_with_compile": (best["ctdsl"] + compile_s) / hand,
        "speedup_loop": best["loop"] / best["ctdsl"],
        "loop_forms": best["loop-forms"],
        "speedup_loop_forms": best["loop-forms"] / best["ctdsl"],
    }


# ---- (c) ----------------------------------------------------------------------------------

MEMORY_CHILD = r"""
import sys, time
from ctdsl.numeric.alloc import keep_freed_memory
keep_freed_memory()

def hwm():  # this process's peak resident memory, MB (VmHWM: not inherited from the parent)
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise SystemExit("no VmHWM in /proc/self/status: (c) needs Linux")

import numpy as np
import ctdsl
from ctdsl.numeric import Axis, CompiledForms, Grid, iter_chunks
sol = ctdsl.load(sys.argv[1]).solve()
forms = CompiledForms(sol)
before = hwm()
grid = Grid([Axis("wan_bw", 1e8, 1e12, 10000, "log"), Axis("budget", 1e10, 9.9e10, 1000, "lin")])
wins = np.zeros(len(sol.schemes) + 1, dtype=np.int64)
fastest = {s: np.inf for s in forms.schemes}
t = time.perf_counter()
for ch in iter_chunks(forms, grid, int(sys.argv[2])):
    wins += np.bincount(ch.winner + 1, minlength=len(wins))
    for s in fastest:
        fastest[s] = min(fastest[s], float(np.nanmin(ch.values[(s, "time_to_target")])))
elapsed = time.perf_counter() - t
print(grid.size, before, hwm(), elapsed, int(wins.sum()))
"""


def bench_memory(chunk: int) -> dict:
    p = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(FORMS_SPEC), str(chunk)], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(p.stderr)
    size, before, after, elapsed, counted = p.stdout.split()
    if int(counted) != int(size):
        raise SystemExit("the memory sweep did not visit every point")
    return {"points": int(size), "before_mb": float(before), "peak_mb": float(after), "seconds": float(elapsed)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--runs", type=int, default=None, help="process runs for (a)")
    args = ap.parse_args()
    runs = args.runs or (5 if args.quick else 15)
    rounds = 2 if args.quick else 4
    repeats = 3 if args.quick else 5
    loop_sample = 5_000 if args.quick else 20_000
    print(f"ctdsl benchmarks: {SPEC.relative_to(ROOT)}, python {sys.version.split()[0]}, {os.cpu_count()} cpus")
    print()
    a = bench_startup(runs)
    print(f"(a) ctdsl solve vs the dependency floor ({runs} runs each, interleaved)")
    print(f"    floor  median {a['median']['floor']:.3f} s   min {a['min']['floor']:.3f} s   python -c \"{FLOOR}\"")
    print(f"    solve  median {a['median']['solve']:.3f} s   min {a['min']['solve']:.3f} s   ctdsl solve {SPEC.relative_to(ROOT)}")
    print(f"    ratio  {a['ratio']:.2f}x (medians), {a['ratio_min']:.2f}x (minima)      target <= 1.5x")
    print()
    b = bench_sweep(rounds, repeats, loop_sample)
    print(f"(b) sweep of 8 schemes over {b['points']:,} points (each in {rounds} fresh processes, best of {repeats} runs in each)")
    print(f"    ctdsl (lambdified, chunks of {CHUNK})   {b['ctdsl']:.3f} s   (+ {b['compile']:.3f} s to lambdify, once)")
    print(f"    hand-written numpy, chunked          {b['hand_chunked']:.3f} s   (its best of chunks of 8192, 16384, 65536)")
    print(f"    hand-written numpy, whole arrays     {b['hand_whole']:.3f} s")
    print(f"    hand-written numpy, blocks of rows   {b['hand_grid']:.3f} s   (broadcast shapes, as ctdsl; its best block)")
    print(f"    Python loop, hand-written forms      {b['loop']:.1f} s   (timed on {b['loop_sample']:,} points, scaled)")
    print(f"    Python loop, ctdsl's forms (math)    {b['loop_forms']:.1f} s   (likewise)")
    print(f"    ratio to hand-written numpy          {b['ratio_hand']:.2f}x  ({b['ratio_hand_with_compile']:.2f}x counting the lambdify)   target <= 1.5x")
    print(f"    faster than the hand-written loop    {b['speedup_loop']:.0f}x                                 target >= 100x")
    print(f"    faster than the loop of its forms    {b['speedup_loop_forms']:.0f}x")
    print()
    c = bench_memory(CHUNK)
    print(f"(c) peak memory of a {c['points']:,}-point sweep (chunks of {CHUNK}, a running summary kept)")
    print(f"    peak RSS {c['peak_mb']:.0f} MB (after the solve, before the sweep: {c['before_mb']:.0f} MB); {c['seconds']:.1f} s   target < 1024 MB")


if __name__ == "__main__":
    main()
