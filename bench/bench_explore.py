"""Benchmarks of `ctdsl explore`, run on demand, never from the test suite:

    python bench/bench_explore.py             # a few minutes
    python bench/bench_explore.py --quick     # fewer repeats
    python bench/bench_explore.py --screenshot docs/explorer.png   # also the docs' screenshots (and explorer-400.png)

(a) a slider move to redrawn views, measured inside the browser (Chromium through
    Playwright, as the browser tests drive it) with performance.now(), for the
    flagship spec (4 params, 9 schemes, 400 points per curve, a 200 x 200 winner
    map, 3 break-evens) and for it widened to 20 params and 30 schemes
    (tests/explorekit.wide_spec): 200 moves, each a random position of a param's
    slider (the params in turn), timed from the input event's dispatch to its
    handler's return followed by a forced layout (so the table, bars and both
    canvases are redrawn and styled; the compositor's paint is not counted). The
    median, and the median of the winner map's evaluation within it. On a shared
    machine the wall time waits for the core: the bench also gives the main
    thread's CPU time per move (the mean over the 200: Chromium's TaskDuration
    in thread ticks, through the DevTools protocol), which the load does not inflate.
                                                                  target < 16 ms
(b) generating the page, `ctdsl explore FILE -o page.html`, against `ctdsl solve
    FILE`, both as fresh processes, interleaved, the median of each. target < 1.5x
(c) the pages' sizes: the flagship's, with --simulate, with --simulate at
    wan_load = 0.9, and the wide page's.                           target < 1.5 MB
    The serving study (specs/llama70b_disagg.ct: 3 params, 9 paths, two curves of
    400 points each; goodput and two break-evens of hand-offs after the redraw) is
    measured as (a) too.
(d) the chart of a break-even against a second param, computed after each redraw
    (40 break-evens): its time, median of 20, on the three pages; the serving
    study's goodput and its break-evens of hand-offs, each after a redraw.

    python bench/bench_explore.py --base DIR   # also (a) of the pages another tree writes

With --base (a checkout of another commit, e.g. `git worktree add /tmp/base main`),
(a) is measured on both trees' pages in one run (the flagship, the wide page and the
serving study), interleaved (base, this, base, this), and the ratios of the medians and
of the CPU times are printed.
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
SERVING = Path("specs") / "llama70b_disagg.ct"  # a spec that serves: TTFT and TPOT against the rate
sys.path.insert(0, str(ROOT / "tests"))

from explorekit import launch, open_page, why_no_browser, wide_spec  # noqa: E402

MOVES = 200

MEASURE = """(moves) => {
  const sliders = Array.from(document.querySelectorAll('#params input[type=range]'));
  let seed = 12345;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  const times = [], maps = [];
  for (let k = 0; k < moves; k++) {
    const s = sliders[k % sliders.length];
    s.value = String(Math.floor(rand() * (Number(s.max) + 1)));
    const t0 = performance.now();
    s.dispatchEvent(new Event('input', { bubbles: true }));
    void document.body.offsetHeight;  // style and layout of what changed
    times.push(performance.now() - t0);
    maps.push(ctdslExplorer.lastParts().mapEval || 0);
  }
  return [times, maps];
}"""


def ctdsl_command() -> list[str]:
    exe = Path(sys.executable).parent / "ctdsl"
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from ctdsl.cli import main; main()"]


def bench_moves(page_path: Path, screenshot: str | None = None) -> dict:
    pw, browser = launch()
    try:
        o = open_page(browser, page_path)
        cdp = o.page.context.new_cdp_session(o.page)
        cdp.send("Performance.enable", {"timeDomain": "threadTicks"})  # durations in the thread's CPU time
        task = lambda: next(m["value"] for m in cdp.send("Performance.getMetrics")["metrics"] if m["name"] == "TaskDuration")  # noqa: E731
        o.page.evaluate(MEASURE, 50)  # warm the JIT
        cpu0 = task()
        times, maps = o.page.evaluate(MEASURE, MOVES)
        cpu = (task() - cpu0) * 1000 / MOVES
        if screenshot:
            screenshot = str(Path(screenshot).resolve())
            o.page.evaluate("() => { document.querySelector('#reset').click(); }")
            o.page.set_viewport_size({"width": 1200, "height": 1480})
            o.page.screenshot(path=screenshot, full_page=False)
            o.page.set_viewport_size({"width": 400, "height": 1000})  # and the narrow layout: NAME-400.png
            o.page.wait_for_timeout(200)  # the canvases are redrawn at their new size
            o.page.screenshot(path=str(Path(screenshot).with_name(Path(screenshot).stem + "-400.png")), full_page=False)
        assert o.problems == [] and len(o.requests) == 1, (o.problems, o.requests)
    finally:
        browser.close()
        pw.stop()
    times.sort()
    n = len(times)
    return {"median": statistics.median(times), "min": times[0], "p25": times[n // 4], "p90": times[int(0.9 * n)], "max": times[-1],
            "map": statistics.median(maps), "cpu": cpu}  # fmt: skip


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


def sizes(tmp: Path) -> dict[str, int]:
    """The pages' sizes in bytes (each written by the CLI, from the root)."""
    out = {}
    for key, extra in (("plain", []), ("simulate", ["--simulate"]), ("simulate, wan_load = 0.9", ["--simulate", "--set", "wan_load=0.9"])):
        page = tmp / "s.html"
        subprocess.run(ctdsl_command() + ["explore", str(SPEC), "-o", str(page), *extra], check=True, cwd=ROOT)
        out[key] = page.stat().st_size
    return out


BE2 = """(n) => { const t = []; for (let k = 0; k < n; k++) { const t0 = performance.now(); ctdslExplorer.be2Now(); t.push(performance.now() - t0); }
  t.sort((a, b) => a - b); return t[t.length >> 1]; }"""


GOODPUT = BE2.replace("ctdslExplorer.be2Now()", "ctdslExplorer.servingNow()")
HANDOFFS = BE2.replace("ctdslExplorer.be2Now()", "ctdslExplorer.handoffsNow()")


def bench_be2(page_path: Path, measure: str = BE2) -> float:
    pw, browser = launch()
    try:
        o = open_page(browser, page_path)
        return o.page.evaluate(measure, 20)
    finally:
        browser.close()
        pw.stop()


# the docs' screenshot of each view of an answer: (file, spec, the section(s), what to do first)
VIEW_SHOTS = (
    ("explorer-money.png", "examples/20_codesign_study.ct", ["#money"], None),
    ("explorer-breakevens-cost.png", "examples/20_codesign_study.ct", ["#curves"], "() => { const s = document.getElementById('quantity'); s.value = 'cost'; s.dispatchEvent(new Event('change')); }"),
    ("explorer-targets.png", "examples/19_utilisation_targets.ct", ["#curves", "#targets"], None),
    ("explorer-memory.png", "examples/19_utilisation_targets.ct", ["#memory"], None),
    ("explorer-job.png", "specs/llama405b_3dc.ct", ["#job"], None),
    ("explorer-energy-bytes.png", "specs/llama70b_wan.ct", ["#energy", "#bytes"], None),
    ("explorer-scenarios.png", "examples/21_scenarios.ct", ["#scenarios"],
     "() => { document.querySelector('button[data-preset=tp2]').click(); }"),
    ("explorer-observed.png", "examples/21_scenarios.ct", ["#curves"],
     "() => { document.querySelector('button[data-preset=tp2]').click(); const s = document.getElementById('x-param'); s.value = '1'; s.dispatchEvent(new Event('change')); }"),
    ("explorer-be2.png", "specs/llama70b_wan.ct", ["#be2"],
     "() => { const s = document.getElementById('be2-q'); s.value = '2'; s.dispatchEvent(new Event('change')); ctdslExplorer.be2Now(); }"),
    ("explorer-intro.png", "examples/19_utilisation_targets.ct", ["header"], None),
    ("explorer-diagnostics.png", "examples/19_utilisation_targets.ct", ["#diagnostics"], None),
    ("explorer-serving.png", "specs/llama70b_disagg.ct", ["#controls", "#serving", "#serving-tables"], None),
    ("explorer-serving-breakevens.png", "specs/llama70b_disagg.ct", ["#serving-breakevens", "#be2"],
     "() => { ctdslExplorer.handoffsNow(); ctdslExplorer.be2Now(); }"),
)


def view_shots(out_dir: Path, tmp: Path) -> None:
    """A screenshot of each view of an answer (VIEW_SHOTS), at 1000 px wide, into out_dir."""
    pw, browser = launch()
    try:
        for name, spec, sections, before in VIEW_SHOTS:
            page_path = tmp / (Path(spec).stem + ".html")
            if not page_path.exists():
                subprocess.run(ctdsl_command() + ["explore", spec, "-o", str(page_path)], check=True, cwd=ROOT)
            o = open_page(browser, page_path, viewport=(1000, 1200))
            if before:
                o.page.evaluate(before)
            o.page.wait_for_timeout(100)
            boxes = [o.page.locator(s).first.bounding_box() for s in sections]
            top, bottom = min(b["y"] for b in boxes), max(b["y"] + b["height"] for b in boxes)
            left, right = min(b["x"] for b in boxes), max(b["x"] + b["width"] for b in boxes)
            o.page.set_viewport_size({"width": 1000, "height": int(bottom) + 20})
            o.page.screenshot(path=str(out_dir / name), clip={"x": left, "y": top, "width": right - left, "height": min(bottom - top, 1400)})
            assert o.problems == [], o.problems
            o.page.close()
    finally:
        browser.close()
        pw.stop()


def base_page(base: Path, spec: Path, out: Path) -> None:
    """The page the tree at `base` writes for `spec` (run from that tree's root, with its own ctdsl)."""
    code = "import sys; sys.path.insert(0, sys.argv[1]); import ctdsl; ctdsl.load(sys.argv[2]).explore(sys.argv[3])"
    subprocess.run([sys.executable, "-c", code, str(base), str(spec), str(out)], check=True, cwd=base)


def report_moves(name: str, m: dict) -> None:
    print(f"(a) {name}: slider move to redrawn views, {MOVES} moves: median {m['median']:.2f} ms (target < 16 ms); "
          f"min {m['min']:.2f}, 25th percentile {m['p25']:.2f}, 90th {m['p90']:.2f}, max {m['max']:.2f} ms; "
          f"the winner map's evaluation, median {m['map']:.2f} ms; main-thread CPU time per move, mean {m['cpu']:.2f} ms")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats of (b)")
    ap.add_argument("--screenshot", help="write a screenshot of the page at its defaults here")
    ap.add_argument("--views", help="write the docs' screenshot of each view of an answer into this directory, and stop")
    ap.add_argument("--base", help="another tree: (a) also on the pages it writes, interleaved, with the ratios")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.views:
            view_shots(Path(args.views).resolve(), Path(tmp))
            return 0
        page = Path(tmp) / "explorer.html"
        gen = bench_generation(3 if args.quick else 9, page)
        print(f"(b) generation: ctdsl explore {gen['explore']:.2f} s, ctdsl solve {gen['solve']:.2f} s: "
              f"{gen['explore'] / gen['solve']:.2f}x (target < 1.5x)")  # fmt: skip
        wide_ct, wide = Path(tmp) / "wide.ct", Path(tmp) / "wide.html"
        wide_ct.write_text(wide_spec(20, 30), encoding="utf-8")
        subprocess.run(ctdsl_command() + ["explore", str(wide_ct), "-o", str(wide)], check=True, cwd=ROOT)
        for key, size in {**sizes(Path(tmp)), "wide (20 params, 30 schemes)": wide.stat().st_size}.items():
            print(f"(c) page size, {key}: {size:,} bytes = {size / 1e6:.3f} MB (target < 1.5 MB)")
        why = why_no_browser()
        if why:
            print(f"(a) skipped: {why}")
            return 0
        serving = Path(tmp) / "serving.html"
        subprocess.run(ctdsl_command() + ["explore", str(SERVING), "-o", str(serving)], check=True, cwd=ROOT)
        print(f"(c) page size, serving ({SERVING}): {serving.stat().st_size:,} bytes")
        serving_name = "serving (specs/llama70b_disagg.ct: 3 params, 9 paths, 2 hand-off break-evens)"
        if args.base:
            base = Path(args.base).resolve()
            pages = (("flagship (4 params, 9 schemes)", page, SPEC), ("wide (20 params, 30 schemes)", wide, wide_ct), (serving_name, serving, SERVING))
            for name, mine, spec in pages:
                theirs = Path(tmp) / ("base-" + mine.name)
                base_page(base, spec if spec.is_absolute() else ROOT / spec, theirs)
                runs = {"base": [], "this": []}
                for _ in range(2):
                    runs["base"].append(bench_moves(theirs))
                    runs["this"].append(bench_moves(mine))
                med = {k: statistics.median(r["median"] for r in v) for k, v in runs.items()}
                cpu = {k: statistics.median(r["cpu"] for r in v) for k, v in runs.items()}
                report_moves(name + ", this tree", runs["this"][-1])
                report_moves(name + ", base tree", runs["base"][-1])
                print(f"(a) {name}: this / base, median of the medians {med['this']:.2f} / {med['base']:.2f} ms = {med['this'] / med['base']:.2f}; "
                      f"CPU per move {cpu['this']:.2f} / {cpu['base']:.2f} ms = {cpu['this'] / cpu['base']:.2f} (2 runs each, interleaved)")
        else:
            report_moves("flagship (4 params, 9 schemes)", bench_moves(page, args.screenshot))
            report_moves("wide (20 params, 30 schemes)", bench_moves(wide))
            report_moves(serving_name, bench_moves(serving))
        print(f"(d) serving: goodput of the 9 paths (60 bisections per SLO target), after a redraw: median {bench_be2(serving, GOODPUT):.2f} ms")
        print(f"(d) serving: the 2 break-evens of hand-offs (a settle scan, 257 points, bisections), after a redraw: median {bench_be2(serving, HANDOFFS):.2f} ms")
        print(f"(d) serving: a hand-off break-even against the rate, 40 break-evens after a redraw: median {bench_be2(serving):.2f} ms")
        for name, pg in (("flagship", page), ("wide", wide)):
            print(f"(d) {name}: a break-even against a second param, 40 break-evens after a redraw: median {bench_be2(pg):.2f} ms")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average over the last minute: {load:.2f} on {os.cpu_count()} cores (a shared machine inflates every time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
