"""Break-even roots: against hand-derived values and an independent numeric root-finder.

Every symbolic root is checked against scipy's brentq on the lambdified
time-to-target expressions (to 1e-9 relative), and every sign change that a fine
numeric scan of the range finds must be one of the symbolic roots, so a missed
regime fails the test.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

import ctdsl
from solvekit import ROOT, solve_file, solve_text

# the links are counted per hop: the derivations below charge every edge its latency
HEAD = """
param b = 5 GB/s in 1 GB/s .. 100 GB/s log 20
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device d {{ peak = 100 TFLOP/s; efficiency = 1 }}
link fast {{ bandwidth = 10 GB/s; counted = hop; latency = 1 us }}
link wan {{ bandwidth = b; counted = hop; latency = 10 us }}
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


def _example_variant(tmp_path, name: str, old: str, new: str):
    """examples/NAME with its one `old` replaced by `new`, written to tmp_path."""
    text = (ROOT / "examples" / name).read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _record(monkeypatch, module, name: str, keep) -> list:
    """Wrap module.name so that keep(its result) is appended to the list returned."""
    seen, real = [], getattr(module, name)

    def spy(*a, **k):
        out = real(*a, **k)
        seen.append(keep(out))
        return out

    monkeypatch.setattr(module, name, spy)
    return seen


def _refuse(monkeypatch, module, name: str, why: str) -> None:
    def refuse(*a, **k):
        raise AssertionError(why)

    monkeypatch.setattr(module, name, refuse)


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
    # the in-network band pays below about 80 GB/s against dense AdamW (89 GB/s at line rate; the
    # presets' link efficiencies, docs/cost-model.md "Collectives over nodes", move it)
    sw = next(b for b in sol.breakevens if b.x == "band_switch")
    (root,) = sw.roots
    assert 70e9 < root.value < 90e9
    assert (root.below, root.above) == ("band_switch", "adamw")
    assert math.isfinite(root.value)


# ---- where sympy gives up: bracketed numeric roots ---------------------------------------
#
# With the WAN latency a function of b that sympy cannot solve for (log2, ceil), or
# that makes the numerator's degree 5, each regime's equation has no exact roots:
# the scan and Brent's method find them, marked numeric. numeric_check (brentq on
# the lambdified difference, a 4001-point scan) is the independent check.

NUMERIC_LATENCIES = {
    "log2": "log2(b / (1 GB/s)) * 10 ms",
    "ceil": "ceil(b / (7 GB/s)) * 10 ms",
    "degree5": "(b / (10 GB/s))^4 * 10 ms",
}
DENSE_100 = "payload = dense; collective = hier_allreduce; steps = 100"
TWO_BIT_400 = "payload = quantise; bits = 2 b; collective = hier_allreduce; steps = 400"


def with_latency(lat: str) -> str:
    return HEAD.replace("latency = 10 us", f"latency = {lat}")


@pytest.mark.parametrize("kind", sorted(NUMERIC_LATENCIES))
def test_numeric_root_where_sympy_cannot_solve(tmp_path, kind):
    sol = solve_text(tmp_path, with_latency(NUMERIC_LATENCIES[kind]).format(x=DENSE_100, y=TWO_BIT_400))
    (be,) = sol.breakevens
    (root,) = be.roots
    assert root.numeric
    assert (root.below, root.above) == ("y", "x")
    numeric_check(sol, be)  # the value against brentq, to 1e-9
    # the root is bracketed: the difference changes sign across it
    sx = sol.schemes["x"].time_to_target.expr
    sy = sol.schemes["y"].time_to_target.expr
    b = sol.symbols["b"]
    others = {s: v for s, v in sol.symbols.defaults().items() if s != b}
    f = sp.lambdify((b,), (sx - sy).xreplace(others), modules="numpy")
    assert f(root.value * (1 - 1e-6)) > 0 > f(root.value * (1 + 1e-6))


def test_ceil_root_is_where_the_step_jumps(tmp_path):
    # the WAN latency steps from 10 ms to 20 ms where b passes 7 GB/s; y crosses the WAN 4x as
    # often as x, so there y's time jumps past x's: the difference changes sign by a jump
    sol = solve_text(tmp_path, with_latency(NUMERIC_LATENCIES["ceil"]).format(x=DENSE_100, y=TWO_BIT_400))
    (root,) = sol.breakevens[0].roots
    assert root.value == pytest.approx(7e9, rel=1e-9)


# seeds whose pairs tie once or twice in the range (most random pairs never do), and two that never tie
NUMERIC_SEEDS = (0, 1, 6, 8, 10, 36, 42, 44, 45, 52)


@pytest.mark.parametrize("kind", sorted(NUMERIC_LATENCIES))
@pytest.mark.parametrize("seed", NUMERIC_SEEDS)
def test_random_pairs_with_numeric_roots_agree_with_brentq(tmp_path, kind, seed):
    rnd = random.Random(seed)

    def scheme():
        p = rnd.choice(PAYLOADS)
        c = rnd.choice(COLLECTIVES[p])
        return f"{p}; collective = {c}; period = {rnd.choice([1, 1, 4])}; steps = {rnd.randint(80, 400)}"

    sol = solve_text(tmp_path, with_latency(NUMERIC_LATENCIES[kind]).format(x=scheme(), y=scheme()))
    (be,) = sol.breakevens
    numeric_check(sol, be)


def test_numeric_root_in_json_and_latex(tmp_path):
    from typer.testing import CliRunner

    from ctdsl.cli import app

    path = tmp_path / "spec.ct"
    path.write_text(with_latency(NUMERIC_LATENCIES["log2"]).format(x=DENSE_100, y=TWO_BIT_400), encoding="utf-8")
    r = CliRunner().invoke(app, ["solve", str(path), "--format", "json"])
    (root,) = json.loads(r.stdout)["breakevens"][0]["roots"]
    assert root["numeric"] is True
    assert float(root["expression"]) == root["value"]  # no exact form: the value itself, every digit
    tex = CliRunner().invoke(app, ["export", "latex", str(path)]).stdout
    assert "b^{*} &\\approx \\qty{4.681}{\\giga\\byte\\per\\second}" in tex and "numeric root" in tex
    exact = json.loads(CliRunner().invoke(app, ["solve", str(ROOT / "specs" / "llama70b_wan.ct"), "-f", "json"]).stdout)
    flags = [r["numeric"] for b in exact["breakevens"] for r in b["roots"]]
    assert flags and not any(flags)  # the flagship's break-evens are all exact roots (three of them)


# ---- every answer checked: a root sympy missed, a root that is not one -------------------


def _hand(tmp_path):
    # the hand-derived pair of test_hand_derived_root_and_sides: one root, b* below
    alpha_x = 0.06 + 2 * (0.1 + 2e-6) + 2 * 12e-6
    alpha_y = 0.06 + 2 * (0.0125 + 2e-6) + 2 * 12e-6
    expected = (100 * 2e9 - 400 * 2.5e8) / (400 * alpha_y - 100 * alpha_x)
    return HEAD.format(x=DENSE_100, y=TWO_BIT_400), expected


def test_a_root_the_exact_solver_misses_is_found_by_the_scan(tmp_path, monkeypatch):
    # the exact solver claims, wrongly, that no regime has a root: "never" must not be believed
    import ctdsl.symbolic.breakeven as B

    monkeypatch.setattr(B, "exact_roots", lambda diff, b, back, env, **_: ([], 1, True))
    text, expected = _hand(tmp_path)
    (be,) = solve_text(tmp_path, text).breakevens
    (root,) = be.roots
    assert root.numeric and root.value == pytest.approx(expected, rel=1e-12)
    assert (root.below, root.above) == ("y", "x")
    assert root.regime == ["wan a.s -> c.s binds"]


def test_a_wrong_exact_root_is_dropped(tmp_path, monkeypatch):
    # the exact solver returns twice the true root (inside the range): no sign change there,
    # so it is dropped, and the scan finds the true one
    import ctdsl.symbolic.breakeven as B

    text, expected = _hand(tmp_path)
    monkeypatch.setattr(B, "exact_roots", lambda diff, b, back, env, **_: ([sp.Float(2 * expected)], 1, True))
    (be,) = solve_text(tmp_path, text).breakevens
    (root,) = be.roots
    assert root.numeric and root.value == pytest.approx(expected, rel=1e-12)


def test_exact_roots_are_kept_exact(tmp_path):
    text, expected = _hand(tmp_path)
    (be,) = solve_text(tmp_path, text).breakevens
    (root,) = be.roots
    assert not root.numeric and root.expr == sp.Rational(250000000000000, 20021)
    assert root.value == pytest.approx(expected, rel=1e-12)


def test_quadratic_break_evens_by_the_formula_agree_with_brentq(tmp_path, monkeypatch):
    """examples/20_codesign_study.ct with ZeRO-3 (a variant the fuzz campaign found slow): its money
    break-evens are quadratic in the param. Their roots come from the quadratic formula, not from
    sympy's roots (whose simplify and factor took most of the solve), and agree with brentq on the
    costs to target; a root larger than MAX_TIDY_NODES, or with a square root, is given as solved."""
    from ctdsl.symbolic import breakeven as B

    path = _example_variant(tmp_path, "20_codesign_study.ct", "zero = 1", "zero = 3")
    degrees = _record(monkeypatch, B, "exact_roots", lambda out: out[1])
    _refuse(monkeypatch, sp, "roots", "sympy's roots was asked for a quadratic")
    sol = ctdsl.load(path).solve()
    assert 2 in degrees
    roots = [r for be in sol.breakevens for r in be.result.roots]
    assert roots and not any(r.numeric for r in roots)
    for be in sol.breakevens:  # on cost: brentq on the difference of the two costs to target
        if not be.result.roots:
            continue
        sym = sol.symbols[be.over]
        others = {s: v for s, v in sol.symbols.defaults().items() if s != sym}
        diff = (sol.schemes[be.x].cost_to_target.expr - sol.schemes[be.y].cost_to_target.expr).xreplace(others)
        f = sp.lambdify((sym,), diff, modules="math")
        grid = np.geomspace(be.result.lo, be.result.hi, 2001)
        vals = [f(v) for v in grid]
        found = [brentq(f, grid[i], grid[i + 1], xtol=1e-9, rtol=1e-15) for i in range(len(grid) - 1) if np.sign(vals[i]) != np.sign(vals[i + 1])]
        assert sorted(r.value for r in be.result.roots) == pytest.approx(sorted(found), rel=1e-9)
    sizes = {id(r): sum(1 for _ in sp.preorder_traversal(r.raw)) for r in roots}
    radical = {id(r): any(p.exp == sp.Rational(1, 2) for p in r.raw.atoms(sp.Pow)) for r in roots}
    assert any(radical.values()) and not all(radical.values())
    assert any(n > B.MAX_TIDY_NODES for n in sizes.values())
    for r in roots:  # a quadratic's root, or one over the bound, as solved; the others cancelled
        if sizes[id(r)] > B.MAX_TIDY_NODES or radical[id(r)]:
            assert r.expr is r.raw
        else:
            assert r.expr == sp.cancel(r.raw)


def test_a_break_even_of_many_regime_pairs_is_solved_numerically(tmp_path, monkeypatch):
    """examples/20_sites.ct with as many replicas a site as sites (a case the fuzz campaign found at
    16 CPU-seconds): n_sites enters every max squared, and the break-even over it splits into more
    than MAX_EXACT_PAIRS regime pairs. No pair is solved exactly; the scan and Brent's method find
    the root, marked numeric, and it agrees with brentq on the times to target (numeric_check)."""
    from ctdsl.symbolic import breakeven as B

    path = _example_variant(tmp_path, "20_sites.ct", "replicas = 32 ", "replicas = n_sites ")
    pairs = _record(monkeypatch, B, "_candidates", lambda out: len(out[0]))
    _refuse(monkeypatch, B, "exact_roots", "a pair was solved exactly")
    sol = ctdsl.load(path).solve()
    (be,) = sol.breakevens
    assert pairs[0] > B.MAX_EXACT_PAIRS
    assert be.result.roots and all(r.numeric for r in be.result.roots)
    numeric_check(sol, be)
