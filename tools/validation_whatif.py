"""What the validation sets would give under a hypothesis the model does not hold, and how
precise a model must be for a set's ranking targets: the evidence of docs/validation.md
("What is left and why").

    python tools/validation_whatif.py specs/validation/                          # as the model is
    python tools/validation_whatif.py specs/validation/ --tiles 256x128,128x256  # wave quantisation
    python tools/validation_whatif.py specs/validation/ --mem-eff 0.7            # slower memory-bound work
    python tools/validation_whatif.py --rank-noise                               # ranking vs row error

A hypothesis is applied to the model in this process only (the shipped model is unchanged),
then every set is fitted and scored as `ctdsl validate` does (MAPE, Spearman, best layout):

--tiles T1,T2,..  each linear-layer GEMM (QKV, projection, MLP, LM head; not the attention
                  core's batched GEMMs) runs on `--sms` SMs in output tiles of one of the
                  shapes given (m x n), one tile an SM at a time: its FLOPs are divided by its
                  wave efficiency, the best over the tiles given, averaged over its three
                  passes (forward m x n, input gradient m x k, weight gradient k x n outputs),
                  in place of the device's own quantisation (the a100 preset's sms, tile_m and
                  tile_n: 108 SMs, 256 x 128 either way round, which the model now holds).
--mem-eff X       the memory-bound operations run at mem_bw x X instead of the device's
                  mem_efficiency (the optimiser's passes keep the device's).
--rank-noise      no model at all: each vTrain set's measured times, each multiplied by an
                  independent error 1 + N(0, s) (s set so that the mean |error| is the MAPE
                  shown), 4,000 draws a MAPE, seeded: the Spearman and the chance of the
                  fastest layout being predicted right that a model with that MAPE and no
                  systematic part would reach.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ctdsl.results.observed import spearman  # noqa: E402

SMS_A100 = 108  # streaming multiprocessors of an A100 (NVIDIA A100 whitepaper; the GEMM guide's example)


def wave_efficiency(m: int, n: int, tiles: list[tuple[int, int]], sms: int = SMS_A100) -> float:
    """The useful share of the SMs' time for an m x n GEMM output in tiles of one of `tiles`
    (the best): tiles = ceil(m / tm) ceil(n / tn) run in waves of `sms`, so the work done is
    waves x sms x tm x tn outputs for m n useful ones (tile and wave quantisation)."""
    best = 0.0
    for tm, tn in tiles:
        count = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(count / sms)
        best = max(best, m * n / (waves * sms * tm * tn))
    return best


def gemm_waste(m: int, k: int, n: int, tiles: list[tuple[int, int]], sms: int = SMS_A100) -> float:
    """A GEMM's FLOPs multiplier over its three passes: the mean of 1 / wave efficiency of the
    forward (m x n), the input gradient (m x k) and the weight gradient (k x n) outputs."""
    return sum(1 / wave_efficiency(a, b, tiles, sms) for a, b in ((m, n), (m, k), (k, n))) / 3


def apply(tiles: list[tuple[int, int]] | None, sms: int = SMS_A100, mem_eff: float | None = None):
    """Patch the per-operation compute model of this process with the hypotheses; returns the
    function that undoes it."""
    import sympy as sp

    from ctdsl import units as U
    from ctdsl.symbolic import compute_ops as CO
    from ctdsl.symbolic.dimensioned import DimExpr

    plain, plain_rates = CO.gemm, CO.rates

    def undo() -> None:
        CO.gemm, CO.rates = plain, plain_rates

    if tiles:

        def waste(a: sp.Expr, b: sp.Expr) -> sp.Expr:
            return sp.Min(*[sp.ceiling(sp.ceiling(a / tm) * sp.ceiling(b / tn) / sms) * sms * tm * tn / (a * b) for tm, tn in tiles])

        def gemm(name, m, k, n, beta, waves=None):  # in place of the device's own quantisation
            op = plain(name, m, k, n, beta)
            w = (waste(m.e, n.e) + waste(m.e, k.e) + waste(k.e, n.e)) / 3
            return CO.Op(op.name, op.cls, op.flops * DimExpr(w, U.ONE), op.nbytes, op.launches)

        CO.gemm = gemm
    if mem_eff is not None:

        def rates(ctx, dev, rep):
            r = plain_rates(ctx, dev, rep)
            return CO.Rates(r.gemm, r.attention, r.half, ctx.field(dev, "mem_bw") * DimExpr(sp.Float(mem_eff), U.ONE))

        CO.rates = rates
    return undo


def score(paths: list[str]) -> list[tuple[str, float, float | None, str]]:
    """(set, fitted value, MAPE, Spearman and best layout) of each spec, as `ctdsl validate`;
    a set whose fit has no root in its param's range gives NaN, None and the reason."""
    from ctdsl.api import load
    from ctdsl.failure import Failure

    out = []
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        for p in paths:
            try:
                obs = load(p).observe()
            except Failure as e:
                out.append((Path(p).name, math.nan, None, "no fit: " + e.diagnostics[0].message))
                continue
            fitted = obs.fit.value if obs.fit is not None else math.nan
            ranks = "; ".join(f"Spearman {g.spearman:.2f}, best layout {'right' if g.best_right else 'wrong'}" for g in obs.groups if g.spearman is not None)
            out.append((Path(p).name, fitted, obs.mape, ranks or "-"))
    finally:
        os.chdir(here)
    return out


def rank_noise(measured: list[float], mape: float, draws: int = 4000, seed: int = 1) -> tuple[float, float, float]:
    """(mean Spearman, share of draws with Spearman >= 0.9, share with the fastest right) of
    predictions measured x (1 + e), e ~ N(0, s), s = MAPE sqrt(pi / 2) (then E|e| = MAPE)."""
    s = mape / 100 * math.sqrt(math.pi / 2)
    rng = random.Random(seed)
    fastest = measured.index(min(measured))
    total = high = right = 0.0
    for _ in range(draws):
        p = [x * (1 + rng.gauss(0, s)) for x in measured]
        rho = spearman(measured, p)
        total += rho
        high += rho >= 0.9
        right += p.index(min(p)) == fastest
    return total / draws, high / draws, right / draws


def _vtrain(size: str) -> list[float]:
    with open(ROOT / "specs" / "validation" / "data" / "vtrain_megatron_a100.csv", newline="", encoding="utf-8") as fh:
        return [float(r["iteration time (ms)"]) for r in csv.DictReader(fh) if r["Parameters (billion)"] == size]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", help="specs, or directories of them")
    ap.add_argument("--tiles", default=None, help="output tile shapes, e.g. 256x128,128x256")
    ap.add_argument("--sms", type=int, default=SMS_A100)
    ap.add_argument("--mem-eff", type=float, default=None)
    ap.add_argument("--rank-noise", action="store_true")
    a = ap.parse_args()
    if a.rank_noise:
        for size in ("3.6", "18.4"):
            m = _vtrain(size)
            for mape in (2, 4, 6, 8, 10):
                rho, high, right = rank_noise(m, mape)
                print(f"vTrain {size}B ({len(m)} layouts), row errors of MAPE {mape}%: Spearman {rho:.2f} on average, >= 0.9 in {100 * high:.0f}% of draws, fastest right in {100 * right:.0f}%")
    tiles = [tuple(int(x) for x in t.split("x")) for t in a.tiles.split(",")] if a.tiles else None
    apply(tiles, a.sms, a.mem_eff)
    paths: list[str] = []
    for p in a.paths:
        q = Path(p)
        paths += sorted(str(f) for f in q.glob("*.ct")) if q.is_dir() else [p]
    for name, fitted, mape, ranks in score(paths):
        shown = f"MAPE {mape:5.1f}%" if mape is not None else "MAPE     -"
        print(f"{name:26s} fitted {fitted:.4f}  {shown}  {ranks}")


if __name__ == "__main__":
    main()
