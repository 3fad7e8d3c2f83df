"""Benchmark of the fuzz regression cases: how long each command takes on each case, as ratios.

Run on demand, never from the test suite (the suite checks that every case ends
cleanly, with a backstop far above any time; it asserts no time):

    python bench/bench_regressions.py              # every case, 3 runs each
    python bench/bench_regressions.py --runs 1 --only timeout

Each case of tests/fuzz/crashes/, tests/fuzz/hostile/ and tests/fuzz/hostile_large.py
goes through the fuzz harness (in-process, as the suite runs it) with the CPU clock,
and so does the flagship, through the same commands, in the same run. For each
case and command: the median CPU seconds, and the ratio to the flagship's median
for that command. Issue 18's bound is 2 CPU-seconds a command (harness.SLOW); the
cases over it are listed last. A case first found as a timeout names, in its
`counted by:` line, the test that keeps its fix by counting work instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz.cases import CRASHES, HOSTILE, cases  # noqa: E402
from fuzz.harness import SLOW, Harness  # noqa: E402
from fuzz.hostile_large import LARGE  # noqa: E402

FLAGSHIP = (ROOT / "specs" / "llama70b_wan.ct").read_text(encoding="utf-8")
LIMIT = 60.0  # CPU seconds a command: a case over it is reported as stopped


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="", help="run the cases whose name holds this text")
    args = ap.parse_args()
    todo = [(f"{c.path.parent.name}/{c.id}", c.data, c.commands, c.sets) for c in cases(CRASHES) + cases(HOSTILE)]
    todo += [(f"large/{n}", case.build(), set(case.commands) if case.commands else None, ()) for n, case in LARGE.items()]
    todo = [t for t in todo if args.only in t[0]]
    h = Harness(limit=LIMIT)
    try:
        h.warm_up(FLAGSHIP)
        ref: dict[str, list[float]] = {}
        for _ in range(args.runs):
            for o in h.run(FLAGSHIP).outcomes:
                ref.setdefault(o.command, []).append(o.cpu)
        base = {k: statistics.median(v) for k, v in ref.items()}
        print(f"the flagship, {args.runs} runs, median CPU seconds a command: "
              + ", ".join(f"{k} {v:.2f}" for k, v in base.items()))  # fmt: skip
        print(f"{'case':52} {'command':14} {'CPU s':>7} {'x flagship':>10} {'kind':>6}")
        over = []
        for name, data, only, sets in todo:
            times: dict[str, list[float]] = {}
            kinds: dict[str, str] = {}
            for _ in range(args.runs):
                for o in h.run(data, sets=sets, only=only).outcomes:
                    times.setdefault(o.command, []).append(o.cpu)
                    kinds[o.command] = o.kind
            for command, cpu in times.items():
                med = statistics.median(cpu)
                ratio = f"{med / base[command]:10.1f}" if base.get(command) else f"{'-':>10}"
                print(f"{name[:52]:52} {command:14} {med:7.2f} {ratio} {kinds[command]:>6}")
                if med > SLOW:
                    over.append(f"{name} {command}: {med:.2f} CPU s")
        print(f"over issue 18's {SLOW:g} CPU-second bound: {len(over)}")
        for line in over:
            print("  " + line)
    finally:
        h.close()


if __name__ == "__main__":
    main()
