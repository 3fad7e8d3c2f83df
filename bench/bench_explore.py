"""Benchmarks of `ctdsl explore`, run on demand, never from the test suite:

    python bench/bench_explore.py             # about a minute
    python bench/bench_explore.py --quick     # fewer repeats
    python bench/bench_explore.py --screenshot docs/explorer.png   # also the docs' screenshot

(a) a slider move to redrawn views, measured inside the browser (Chromium through
    Playwright, as the browser tests drive it) with performance.now(), for the
    flagship spec (8 schemes, 400 points per curve, a 200 x 200 winner map, 3
    break-evens): 200 moves, each a random position of a param's slider (the
    four params in turn), timed from the input event's dispatch to its handler's
    return followed by a forced layout (so the table, bars and both canvases are
    redrawn and styled; the compositor's paint is not counted). The median.
                                                                  target < 16 ms
(b) generating the page, `ctdsl explore FILE -o page.html`, against `ctdsl solve
    FILE`, both as fresh processes, interleaved, the median of each. target < 1.5x
(c) the page's size.                                              target < 1.5 MB
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = Path("specs") / "llama70b_wan.ct"  # run from the root: the page names the spec as given
sys.path.insert(0, str(ROOT / "tests"))

from explorekit import launch, open_page, why_no_browser  # noqa: E402

MOVES = 200

MEASURE = """(moves) => {
  const sliders = Array.from(document.querySelectorAll('#params input[type=range]'));
  let seed = 12345;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const times = [];
  for (let k = 0; k < moves; k++) {
    const s = sliders[k % sliders.length];
    s.value = String(Math.floor(rand() * 1001));
    const t0 = performance.now();
    s.dispatchEvent(new Event('input', { bubbles: true }));
    void document.body.offsetHeight;  // style and layout of what changed
    times.push(performance.now() - t0);
  }
  return times;
}"""


def ctdsl_command() -> list[str]:
    exe = Path(sys.executable).parent / "ctdsl"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from ctdsl.cli import main; main()"]


def bench_moves(page_path: Path, screenshot: str | None) -> dict:
    pw, browser = launch()
    try:
        o = open_page(browser, page_path)
        o.page.evaluate(MEASURE, 50)  # warm the JIT
        times = o.page.evaluate(MEASURE, MOVES)
        if screenshot:
            screenshot = str(Path(screenshot).resolve())
            o.page.evaluate("() => { document.querySelector('#reset').click(); }")
            o.page.set_viewport_size({"width": 1200, "height": 1480})
            o.page.screenshot(path=screenshot, full_page=False)
        assert o.problems == [] and len(o.requests) == 1, (o.problems, o.requests)
    finally:
        browser.close()
        pw.stop()
    times.sort()
    n = len(times)
    return {"median": statistics.median(times), "min": times[0], "p25": times[n // 4], "p90": times[int(0.9 * n)], "max": times[-1]}


def bench_generation(runs: int, out: Path) -> dict:
    solve = ctdsl_command() + ["solve", str(SPEC)]
    explore = ctdsl_command() + ["explore", str(SPEC), "-o", str(out)]
    times = {"solve": [], "explore": []}
    for _ in range(runs):
        for key, cmd in (("solve", solve), ("explore", explore)):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            times[key].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats of (b)")
    ap.add_argument("--screenshot", help="write a screenshot of the page at its defaults here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "explorer.html"
        gen = bench_generation(3 if args.quick else 9, page)
        size = page.stat().st_size
        print(f"(b) generation: ctdsl explore {gen['explore']:.2f} s, ctdsl solve {gen['solve']:.2f} s: "
              f"{gen['explore'] / gen['solve']:.2f}x (target < 1.5x)")  # fmt: skip
        print(f"(c) page size: {size / 1e6:.3f} MB (target < 1.5 MB)")
        why = why_no_browser()
        if why:
            print(f"(a) skipped: {why}")
            return 0
        moves = bench_moves(page, args.screenshot)
        print(f"(a) slider move to redrawn views, {MOVES} moves: median {moves['median']:.2f} ms (target < 16 ms); "
              f"min {moves['min']:.2f}, 25th percentile {moves['p25']:.2f}, 90th {moves['p90']:.2f}, max {moves['max']:.2f} ms")  # fmt: skip
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average over the last minute: {load:.2f} on {os.cpu_count()} cores (a shared machine inflates every time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
