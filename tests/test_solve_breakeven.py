"""Break-even roots: against hand-derived values and an independent numeric root-finder.

Every symbolic root is checked against scipy's brentq on the lambdified
time-to-target expressions (to 1e-9 relative), and every sign change that a fine
numeric scan of the range finds must be one of the symbolic roots, so a missed
regime fails the test.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from solvekit import solve_file, solve_text

HEAD = """
param b = 5 GB/s in 1 GB/s .. 100 GB/s log 20
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device d {{ peak = 100 TFLOP/s; efficiency = 1 }}
link fast {{ bandwidth = 10 GB/s; latency = 1 us }}
link wan {{ bandwidth = b; latency = 10 us }}
switch s {{ sum = true; loopback = true }}
dc a {{ workers = 2; device = d; link = fast; switch = s }}
dc c {{ workers = 2; device = d; link = fast; switch = s }}
wan a <-> c = wan
scheme x {{ {x} }}
scheme y {{ {y} }}
breakeven x vs y over b
"""


def numeric_check(sol, be):
    """Independent: brentq on lambdified T_x - T_y, and a scan for every sign change."""
    sx = sol.schemes[be.x].time_to_target.expr
    sy = sol.schemes[be.y].time_to_target.expr
    sym = sol.symbols[be.over]
    others = {s: v for s, v in sol.symbols.defaults().items() if s != sym}
    f = sp.lambdify((sym,), (sx - sy).xreplace(others), modules="numpy")
    lo, hi = be.result.lo, be.result.hi
    grid = np.geomspace(lo, hi, 4001)
    vals = np.array([float(f(v)) for v in grid])
    found = []
    for i in range(len(grid) - 1):
        if vals[i] == 0 or np.sign(vals[i]) != np.sign(vals[i + 1]):
            found.append(brentq(f, grid[i], grid[i + 1], xtol=1e-6, rtol=1e-15))
    symbolic = [r.value for r in be.result.roots]
    assert len(found) == len(symbolic), (found, symbolic)
    for a, s in zip(sorted(found), sorted(symbolic)):
        assert s == pytest.approx(a, rel=1e-9)
    return found


def test_hand_derived_root_and_sides(tmp_path):
    # x: dense hierarchical all-reduce, 100 steps. Below 20 GB/s the WAN binds its
    #   cross-DC phase: T_x = 0.06 + 2 (0.1 + 2 us) + 2 (12 us) + 2e9 / b  [s]
    # y: 2-bit quantised (D/8 = 0.25 GB), 400 steps:
    #   T_y = 0.06 + 2 (0.0125 + 2 us) + 2 (12 us) + 2.5e8 / b
    # b* = (n_x beta_x - n_y beta_y) / (n_y alpha_y - n_x alpha_x)     (domain.md 7)
    sol = solve_text(
        tmp_path,
        HEAD.format(
            x="payload = dense; collective = hier_allreduce; steps = 100",
            y="payload = quantise; bits = 2 b; collective = hier_allreduce; steps = 400",
        ),
    )
    (be,) = sol.breakevens
    alpha_x = 0.06 + 2 * (0.1 + 2e-6) + 2 * 12e-6
    alpha_y = 0.06 + 2 * (0.0125 + 2e-6) + 2 * 12e-6
    expected = (100 * 2e9 - 400 * 2.5e8) / (400 * alpha_y - 100 * alpha_x)
    (root,) = be.roots
    assert root.value == pytest.approx(expected, rel=1e-12)
    # n_x beta_x > n_y beta_y: y is faster below the root, x above
    assert (root.below, root.above) == ("y", "x")
    numeric_check(sol, be)


def test_root_is_exact_in_the_other_params(tmp_path):
    text = HEAD.replace("efficiency = 1", "efficiency = eff").replace(
        "param b", "param eff = 0.5 in 0.2 .. 1\nparam b"
    )
    sol = solve_text(
        tmp_path,
        text.format(
            x="payload = dense; collective = hier_allreduce; steps = 100",
            y="payload = quantise; bits = 2 b; collective = hier_allreduce; steps = 400",
        ),
    )
    (be,) = sol.breakevens
    (root,) = be.roots
    eff = sol.symbols["eff"]
    assert root.expr.free_symbols == {eff}
    # compute is 0.06 / eff: put eff = 0.5 and eff = 0.8 into the exact form
    for e in (0.5, 0.8):
        ax = 0.06 / e + 2 * (0.1 + 2e-6) + 2 * 12e-6
        ay = 0.06 / e + 2 * (0.0125 + 2e-6) + 2 * 12e-6
        want = (100 * 2e9 - 400 * 2.5e8) / (400 * ay - 100 * ax)
        assert float(root.expr.subs(eff, e)) == pytest.approx(want, rel=1e-12)


def test_equal_slopes_never_tie(tmp_path):
    # y syncs every 2 steps and needs twice the steps: n_y beta_y = n_x beta_x
    sol = solve_text(
        tmp_path,
        HEAD.format(
            x="payload = dense; collective = hier_allreduce; steps = 100",
            y="payload = dense; collective = hier_allreduce; period = 2; steps = 200",
        ),
    )
    (be,) = sol.breakevens
    assert be.roots == []
    assert be.result.reason.startswith("equal slopes")
    numeric_check(sol, be)


def test_one_scheme_slower_everywhere(tmp_path):
    sol = solve_text(
        tmp_path,
        HEAD.format(
            x="payload = dense; collective = hier_allreduce; steps = 100",
            y="payload = dense; collective = ring_allreduce; steps = 300",
        ),
    )
    (be,) = sol.breakevens
    assert be.roots == []
    assert be.result.faster_at_lo == be.result.faster_at_hi == "x"
    assert "never tie" in be.result.reason or "outside the range" in be.result.reason
    numeric_check(sol, be)


PAYLOADS = [
    "payload = dense",
    "payload = quantise; bits = 4 b",
    "payload = band; fraction = 1/8",
    "payload = topk; fraction = 1/32; index = 4 B",
]
COLLECTIVES = {
    "payload = dense": ["hier_allreduce", "ring_allreduce", "innet_sum"],
    "payload = quantise; bits = 4 b": ["hier_allreduce", "hier_allgather"],
    "payload = band; fraction = 1/8": ["hier_allreduce", "hier_allgather", "innet_sum", "allgather"],
    "payload = topk; fraction = 1/32; index = 4 B": ["hier_allgather", "allgather"],
}


@pytest.mark.parametrize("seed", range(12))
def test_random_pairs_agree_with_a_numeric_root_finder(tmp_path, seed):
    rnd = random.Random(seed)

    def scheme():
        p = rnd.choice(PAYLOADS)
        c = rnd.choice(COLLECTIVES[p])
        extra = f"; period = {rnd.choice([1, 1, 4])}; steps = {rnd.randint(80, 400)}"
        if rnd.random() < 0.3:
            extra += "; overlap = true"
        return f"{p}; collective = {c}{extra}"

    sol = solve_text(tmp_path, HEAD.format(x=scheme(), y=scheme()))
    (be,) = sol.breakevens
    numeric_check(sol, be)


def test_flagship_breakevens_agree_with_a_numeric_root_finder():
    sol = solve_file("specs/llama70b_wan.ct")
    assert sol.breakevens
    for be in sol.breakevens:
        numeric_check(sol, be)
    # the in-network band pays below about 89 GB/s against dense AdamW
    sw = next(b for b in sol.breakevens if b.x == "band_switch")
    (root,) = sw.roots
    assert 80e9 < root.value < 100e9
    assert (root.below, root.above) == ("band_switch", "adamw")
    assert math.isfinite(root.value)
