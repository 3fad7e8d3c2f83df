"""Benchmark of `ctdsl uncertainty`: 10^6 draws through the flagship's compiled forms.

Run on demand, never from the test suite:

    python bench/bench_uncertainty.py            # 10^6 draws, best of 3
    python bench/bench_uncertainty.py --quick    # one repeat

The flagship (specs/llama70b_wan.ct) has no distributions, so the benchmark
gives three of its params the ones of docs/codesign.md's example (its text is
changed in memory, the file is not): wan_bw ~ lognormal(12.5 GB/s, 0.5),
budget ~ uniform(30 GFLOP/s, 70 GFLOP/s), eff ~ triangular(0.3, 0.4, 0.55).

(a) draws + evaluation: the draws, every scheme's forms over them in chunks,
    and the winner of each draw (what P(first) counts).        target < 1 s
(b) the same plus the summaries (mean, sd, three quantiles of time, energy and
    cost of every scheme): `_scheme_spreads` as the command runs it.
(c) a reference: one evaluation of the compiled function over all 10^6 draws
    at once (no chunks, no winner), the floor that (a) is compared against.
(d) break-evens on the first 5,000 draws (the command's default).
(e) drawing alone, 10^6 values: a uniform, and tables of samples (`~ samples([...])`)
    of 5 values and of MAX_DIST_SAMPLES, each as a ratio to the uniform.

Times are the best of the repeats, measured in this run; the machine may be
shared with other work, so the absolute times are for context and the ratio
(a) / (c) is the figure to compare across machines.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ctdsl
from ctdsl import limits
from ctdsl.model.distribution import Distribution
from ctdsl.numeric import uncertainty as UN
from ctdsl.numeric.chunked import _winner
from ctdsl.numeric.forms import TIME, CompiledForms

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "llama70b_wan.ct"
N = 1_000_000


def spec_text() -> str:
    text = SPEC.read_text(encoding="utf-8")
    subs = {
        "param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41": " ~ lognormal(12.5 GB/s, 0.5)",
        "param budget = 50 GFLOP/s in 10 GFLOP/s .. 99 GFLOP/s lin 10": " ~ uniform(30 GFLOP/s, 70 GFLOP/s)",
        "param eff = 0.4 in 0.2 .. 0.6": " ~ triangular(0.3, 0.4, 0.55)",
    }
    for head, dist in subs.items():
        if head not in text:
            raise SystemExit(f"the flagship no longer declares `{head}`: update bench/bench_uncertainty.py")
        text = text.replace(head, head + dist, 1)
    return text


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    repeats = 1 if args.quick else 3
    result = ctdsl.check(str(SPEC), text=spec_text())
    if not result.ok:
        raise SystemExit(result.render())
    sol = ctdsl.api.Study(result).solve()
    forms = CompiledForms(sol)
    money = UN.MoneyForms(sol, forms)
    ranked = [s for s, sf in forms.schemes.items() if sf.has_steps]

    def draws_and_forms():
        drawn = UN.draws(sol.spec, N, 0)
        for a in range(0, N, UN.CHUNK):
            vals = UN.values_at(forms, money, {k: v[a : a + UN.CHUNK] for k, v in drawn.items()})
            _winner([vals[(s, TIME)] for s in ranked])

    drawn = UN.draws(sol.spec, N, 0)
    ta = best(draws_and_forms, repeats)
    tb = best(lambda: UN._scheme_spreads(sol, forms, money, UN.draws(sol.spec, N, 0), N), repeats)
    tc = best(lambda: forms.evaluate_raw(drawn), repeats)
    small = UN.draws(sol.spec, UN.BREAKEVEN_SAMPLES, 0)
    td = best(lambda: UN._breakeven_spreads(sol, forms, money, small, UN.BREAKEVEN_SAMPLES), 1)
    print(f"schemes: {len(ranked)}, forms: {len(forms.keys)}, draws: {N:,} of {', '.join(drawn)}")
    print(f"(a) draws + forms + winner, chunked   {ta:7.3f} s   target < 1 s: {'met' if ta < 1 else 'NOT met'}")
    print(f"(b) (a) + summaries of every scheme   {tb:7.3f} s")
    print(f"(c) forms in one call (the floor)     {tc:7.3f} s   (a) / (c) = {ta / tc:.2f}")
    print(f"(d) {len(sol.breakevens)} break-evens on {UN.BREAKEVEN_SAMPLES:,} draws     {td:7.3f} s")
    span = next(p.dist.span for p in sol.spec.params.values() if p.dist is not None)
    uniform = Distribution("uniform", (0.9, 1.5), span)
    tables = {k: Distribution("samples", tuple(np.linspace(0.9, 1.5, k)), span) for k in (5, limits.MAX_DIST_SAMPLES)}
    tu = best(lambda: UN.draw(uniform, N, np.random.default_rng(0)), repeats)
    tt = {k: best(lambda d=d: UN.draw(d, N, np.random.default_rng(0)), repeats) for k, d in tables.items()}
    print(f"(e) uniform draws                     {tu:7.3f} s")
    for k, t in tt.items():
        print(f"    draws from a table of {k:>6,}        {t:7.3f} s   / uniform = {t / tu:.2f}")
    print("times are best of", repeats, "on a machine that may be shared: compare the ratio")
    assert np.isfinite(ta)


if __name__ == "__main__":
    main()
