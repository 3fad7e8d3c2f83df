"""The SimPy model against the closed forms, and against identities that hold whatever
the queue does.

Statistical checks use independent replications (one seed each) and a Student-t
interval at a stated level; the level is chosen for a low false-alarm rate, not
tuned to the seeds. Deterministic checks compare to floating-point rounding.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy import stats

from ctdsl.api import load
from ctdsl.simulate import engine, tasks
from ctdsl.simulate.plan import QueuePlan, build_plans, free_spec
from ctdsl.simulate.runner import Settings, settings, simulate
from ctdsl.simulate.stats import Estimate, agrees, estimate, t_quantile

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 0.001  # per statistical test: a correct model fails one of these about once in a thousand runs
SEED = 20240611  # the base seed of these tests (any other works as well)


def _spec(rel: str, overrides=None):
    return load(ROOT / rel, overrides).spec


# ---- statistics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("df", [1, 2, 5, 9, 19, 100])
@pytest.mark.parametrize("p", [0.975, 0.995, 0.9995])
def test_t_quantile_matches_scipy(p, df):
    assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-12)


def test_estimate_interval_by_hand():
    e = estimate([1.0, 2.0, 3.0, 4.0])
    assert e.mean == 2.5 and e.sd == pytest.approx(math.sqrt(5 / 3))
    # t(0.975, 3) = 3.182446305284263
    assert e.half_width == pytest.approx(3.182446305284263 * math.sqrt(5 / 3) / 2, rel=1e-12)
    ok, t, crit = agrees(e, 2.5, 0.05)
    assert ok and t == 0.0


# ---- exact: no load, no jitter ------------------------------------------------------------------

SPECS = [
    "specs/llama70b_wan.ct",
    "examples/06_links.ct",
    "examples/07_pluggable.ct",
    "examples/09_three_dcs.ct",
    "examples/11_collectives.ct",
    "examples/12_diloco.ct",
    "examples/15_contention.ct",
]


@pytest.mark.parametrize("rel", SPECS)
def test_without_load_and_jitter_the_simulated_step_is_the_symbolic_one(rel):
    spec = _spec(rel)
    plans = build_plans(free_spec(spec))
    from ctdsl.symbolic.solve import solve

    sol = solve(free_spec(spec))  # the solver's own step times, through its own path
    for name, plan in plans.items():
        h = int(math.ceil(plan.period))
        r = tasks.simpy_run(plan)(plan, SEED, 0, steps=3 * h, warmup=h, load=False, jitter=False)  # step by step where it must be
        expected = sol.schemes[name].step_time.value
        # step by step the clock adds up every bucket of every step: rounding to 1e-9 (validate's tolerance)
        assert r.step == pytest.approx(expected, rel=1e-9 if plan.step_plan is not None else 1e-12, abs=0), name
        assert r.stragglers == 0 and (r.queueing is None or abs(r.queueing) <= 1e-12 * expected)


def test_overlap_without_load_is_the_max():
    spec = _spec("examples/11_collectives.ct")
    plans = build_plans(spec)
    overlapped = [p for p in plans.values() if p.overlap]
    for plan in overlapped:
        r = engine.run(plan, SEED, 0, 4, 0, load=False, jitter=False)
        assert r.step == pytest.approx(plan.free_step, rel=1e-12)


# ---- M/D/1 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8])
def test_link_queue_wait_is_pollaczek_khinchine(rho):
    S = 0.25
    q = QueuePlan(("a", "b"), "x", rho, S, 0.0)
    waits = [engine.md1_run(q, SEED, k, 15_000, 3_000)[0] for k in range(12)]
    ok, t, crit = agrees(estimate(waits), rho * S / (2 * (1 - rho)), ALPHA)
    assert ok, (t, crit)


# ---- stragglers ------------------------------------------------------------------------------------


def _jittered(rel: str):
    """The spec without load; with the spec's own jitter."""
    spec = _spec(rel)
    import dataclasses

    free = free_spec(spec)
    dcs = {k: dataclasses.replace(free.dcs[k], jitter=d.jitter, jitter_kind=d.jitter_kind, jitter_sigma=d.jitter_sigma) for k, d in spec.dcs.items()}
    return dataclasses.replace(free, dcs=dcs)


@pytest.mark.parametrize("scheme", ["adamw", "diloco"])
def test_slowest_worker_matches_the_closed_form(scheme):
    # 8 workers with 200 ms x Exp(1): H = 1 gives 0.2 H_8 (exact); H = 10 is numerically integrated
    plan = build_plans(_jittered("examples/15_contention.ct"), [scheme])[scheme]
    expected = {"adamw": 0.2 * 761 / 280}.get(scheme, plan.stragglers)
    assert plan.stragglers == pytest.approx(expected, rel=1e-12)
    rounds = 1500
    vals = [engine.run(plan, SEED, k, rounds * int(plan.period), 0, load=False).stragglers for k in range(12)]
    ok, t, crit = agrees(estimate(vals), plan.stragglers, ALPHA)
    assert ok, (t, crit)


def test_unlike_dcs_match_the_integrated_closed_form(tmp_path):
    # east: 200 ms x Exp(1); west: 600 ms x U(0, 1): no closed form, integrated numerically
    text = (ROOT / "examples" / "15_contention.ct").read_text(encoding="utf-8")
    text = text.replace("dc west : east {}", "dc west : east { jitter = 600 ms; jitter_kind = uniform }")
    path = tmp_path / "unlike.ct"
    path.write_text(text, encoding="utf-8")
    import dataclasses

    spec = load(path).spec
    free = free_spec(spec)
    dcs = {k: dataclasses.replace(free.dcs[k], jitter=d.jitter, jitter_kind=d.jitter_kind) for k, d in spec.dcs.items()}
    plan = build_plans(dataclasses.replace(free, dcs=dcs), ["adamw"])["adamw"]
    assert plan.closed_forms[0].status == "numerically integrated"
    vals = [engine.run(plan, SEED, k, 1500, 0, load=False).stragglers for k in range(12)]
    ok, t, crit = agrees(estimate(vals), plan.stragglers, ALPHA)
    assert ok, (t, crit)


# ---- identities under load ----------------------------------------------------------------------------


def test_utilisation_is_background_plus_sync_share():
    """Work conservation: a stable link serves all its background, rho of the time in the long run,
    plus the sync's bytes; so utilisation = rho + sync busy per step / step, whatever the queueing."""
    spec = _spec("examples/15_contention.ct")
    res = simulate(spec, Settings(steps=150, seeds=10, warmup=20, seed=SEED), names=["two_bit"])
    s = res.schemes["two_bit"]
    busy = s.plan.costs.queues
    from ctdsl.symbolic.convert import Symbols, value

    env = Symbols(spec).defaults()
    for link in s.links:
        share = value(busy[link.edge].busy, env)
        per_seed = [link.rho + share / r.step for r in s.runs]
        diffs = [r.links[[l.edge for l in r.links].index(link.edge)].utilisation - x for r, x in zip(s.runs, per_seed)]
        ok, t, crit = agrees(estimate(diffs), 0.0, ALPHA)
        assert ok, (link.edge, t, crit)


def test_a_loaded_link_bounds_the_step_from_below():
    # AdamW's buckets put 141.1 GB a step on the WAN at 12.5 GB/s, 11.29 s, of which only the 10% the
    # background leaves is free: in the long run a step takes at least 11.29 s / (1 - 0.9)
    spec = _spec("specs/llama70b_wan.ct", {"wan_load": "0.9"})
    res = simulate(spec, Settings(steps=4, seeds=3, warmup=1, seed=SEED), names=["adamw"], jitter=False)
    s = res.schemes["adamw"]
    bound = 141104775168.0 / 12.5e9 / 0.1
    # the simulated step cannot beat the throughput bound (one-sided, at the interval's top)
    assert s.step.interval[1] >= bound and s.step.mean > 2 * s.plan.free_step


def test_no_load_at_the_defaults_means_no_queues():
    spec = _spec("specs/llama70b_wan.ct")  # wan_load = 0
    plans = build_plans(spec)
    assert all(not p.queues for p in plans.values())


# ---- determinism and settings ------------------------------------------------------------------------


def test_same_seed_same_numbers_other_seed_other_numbers():
    spec = _spec("examples/15_contention.ct")
    cfg = Settings(steps=20, seeds=3, warmup=2, seed=7)
    a = simulate(spec, cfg, names=["adamw"]).schemes["adamw"]
    b = simulate(spec, cfg, names=["adamw"]).schemes["adamw"]
    c = simulate(spec, Settings(20, 3, 2, seed=8), names=["adamw"]).schemes["adamw"]
    assert [r.step for r in a.runs] == [r.step for r in b.runs]
    assert [r.events for r in a.runs] == [r.events for r in b.runs]
    assert [r.step for r in a.runs] != [r.step for r in c.runs]


def test_common_random_numbers_across_schemes():
    spec = _spec("examples/15_contention.ct")
    res = simulate(spec, Settings(steps=20, seeds=2, warmup=0, seed=3), names=["adamw", "two_bit"], load=False)
    # without load, both schemes see the same jitter draws, so the same stragglers
    assert [r.stragglers for r in res.schemes["adamw"].runs] == [r.stragglers for r in res.schemes["two_bit"].runs]


def test_settings_precedence():
    spec = _spec("examples/15_contention.ct")
    assert settings(spec) == Settings(200, 10, 20, 0)
    assert settings(spec, steps=5, seeds=3) == Settings(5, 3, 20, 0)
    nosim = _spec("examples/06_links.ct")
    assert settings(nosim) == Settings(100, 10, 10, 0)


def test_round_lengths():
    assert engine.round_lengths(1, 2, 3) == ([1] * 5, 2)
    assert engine.round_lengths(10, 5, 25) == ([10] * 4, 1)
    lengths, warm = engine.round_lengths(2.5, 0, 10)
    assert lengths == [2, 3, 2, 3] and warm == 0


def test_estimate_scaled():
    e = Estimate(2.0, 0.5, 5)
    assert e.scaled(3).mean == 6 and e.scaled(3).sd == 1.5
