"""Design search (`search` statements, `ctdsl search`) against brute force and an independent root finder.

Every expected value comes from outside the search: `Study.solve(overrides)` at
each point (the solver's own evaluation of its exact forms, not the search's
compiled ones), scipy's brentq on those solved values, and hand-derived
intervals. Tolerances are stated where they are used.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
import sympy as sp
from scipy.optimize import brentq
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.failure import Failure
from ctdsl.numeric.search import run_search
from ctdsl.numeric.search_bounds import interval

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "18_codesign_search.ct"
runner = CliRunner()

# Two sites over a rented WAN of rate bw; the device's efficiency eff is bought: a
# GPU-hour costs eff x 4 USD. Compute per step is 6 x 1e9 x 1e5 FLOP / (100 TFLOP/s x eff)
# = 6 / eff s, so a deadline trades WAN rate against efficiency.
SPEC = """
param bw = 1 GB/s in 0.1 GB/s .. 100 GB/s log 5
param eff = 0.5 in 0.2 .. 0.9 lin 3
model m { params = 1e9; bytes_per_value = 2 B; tokens = 100000 }
device d { peak = 100 TFLOP/s; efficiency = eff; price = eff * 4 USD/h; static_power = 500 W }
link lan { bandwidth = 10 GB/s; latency = 1 us }
link wan { bandwidth = bw; latency = 10 us; price = 1000 USD/month / 1 Gb/s }
switch s {}
dc east { workers = 2; device = d; link = lan; switch = s; power_price = 0.1 USD/kWh }
dc west : east {}
wan east <-> west = wan
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
scheme two_bit { payload = quantise; bits = 2 b; collective = hier_allreduce; steps = 1400 }
"""
GB = 1e9
HOUR = 3600.0


def _write(tmp_path: Path, search: str) -> Path:
    path = tmp_path / "spec.ct"
    path.write_text(SPEC + search + "\n", encoding="utf-8")
    return path


def _solved(study, bw: float, eff: float) -> dict[str, dict[str, float]]:
    """Each scheme's time (s), cost (USD) and mean power (W) to target, from the solver at (bw, eff)."""
    sol = study.solve({"bw": f"{bw!r} B/s", "eff": repr(eff)})
    out = {}
    for name, r in sol.schemes.items():
        t, e = r.time_to_target.value, r.energy_to_target.value
        out[name] = {"time": t, "cost": r.cost_to_target.value, "energy": e, "power": e / t}
    return out


def _axis(lo: float, hi: float, n: int, log: bool) -> list[float]:
    if log:
        return [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def test_optimum_matches_brute_force_on_a_fine_grid(tmp_path):
    """minimise cost within a 2 h deadline: the search (grid 5 x 3, then refined) is no worse than the best
    feasible point of a 13 x 8 grid solved point by point, and that best is at most 1e-6 worse than the
    search's optimum plus what one cell of the fine grid can hide (the optimum sits on the deadline)."""
    path = _write(tmp_path, "search s { minimise = cost; over = [bw, eff]; deadline = 2 h }")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    best = None
    for bw, eff in itertools.product(_axis(0.1 * GB, 100 * GB, 13, True), _axis(0.2, 0.9, 8, False)):
        for name, q in _solved(study, bw, eff).items():
            if q["time"] <= 2 * HOUR * (1 + 1e-9) and (best is None or q["cost"] < best[0]):
                best = (q["cost"], name, bw, eff)
    opt = res.optimum
    assert opt.choice == best[1] == "dense"
    assert opt.objective <= best[0] * (1 + 1e-9)
    # the optimum itself, solved independently: feasible and of the cost the search reports
    got = _solved(study, dict(opt.params)["bw"], dict(opt.params)["eff"])[opt.choice]
    assert got["time"] <= 2 * HOUR * (1 + 1e-6)
    assert math.isclose(got["cost"], opt.objective, rel_tol=1e-9)
    # refinement gains over the fine grid: at most the cost change across one fine cell (bw x 10^(3/12))
    assert best[0] <= opt.objective * 10 ** (3 / 12)


def test_binding_deadline_is_where_time_equals_it_by_brentq(tmp_path):
    """With eff fixed (not searched), cost falls as bw falls (less rent) until the deadline: the optimum is the
    bw at which dense's time to target is exactly 4 h (compute alone is 1000 x 12 s = 3.33 h at eff = 0.5).
    brentq on solve's time finds it independently."""
    path = _write(tmp_path, "search s { minimise = cost; over = [bw]; choose = [dense]; deadline = 4 h }")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    assert res.binding == ("deadline",)
    bw_star = dict(res.optimum.params)["bw"]

    def excess(log_bw: float) -> float:
        return _solved(study, math.exp(log_bw), 0.5)["dense"]["time"] - 4 * HOUR

    root = math.exp(brentq(excess, math.log(0.1 * GB), math.log(100 * GB), xtol=1e-12, rtol=1e-12))
    assert math.isclose(bw_star, root, rel_tol=1e-6)
    assert math.isclose(res.optimum.quantity("time"), 4 * HOUR, rel_tol=1e-6)
    assert res.at_ends == ()


def test_budget_binds_for_the_fastest(tmp_path):
    """minimise time within a budget: time falls with bw, cost rises with it at the top of the range, so the
    budget binds; the optimum's cost (solved independently) is the budget."""
    path = _write(tmp_path, "search s { minimise = time; over = [bw]; choose = [dense]; budget = 200 USD }")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    assert res.binding == ("budget",)
    got = _solved(study, dict(res.optimum.params)["bw"], 0.5)["dense"]
    assert math.isclose(got["cost"], 200.0, rel_tol=1e-6)


@pytest.mark.parametrize("axes", [("time", "cost"), ("time", "cost", "energy")])
def test_pareto_front_is_non_dominated_by_brute_force(tmp_path, axes):
    path = _write(tmp_path, f"search s {{ minimise = cost; over = [bw, eff]; pareto = [{', '.join(axes)}] }}")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    points = []  # every grid point of every choice, solved: (choice, bw, eff, values on the axes)
    for bw, eff in itertools.product(_axis(0.1 * GB, 100 * GB, 5, True), _axis(0.2, 0.9, 3, False)):
        for name, q in _solved(study, bw, eff).items():
            points.append((name, bw, eff, tuple(q[a] for a in axes)))

    def dominated(v):
        return any(all(b <= a * (1 + 1e-12) for a, b in zip(v, w)) and any(b < a * (1 - 1e-9) for a, b in zip(v, w)) for _, _, _, w in points)

    front = {(p.choice, round(dict(p.params)["bw"] / GB, 9), round(dict(p.params)["eff"], 9)) for p in res.pareto}
    expected = {(n, round(bw / GB, 9), round(eff, 9)) for n, bw, eff, v in points if not dominated(v)}
    assert front == expected and len(front) >= 2
    for p in res.pareto:  # the front's values are the solver's
        got = _solved(study, dict(p.params)["bw"], dict(p.params)["eff"])[p.choice]
        assert math.isclose(p.quantity("cost"), got["cost"], rel_tol=1e-9)


def test_pruned_choice_cannot_beat_the_optimum(tmp_path):
    """minimise time: two_bit's interval bound is above dense's optimum, so it is pruned; brute force on the
    grid confirms the bound is below two_bit's true times (sound) and two_bit never beats the optimum."""
    path = _write(tmp_path, "search s { minimise = time; over = [bw, eff] }")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    status = {c.choice: c for c in res.choices}
    assert status["dense"].status == "optimum" and status["two_bit"].status == "pruned"
    times = [_solved(study, bw, eff)["two_bit"]["time"] for bw, eff in itertools.product(_axis(0.1 * GB, 100 * GB, 9, True), _axis(0.2, 0.9, 5, False))]
    assert status["two_bit"].bound <= min(times) * (1 + 1e-12)
    assert min(times) > res.optimum.objective


def test_interval_bound_by_hand():
    """Max(a, 1/b) + a b over a in [1, 2], b in [0.5, 4]: Max of [1, 2] and [0.25, 2] is [1, 2]; a b is
    [0.5, 8]; the sum is [1.5, 10]. ceiling(a / b) is ceil of [0.25, 4] = [1, 4]."""
    a, b = sp.symbols("a b", positive=True)
    box = {a: (1.0, 2.0), b: (0.5, 4.0)}
    assert interval(sp.Max(a, 1 / b) + a * b, box) == (1.5, 10.0)
    assert interval(sp.ceiling(a / b), box) == (1.0, 4.0)
    assert interval(sp.Function("f")(a), box) == (-math.inf, math.inf)  # unknown: no bound, never a wrong one


def test_infeasible_search_is_ct703_exit_1(tmp_path):
    # the fastest compute alone is 1000 x 6 / 0.9 s = 1.85 h: no point meets 1 h
    path = _write(tmp_path, "search s { minimise = cost; over = [bw, eff]; deadline = 1 h }")
    r = runner.invoke(app, ["search", str(path)])
    assert r.exit_code == 1
    assert "CT703 search 's': no choice meets deadline at any point of the grid" in r.stderr
    assert f"{path}:" in r.stderr
    study = ctdsl.load(path)
    with pytest.raises(Failure):
        run_search(study.solve(), study.spec.searches[0])


def test_memory_fit_constraint(tmp_path):
    """A 1e9-parameter model needs 16 B a parameter with Adam (16 GB) per GPU; a 10 GB device cannot hold it."""
    spec = SPEC.replace("static_power = 500 W }", "static_power = 500 W; memory = 10 GB }")
    path = tmp_path / "spec.ct"
    path.write_text(spec + "search s { minimise = cost; over = [bw]; memory = true }\n", encoding="utf-8")
    r = runner.invoke(app, ["search", str(path)])
    assert r.exit_code == 1 and "CT703" in r.stderr and "memory" in r.stderr
    path.write_text(spec.replace("memory = 10 GB", "memory = 80 GB") + "search s { minimise = cost; over = [bw]; memory = true }\n", encoding="utf-8")
    assert runner.invoke(app, ["search", str(path)]).exit_code == 0


def test_example_json_and_plot(tmp_path):
    r = runner.invoke(app, ["search", str(EXAMPLE), "--format", "json", "--plot", str(tmp_path / "f.png")])
    assert r.exit_code == 0, r.stderr
    data = {s["name"]: s for s in json.loads(r.stdout)["searches"]}
    assert (tmp_path / "f.png").stat().st_size > 0
    cheapest = data["cheapest"]
    assert cheapest["optimum"]["choice"] == "demo" and cheapest["binding"] == ["deadline"]
    assert math.isclose(cheapest["optimum"]["quantities"]["time"], 3 * 24 * HOUR, rel_tol=1e-6)
    # docs/codesign.md, "The example": about 1.54 GB/s; the band schemes cannot finish in three days
    assert round(cheapest["optimum"]["params"]["wan_bw"] / 1e7) == 154
    assert {c["choice"]: c["status"] for c in cheapest["choices"]}["band_module"] == "infeasible"
    fast = next(c for c in cheapest["choices"] if c["choice"] == "band_fast")
    assert fast["status"] == "feasible" and round(fast["best"]["params"]["wan_bw"] / 1e9) == 100
    assert round(fast["best"]["objective"] / 1e3) == 159
    optics = {c["choice"]: c["best"]["objective"] for c in data["optics"]["choices"]}
    assert data["optics"]["optimum"]["choice"] == "band_fast"
    assert (round(optics["band_fast"] / 100), round(optics["band_module"] / 100)) == (88, 145)
    fastest = data["fastest"]
    assert fastest["optimum"]["choice"] == "demo" and fastest["binding"] == ["budget"]
    assert [c["status"] for c in fastest["choices"]] == ["optimum", "pruned", "pruned", "pruned"]
    again = runner.invoke(app, ["search", str(EXAMPLE), "--format", "json"])
    assert again.stdout == r.stdout  # deterministic


def test_no_search_is_a_usage_error(tmp_path):
    path = _write(tmp_path, "")
    r = runner.invoke(app, ["search", str(path)])
    assert r.exit_code == 2 and "has no search statement" in r.stderr


def test_weighted_sum_against_brute_force(tmp_path):
    """minimise cost + 100 USD/h x time (100 USD/h = 1/36 USD/s): no point of a 13 x 8 grid, solved
    point by point and weighted by hand, beats the search's optimum, whose value is that weighting of the
    solver's cost and time there."""
    path = _write(tmp_path, "search s { minimise = cost + 100 USD/h * time; over = [bw, eff] }")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    w = 100 / 3600  # USD per second
    best = min(
        (q["cost"] + w * q["time"], name)
        for bw, eff in itertools.product(_axis(0.1 * GB, 100 * GB, 13, True), _axis(0.2, 0.9, 8, False))
        for name, q in _solved(study, bw, eff).items()
    )
    opt = res.optimum
    got = _solved(study, dict(opt.params)["bw"], dict(opt.params)["eff"])[opt.choice]
    assert math.isclose(opt.objective, got["cost"] + w * got["time"], rel_tol=1e-9)
    assert opt.objective <= best[0] * (1 + 1e-9)


def test_maximise_is_minimise_of_the_negation(tmp_path):
    """maximise = -cost and minimise = cost pick the same point, with objectives of opposite sign."""
    a = _write(tmp_path, "search s { minimise = cost; over = [bw]; deadline = 4 h }")
    study = ctdsl.load(a)
    lo = run_search(study.solve(), study.spec.searches[0])
    b = _write(tmp_path, "search s { maximise = -cost; over = [bw]; deadline = 4 h }")
    study = ctdsl.load(b)
    hi = run_search(study.solve(), study.spec.searches[0])
    assert hi.optimum.params == lo.optimum.params and hi.optimum.choice == lo.optimum.choice
    assert hi.optimum.objective == -lo.optimum.objective


def test_plot_is_the_same_bytes_each_run(tmp_path):
    for name in ("a.png", "b.png"):
        r = runner.invoke(app, ["search", str(EXAMPLE), "--name", "cheapest", "--plot", str(tmp_path / name)])
        assert r.exit_code == 0, r.stderr
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_a_param_a_choice_does_not_depend_on_is_left_out_of_its_points(tmp_path):
    """q sets only two_bit's steps: dense, solved at two values of q, does not change, so its points carry bw
    alone and q is never one of its range ends; two_bit's carry both."""
    spec = SPEC.replace("steps = 1400", "steps = q").replace("param eff", "param q = 1400 in 1000 .. 3000 lin 3\nparam eff")
    path = tmp_path / "spec.ct"
    path.write_text(spec + "search s { minimise = cost; over = [bw, q]; deadline = 4 h; pareto = [time, cost] }\n", encoding="utf-8")
    study = ctdsl.load(path)
    a, b = (study.solve({"q": v}).schemes["dense"] for v in ("1000", "3000"))
    assert a.cost_to_target.value == b.cost_to_target.value and a.time_to_target.value == b.time_to_target.value
    res = run_search(study.solve(), study.spec.searches[0])
    points = {c.choice: c.best for c in res.choices}
    assert [n for n, _ in points["dense"].params] == ["bw"]
    assert [n for n, _ in points["two_bit"].params] == ["bw", "q"]
    assert all(n == "bw" for p in res.pareto if p.choice == "dense" for n, _ in p.params)
    assert res.optimum.choice == "two_bit" and res.at_ends == (("q", "low"),)  # fewer steps cost less
    # with dense alone, q is at no end: it does not move dense (before, it showed at its first grid point, the low end)
    path.write_text(spec + "search s { minimise = cost; over = [bw, q]; choose = [dense]; deadline = 4 h }\n", encoding="utf-8")
    study = ctdsl.load(path)
    res = run_search(study.solve(), study.spec.searches[0])
    assert res.optimum.choice == "dense" and [n for n, _ in res.optimum.params] == ["bw"]
    assert all(n != "q" for n, _ in res.at_ends)
