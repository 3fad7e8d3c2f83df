"""`solve` of this tree against another tree of ctdsl, as a ratio measured in one run.

Run on demand, never from the test suite:

    git worktree add /tmp/ctdsl-main main      # or: git archive main | tar -x -C /tmp/ctdsl-main
    python bench/bench_solve_ab.py --base /tmp/ctdsl-main            # every spec and example, 5 rounds
    python bench/bench_solve_ab.py --base /tmp/ctdsl-main --quick    # the two specs, 3 rounds

For every spec of specs/ and examples/, each round runs one fresh process per tree (the
two trees in alternating order, round after round, so that a slow spell of a shared
machine falls on both), which loads the spec and times `solve()` with the process's CPU
clock (the imports and the check are outside the clock): what `ctdsl solve` spends on the
costs, their evaluation, the break-evens and the targets. Both trees are compiled to
bytecode first. It prints, per spec, the median CPU-seconds of each tree and their ratio,
and the ratio of the sums of the medians over all specs (target: within 10%, 0.90 to 1.10).
Both trees must be importable as `ctdsl` from their root (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import json, os, sys, time
import ctdsl
assert ctdsl.__file__.startswith(os.environ["PYTHONPATH"]), ctdsl.__file__  # the tree asked for
from ctdsl.api import load
study = load(sys.argv[1])
t = time.process_time()
study.solve()
print(json.dumps(time.process_time() - t))
"""


def specs(quick: bool) -> list[str]:
    if quick:
        return ["specs/llama70b_wan.ct", "specs/llama405b_3dc.ct"]
    found = sorted(ROOT.glob("specs/*.ct")) + sorted(ROOT.glob("examples/*.ct"))
    return [p.relative_to(ROOT).as_posix() for p in found]


def solve_seconds(tree: Path, spec: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # -P: `python -c` would put the working directory (this tree) first on sys.path, ahead of
    # PYTHONPATH, and both runs would import this tree's ctdsl
    out = subprocess.run([sys.executable, "-P", "-c", PROBE, spec], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, type=Path, help="the root of the tree to compare with (it holds ctdsl/)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = args.rounds or (3 if args.quick else 5)
    trees = {"base": args.base.resolve(), "this": ROOT}
    for tree in trees.values():
        if not (tree / "ctdsl" / "__init__.py").is_file():
            sys.exit(f"{tree}: no ctdsl/ package there")
        compileall.compile_dir(str(tree / "ctdsl"), quiet=1)
    times: dict[str, dict[str, list[float]]] = {s: {"base": [], "this": []} for s in specs(args.quick)}
    for r in range(rounds):
        order = ("base", "this") if r % 2 == 0 else ("this", "base")
        for spec in times:
            for name in order:
                times[spec][name].append(solve_seconds(trees[name], spec))
    total = {"base": 0.0, "this": 0.0}
    print(f"{'spec':40s} {'base s':>9s} {'this s':>9s} {'this/base':>9s}")
    for spec, t in times.items():
        med = {k: statistics.median(v) for k, v in t.items()}
        for k in total:
            total[k] += med[k]
        print(f"{spec:40s} {med['base']:9.3f} {med['this']:9.3f} {med['this'] / med['base']:9.3f}")
    print(f"{'all (sum of medians)':40s} {total['base']:9.3f} {total['this']:9.3f} {total['this'] / total['base']:9.3f}")
    print(f"{rounds} rounds; CPU-seconds of solve() in a fresh process per run, imports and check outside the clock")


if __name__ == "__main__":
    main()
