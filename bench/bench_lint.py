"""How long `ctdsl lint` takes on 100 spec files: wall clock, the whole command.

    python bench/bench_lint.py            # 100 files, best of 5 runs
    python bench/bench_lint.py --files 300 --runs 3

It copies spec files into a temporary folder, 100 by default: the flagship
(specs/llama70b_wan.ct) and every example (examples/*.ct, with examples/common/
for their imports), cycled until there are enough, each copy renamed. Then it runs
`ctdsl lint FOLDER --format concise` in a fresh process (the console script's
entry point, `ctdsl.cli:main`, under this Python), so that the
figure includes start-up, imports and the walk of the folder, as in pre-commit or
CI. It prints each run (wall clock, and CPU time) and the best. Run on demand; tests never time anything.
"""

from __future__ import annotations

import argparse
import itertools
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sources() -> list[Path]:
    out = [ROOT / "specs" / "llama70b_wan.ct"]
    out += sorted((ROOT / "examples").glob("*.ct"))
    return [p for p in out if p.is_file()]


def populate(folder: Path, n: int) -> list[Path]:
    if (ROOT / "examples" / "common").is_dir():
        shutil.copytree(ROOT / "examples" / "common", folder / "common")
    made = []
    for i, src in zip(range(n), itertools.cycle(sources())):
        dst = folder / f"{i:03d}_{src.name}"
        shutil.copyfile(src, dst)
        made.append(dst)
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctdsl-bench-lint-") as tmp:
        folder = Path(tmp)
        files = populate(folder, args.files)
        lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in files)
        entry = "import sys; from ctdsl.cli import main; sys.argv[0] = 'ctdsl'; main()"
        cmd = [sys.executable, "-c", entry, "lint", str(folder), "--format", "concise"]
        times, cpus = [], []
        for run in range(args.runs):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
            if proc.returncode not in (0, 1):
                sys.exit(f"ctdsl lint failed (exit {proc.returncode}):\n{proc.stderr}")
            findings = len(proc.stdout.splitlines())
            print(f"run {run + 1}: {times[-1]:.3f} s wall, {cpus[-1]:.3f} s CPU  ({findings} findings)")
        print(
            f"ctdsl lint, {len(files)} spec files ({lines} lines, {len(sources())} distinct): "
            f"best {min(times):.3f} s, median {sorted(times)[len(times) // 2]:.3f} s wall clock "
            f"(CPU, all processes: best {min(cpus):.3f} s)"
        )


if __name__ == "__main__":
    main()
