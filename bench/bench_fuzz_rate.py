"""The fuzz harness's rate and the flagship report's time, this tree against another, in one run.

    git -C /work/main archive main | tar -x -C /tmp/base        # the tree to compare with
    python bench/bench_fuzz_rate.py --base /tmp/base             # both measures
    python bench/bench_fuzz_rate.py --base /tmp/base --what rate --rounds 4 --chunk 60
    python bench/bench_fuzz_rate.py --base /tmp/base --what report --spec specs/llama70b_wan.ct --spec examples/18_uncertainty.ct

Each side runs in its own worker process with its own tree first on sys.path (so
each imports its own ctdsl and tests/fuzz); the workers are started and warmed up
once (imports, caches, one run of the flagship spec), then asked for one chunk at a
time, the two sides alternating, so that load from the rest of a shared machine
falls on both alike. `rate`: inputs of the long campaign (seed --seed, the same
inputs on both sides) through every command of the harness, inputs per second.
`report`: `ctdsl report SPEC -o report.md` in-process, seconds per report, for
each --spec (the flagship by default; the typesetting caches are emptied before
each: a report's time as the first in a process). It prints each side's totals, wall-clock and CPU time of the worker (the
steadier of the two on a shared machine), and the ratios.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    r"""
    import json, os, sys, tempfile, time
    root = sys.argv[1]
    sys.path[:0] = [root, os.path.join(root, "tests")]
    from fuzz.generators import FuzzInput, corpus, generate, sample_grammar
    from fuzz.harness import Harness
    import ctdsl
    assert ctdsl.__file__.startswith(root), ctdsl.__file__
    h = Harness()
    flagship = dict(corpus())["specs/llama70b_wan.ct"]
    getattr(h, "warm_up", h.run)(flagship)  # as bench/fuzz.py's workers do
    from typer.testing import CliRunner
    from ctdsl.cli import app
    runner, out = CliRunner(), tempfile.mkdtemp(prefix="ctdsl-bench-")
    batches = {}

    def one_input(seed, i):
        if i % 5:
            return generate(seed, i)
        g, b = i // 5, i // 5 // 200
        if b not in batches:
            batches.clear()
            batches[b] = sample_grammar(200, seed * 1_000_003 + b)
        return FuzzInput("grammar", "grammar", batches[b][g % 200] if batches[b] else "")

    print("ready", flush=True)
    for line in sys.stdin:
        what, seed, start, count, spec = line.split()
        seed, start, count, spec = int(seed), int(start), int(count), os.path.join(root, spec)
        if what == "rate":
            inputs = [one_input(seed, i) for i in range(start, start + count)]
            t, c = time.perf_counter(), time.process_time()
            slowest = (0.0, "")
            for i, inp in zip(range(start, start + count), inputs):
                for o in h.run(inp.text, inp.sets).outcomes:
                    slowest = max(slowest, (o.seconds, f"input {i} {o.command}"))
            seconds, cpu = time.perf_counter() - t, time.process_time() - c
        else:
            from ctdsl.report.plots import typeset
            t, c = time.perf_counter(), time.process_time()
            for _ in range(count):
                for f in vars(typeset).values():  # each report typesets as the first would (every cache emptied)
                    getattr(f, "cache_clear", lambda: None)()
                r = runner.invoke(app, ["report", spec, "-o", os.path.join(out, "report.md")])
                assert r.exit_code == 0, r.output
            seconds, cpu, slowest = time.perf_counter() - t, time.process_time() - c, (0.0, "")
        print(json.dumps({"seconds": seconds, "cpu": cpu, "count": count, "slowest": slowest}), flush=True)
    h.close()
    """
)


class Side:
    def __init__(self, name: str, root: Path) -> None:
        self.name, self.root = name, root
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root)], cwd=root, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == "ready", f"{name}: the worker did not start"
        self.seconds: dict = defaultdict(float)
        self.cpu: dict = defaultdict(float)
        self.count: dict = defaultdict(int)
        self.slowest = (0.0, "")

    def ask(self, what: str, seed: int, start: int, count: int, spec: str = "-") -> dict:
        """Run `count` inputs from `start` (rate) or `count` reports of `spec` (report); totals are kept by key."""
        self.proc.stdin.write(f"{what} {seed} {start} {count} {spec}\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        key = what if what == "rate" else spec
        self.seconds[key] += r["seconds"]
        self.cpu[key] += r["cpu"]
        self.count[key] += r["count"]
        self.slowest = max(self.slowest, tuple(r["slowest"]))
        return r

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=Path, required=True, help="the tree to compare with (an export of main)")
    ap.add_argument("--what", choices=["rate", "report", "both"], default="both")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=50, help="inputs per side per round")
    ap.add_argument("--reports", type=int, default=2, help="reports per side per round")
    ap.add_argument("--spec", action="append", default=None,
                    help="a spec to report on, relative to each tree (repeatable; default specs/llama70b_wan.ct)")
    args = ap.parse_args()
    sides = [Side("base", args.base.resolve()), Side("this tree", ROOT)]
    whats = ["rate", "report"] if args.what == "both" else [args.what]
    specs = args.spec or ["specs/llama70b_wan.ct"]
    started = time.time()
    try:
        for r in range(args.rounds):
            for what, spec in [(w, s) for w in whats for s in (specs if w == "report" else ["-"])]:
                count = args.chunk if what == "rate" else args.reports
                for side in sides if r % 2 == 0 else sides[::-1]:  # alternate who goes first
                    side.ask(what, args.seed, r * args.chunk, count, spec)
    finally:
        for side in sides:
            side.close()
    base, new = sides
    print(f"{args.rounds} rounds in {time.time() - started:.0f} s, sides alternating")
    if "rate" in whats:
        for clock in ("seconds", "cpu"):
            rb, rn = (s.count["rate"] / getattr(s, clock)["rate"] for s in sides)
            print(f"harness ({'wall' if clock == 'seconds' else 'CPU'}): base {rb:.2f} inputs/s, this tree {rn:.2f} "
                  f"inputs/s, ratio {rn / rb:.2f} ({new.count['rate']} inputs each)")
        print(f"  slowest command: base {base.slowest[0]:.2f} s {base.slowest[1]}, this tree {new.slowest[0]:.2f} s "
              f"{new.slowest[1]}")
    if "report" in whats:
        for spec in specs:
            for clock in ("seconds", "cpu"):
                tb, tn = (getattr(s, clock)[spec] / s.count[spec] for s in sides)
                print(f"report of {spec} (Markdown, in-process, {'wall' if clock == 'seconds' else 'CPU'}): base {tb:.2f} s, "
                      f"this tree {tn:.2f} s, ratio {tb / tn:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
