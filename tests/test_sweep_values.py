"""Sweep values against `ctdsl solve`, chunked against unchunked, and regime changes by hand.

`ctdsl solve` evaluates each exact form with its own float evaluator (a walk of
the sympy tree, `math.fsum` for sums); the sweep evaluates the same forms
through one lambdified numpy function. The two agree to rounding (1e-12
relative), which is what is checked at sample points. Chunked and unchunked
evaluation must agree exactly: every value at a point depends on that point
alone.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import ctdsl
from ctdsl.numeric import Axis, CompiledForms, Grid, evaluate, iter_chunks
from ctdsl.numeric.crossings import sweep_curves
from solvekit import C

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "tests" / "data" / "llama70b_workers.ct"  # the study with single-GPU workers
EXAMPLES = sorted((ROOT / "examples").glob("*.ct"))
RTOL = 1e-12


@pytest.fixture(scope="module")
def flagship():
    sol = ctdsl.load(FLAGSHIP).solve()
    return sol, CompiledForms(sol)


def _close(a: float, b: float) -> bool:
    if a is None or b is None:
        return a is b
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return (math.isnan(a) and math.isnan(b)) or a == b
    return abs(a - b) <= RTOL * max(abs(a), abs(b))


def _text(value: float, p) -> str:
    """A param value as --set text in base units (repr round-trips the float exactly)."""
    unit = "" if p.dim.dimensionless else " " + p.dim.symbol()
    return f"{value!r}{unit}"


def _compare_point(sol_at, chunk, k: int, forms):
    for name, r in sol_at.schemes.items():
        assert _close(chunk.values[(name, "step")][k], r.step_time.value), name
        if r.time_to_target is not None:
            assert _close(chunk.values[(name, "time_to_target")][k], r.time_to_target.value), name
            assert _close(chunk.values[(name, "energy_to_target")][k], r.energy_to_target.value), name
        for comp, q in r.components.items():
            assert _close(chunk.values[(name, "component:" + comp.id)][k], q.value), (name, comp)
        assert chunk.binding_names(name, forms)[k] == r.binding, name
    timed = {n: r.time_to_target.value for n, r in sol_at.schemes.items() if r.time_to_target is not None}
    assert chunk.winner_names()[k] == min(timed, key=timed.get)


@pytest.mark.parametrize(
    "point",
    [
        {"wan_bw": 1.0e8, "budget": 1.0e10},
        {"wan_bw": 3.7e8, "budget": 2.3e10},
        {"wan_bw": 2.5e9, "budget": 9.9e10, "eff": 0.25},
        {"wan_bw": 1.25e10},
        {"wan_bw": 6.0e10, "budget": 4.4e10, "eff": 0.55, "wan_load": 0.6},
        {"wan_bw": 1.0e12, "wan_load": 0.9},
    ],
)
def test_sweep_matches_solve_at_sample_points(flagship, point):
    sol, forms = flagship
    chunk = evaluate(forms, {k: np.array([v]) for k, v in point.items()})
    overrides = {k: _text(v, sol.spec.params[k]) for k, v in point.items()}
    at = ctdsl.load(FLAGSHIP, overrides).solve()
    _compare_point(at, chunk, 0, forms)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_at_its_defaults(path):
    sol = ctdsl.load(path).solve()
    forms = CompiledForms(sol)
    chunk = evaluate(forms, {})
    assert len(chunk) == 1
    for name, r in sol.schemes.items():
        assert _close(chunk.values[(name, "step")][0], r.step_time.value), name
        for comp, q in r.components.items():
            assert _close(chunk.values[(name, "component:" + comp.id)][0], q.value), (name, comp)
        assert chunk.binding_names(name, forms)[0] == r.binding
        if r.time_to_target is None:
            assert (name, "time_to_target") not in chunk.values


def test_grid_points_match_solve_along_a_2d_sweep(flagship):
    sol, forms = flagship
    grid = Grid([Axis("wan_bw", 1e8, 1e12, 5, "log"), Axis("budget", 1e10, 9.9e10, 3, "lin")])
    (chunk,) = list(iter_chunks(forms, grid, chunk=1000))
    assert len(chunk) == 15
    # row-major: budget (the last axis) varies fastest
    assert chunk.params["budget"][:3].tolist() == [1e10, 5.45e10, 9.9e10]
    assert chunk.params["wan_bw"][:4].tolist() == [1e8, 1e8, 1e8, 1e9]
    for k in (0, 7, 14):
        over = {n: _text(float(chunk.params[n][k]), sol.spec.params[n]) for n in ("wan_bw", "budget")}
        _compare_point(ctdsl.load(FLAGSHIP, over).solve(), chunk, k, forms)


def test_log_axis_hits_its_ends_and_decades():
    a = Axis("b", 1e8, 1e12, 41, "log")
    assert a.values[0] == 1e8 and a.values[-1] == 1e12
    # every tenth point is a decade: 10^(8 + k/10)
    for k in range(0, 41, 10):
        assert a.values[k] == pytest.approx(10 ** (8 + k / 10), rel=1e-14)
    with pytest.raises(ValueError):
        Axis("b", 0.0, 1.0, 3, "log")


@pytest.mark.parametrize("size", [1, 7, 64, 1000, 4096])
def test_chunked_and_unchunked_agree_exactly(flagship, size):
    sol, forms = flagship
    grid = Grid([Axis("wan_bw", 1e8, 1e12, 97, "log"), Axis("budget", 1e10, 9.9e10, 11, "lin"), Axis("eff", 0.2, 0.6, 3)])
    whole = evaluate(forms, grid.points(0, grid.size))
    parts = list(iter_chunks(forms, grid, chunk=size))
    assert sum(len(p) for p in parts) == grid.size == 97 * 11 * 3
    for key, full in whole.values.items():
        joined = np.concatenate([p.values[key] for p in parts])
        assert joined.tobytes() == full.tobytes(), key
    for name in forms.schemes:
        assert np.concatenate([p.binding[name] for p in parts]).tobytes() == whole.binding[name].tobytes()
    assert np.concatenate([p.winner for p in parts]).tobytes() == whole.winner.tobytes()


def test_regime_change_of_adamw_by_hand(flagship):
    """adamw's step: compute + 2 WAN steps of its shards; compute binds above b = 2 D_half / t_c.

    By hand (domain.md 2-4): P = 70,552,387,584, BF16 so D = 2P = 141.10 GB; the
    all-reduce across 2 dcs puts all 4 workers' shards (D/8 each) on the WAN at
    once, D/2 per step, for 2(N_dc - 1) = 2 steps. Compute: 6 P x 16384 tokens /
    (989 TFLOP/s x 0.4) = 17.532 s. The WAN phase overtakes compute where
    2 (D/2) / b = 17.532 s, b = 8.049 GB/s (the latencies, tens of microseconds,
    move it by less than one part in 10^5).
    """
    sol, forms = flagship
    P = 70_552_387_584
    t_c = 6 * P * 16384 / (989e12 * 0.4)
    assert t_c == pytest.approx(17.532, abs=1e-3)
    b_star = 2 * P / t_c
    c = sweep_curves(sol, forms)
    (adamw,) = [ch for ch in c.changes if ch.scheme == "adamw"]
    assert adamw.x == pytest.approx(b_star, rel=1e-4)
    assert adamw.before == C("sync_across_sites:all-reduce of each shard across dcs") and adamw.after == C("compute")


def test_plotted_break_evens_are_the_solver_roots(flagship):
    sol, forms = flagship
    c = sweep_curves(sol, forms)
    roots = sorted(r.value for b in sol.breakevens for r in b.roots)
    assert sorted(p.x for p in c.breaks) == roots
    # at each break-even the two schemes' times to target agree
    for p in c.breaks:
        at = evaluate(forms, {"wan_bw": np.array([p.x])})
        assert at.values[(p.breakeven.y, "time_to_target")][0] == pytest.approx(p.y, rel=1e-9)
