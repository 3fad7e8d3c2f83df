"""How long `ctdsl validate specs/validation/` takes: the whole command, every set.

    python bench/bench_validate.py               # best of 5 runs
    python bench/bench_validate.py --runs 3 --base DIR

Each run is the console script's entry point (`ctdsl.cli:main`) in a fresh process under
this Python, so the figure includes start-up and imports as a CI job's `ctdsl validate`
does: 119 observed scenarios over seven sets, each checked and solved once, and each fit's
scenario once more for its fit (124 solves). With --base (a checkout of another commit, e.g. `git worktree add
/tmp/base main`) the same command also runs with that tree's ctdsl, interleaved (base,
this, base, this, ...), and the ratio of the best times is printed. Both must print the
same bytes; the bench says so when they do not. Run on demand; tests never time anything.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "import sys; sys.path.insert(0, sys.argv.pop(1)); from ctdsl.cli import main; sys.argv[0] = 'ctdsl'; main()"


def run(tree: Path) -> tuple[float, float, bytes]:
    """Wall clock and CPU seconds of one `ctdsl validate specs/validation/` with the ctdsl of `tree`, and its output."""
    cmd = [sys.executable, "-c", ENTRY, str(tree), "validate", "specs/validation/", "--format", "json"]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"ctdsl validate failed ({tree}):\n{done.stderr.decode(errors='replace')}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", help="another tree: its ctdsl too, interleaved, and the ratio of the best times")
    args = ap.parse_args()
    trees = {"this": ROOT}
    if args.base:
        trees = {"base": Path(args.base).resolve(), "this": ROOT}
    best: dict[str, tuple[float, float]] = {}
    outputs: dict[str, bytes] = {}
    for i in range(args.runs):
        for name, tree in trees.items():
            wall, cpu, out = run(tree)
            outputs[name] = out
            print(f"run {i + 1} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU")
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
    for name, (wall, cpu) in best.items():
        print(f"best {name}: {wall:.2f} s wall, {cpu:.2f} s CPU")
    if "base" in best:
        print(f"this / base: {best['this'][0] / best['base'][0]:.2f} (wall), {best['this'][1] / best['base'][1]:.2f} (CPU)")
        print("the same output" if outputs["base"] == outputs["this"] else "THE OUTPUTS DIFFER")


if __name__ == "__main__":
    main()
