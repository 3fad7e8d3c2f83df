"""Closed forms for contention and stragglers in the symbolic back end.

Expected values come from outside the code under test: numbers derived by hand
here, and scipy's quadrature over scipy's distributions as an independent
method for the integrals. Where a check is statistical (a Monte Carlo estimate),
it uses a confidence interval from the samples, not a fixed tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, stats

from ctdsl.language.components import ComponentId, ComponentKey
from ctdsl.symbolic import stragglers as ST
from ctdsl import units as U
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic.queueing import burst_wait, fair_burst_wait, md1_wait
from solvekit import solve_file, solve_text

QUEUEING = ComponentId(ComponentKey.QUEUEING, "shared")
STRAGGLERS = ComponentId(ComponentKey.STRAGGLERS)

SPEC = """\
import std.devices
import std.links
import std.models
model job : llama3_8b {{ tokens = 8192 }}
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{}}
link shared {{ bandwidth = 10 GB/s; latency = 1 ms; sharing = fifo; {link} }}
dc east {{
  workers = 4
  device = gpu0
  link = ib_ndr
  switch = tor
  {dc}
}}
dc west : east {{ {west} }}
wan east <-> west = shared
scheme dense {{ payload = dense; collective = hier_allreduce; steps = 100; {scheme} }}
scheme gather {{ payload = dense; collective = hier_allgather; steps = 100 }}
"""


def solve(tmp_path, link="", dc="", west="", scheme=""):
    return solve_text(tmp_path, SPEC.format(link=link, dc=dc, west=west, scheme=scheme))


# ---- queueing -------------------------------------------------------------------------------


def test_md1_formula():
    rho, s = sp.symbols("rho s", positive=True)
    assert sp.simplify(md1_wait(rho, s) - rho * s / (2 * (1 - rho))) == 0
    # at rho = 0.5 a newcomer waits half a service time on average
    assert md1_wait(sp.Rational(1, 2), sp.Integer(1)) == sp.Rational(1, 2)


def test_queueing_wait_paid_per_step_of_the_phase_that_crosses_the_loaded_link(tmp_path):
    free = solve(tmp_path)
    loaded = solve(tmp_path, link="load = 0.6; transfer = 2 GB")
    r0, r = free.schemes["dense"], loaded.schemes["dense"]
    # by hand: S = 2 GB / 10 GB/s = 0.2 s; W = 0.6 x 0.2 / (2 x 0.4) = 0.15 s.
    # hier_allreduce over 2 dcs crosses the WAN in 2(N_dc - 1) = 2 steps, back to back: a burst
    # of two jobs. Each step puts the 4 workers' shards of 1/8 of the dense gradient on the WAN:
    # Llama 3 8B untied, no norms: 32 (2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336)
    # + 2 x 128256 x 4096 = 8,029,995,008 values of 2 B; 4 x 2 x 8,029,995,008 / 8 B at 10 GB/s:
    x = 8_029_995_008 / 10e9  # 0.803 s
    # the first job waits W, the second the background that came while the first was queued:
    # rho (W + x) on average
    q = 0.15 + 0.6 * (0.15 + x)  # 0.7218 s (the M/D/1 wait per step would say 2 W = 0.3 s)
    assert r.components[QUEUEING].value == pytest.approx(q, rel=1e-12)
    assert r.step_time.value - r0.step_time.value == pytest.approx(q, rel=1e-9)
    # the phase's own component is unchanged: the wait is shown apart
    name = "all-reduce of each shard across dcs"
    phase = ComponentId(ComponentKey.SYNC_ACROSS_SITES, name)
    assert r.components[phase].value == r0.components[phase].value
    # the in-dc phases cross no loaded link and pay nothing
    for p in r.phases:
        assert (p.queueing is not None) == (p.name == name)
    # hier_allgather over 2 dcs: one exchange step crosses the WAN: 0.15 s
    g0, g = free.schemes["gather"], loaded.schemes["gather"]
    assert g.step_time.value - g0.step_time.value == pytest.approx(0.15, rel=1e-9)


def test_a_burst_of_jobs_waits_as_derived_by_hand():
    # rho = 1/2, S = 1 s, jobs of x = 1/4 s back to back: the first finds W = rho S / (2 (1 - rho)) =
    # 1/2; each later one the background that came while the one before waited and was served,
    # rho (W_k + x): W_2 = (1/2)(1/2 + 1/4) = 3/8, W_3 = (1/2)(3/8 + 1/4) = 5/16,
    # W_4 = (1/2)(5/16 + 1/4) = 9/32
    half, one, quarter = sp.Rational(1, 2), sp.Integer(1), sp.Rational(1, 4)
    q = lambda n: burst_wait(D.DimExpr(half, U.ONE), D.DimExpr(one, U.TIME), D.DimExpr(quarter, U.TIME), D.DimExpr(n, U.ONE)).e  # noqa: E731
    assert q(1) == half
    assert q(2) == half + sp.Rational(3, 8)  # 7/8 (the M/D/1 wait per job would say 1)
    assert q(4) == sp.Rational(16 + 12 + 10 + 9, 32)  # 47/32 (per job: 2)
    # the long run: each job waits c = rho x / (1 - rho) = 1/4, the burst takes n x / (1 - rho)
    n = sp.Symbol("n", positive=True)
    assert sp.limit(q(n) - n * quarter, n, sp.oo) == (half - quarter) / (1 - half)


def test_a_burst_on_a_fairly_shared_link_waits_as_derived_by_hand():
    # processor sharing (Kleinrock vol. 2 section 4.4): a job of y arriving at a random time stays
    # y / (1 - rho). Four jobs of x = 1/4 s back to back are one flow of 1 s: at rho = 1/2 it stays
    # 1 / (1 - 1/2) = 2 s, so the four wait 2 - 1 = 1 s in all (the FIFO form above: 47/32 s, with
    # S = 1 s; the fair form has no S: insensitivity); at rho = 0 the burst takes its own 1 s
    half, quarter = sp.Rational(1, 2), sp.Rational(1, 4)
    q = lambda rho, n: fair_burst_wait(D.DimExpr(rho, U.ONE), D.DimExpr(quarter, U.TIME), D.DimExpr(n, U.ONE))  # noqa: E731
    assert q(half, 4).e == 1 and q(half, 4).dim == U.TIME
    assert 4 * quarter + q(half, 4).e == 2
    assert q(sp.Integer(0), 4).e == 0
    assert q(half, 1).e == quarter  # one job of 1/4 s: 1/2 s in all


def test_sharing_is_fair_by_default_and_fifo_keeps_the_md1_form(tmp_path):
    # one exchange step of hier_allgather crosses the WAN as one job: a dc's 4 workers' dense updates,
    # x = 4 x 8,029,995,008 x 2 B / 10 GB/s = 6.424 s; S = 1 GB / 10 GB/s = 0.1 s; rho = 0.6: fair
    # waits x rho / (1 - rho) = 9.636 s, fifo (one job) the M/D/1 W = rho S / (2 (1 - rho)) = 0.075 s
    fair = solve_text(tmp_path, SPEC.format(link="load = 0.6; transfer = 1 GB", dc="", west="", scheme="").replace("sharing = fifo; ", ""))
    fifo = solve(tmp_path, link="load = 0.6; transfer = 1 GB")
    assert fair.schemes["gather"].components[QUEUEING].value == pytest.approx(4 * 8029995008 * 2 / 1e10 * 0.6 / 0.4, rel=1e-12)
    assert fifo.schemes["gather"].components[QUEUEING].value == pytest.approx(0.6 * 0.1 / (2 * 0.4), rel=1e-12)
    notes = {cf.formula for cf in fair.schemes["gather"].closed_forms}
    assert any("processor sharing" in f for f in notes) and not any("processor sharing" in cf.formula for cf in fifo.schemes["gather"].closed_forms)


ONE_WAY = """\
import std.devices
import std.links
import std.models
param rho = 0.5 in 0 .. 0.95
model job : llama3_8b {{ tokens = 6.6e8 }}  # 80,000 s of compute: the link relaxes between syncs
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{}}
link loaded {{ bandwidth = 10 GB/s; latency = 1 us; load = rho; transfer = 100 GB; sharing = fifo }}
link clear {{ bandwidth = 10 GB/s; latency = 1 us }}
dc east {{ workers = 1; device = gpu0; link = ib_ndr; switch = tor }}
dc west : east {{}}
{wan}
scheme dense {{ payload = dense; collective = hier_allreduce; steps = 100 }}
"""


def _burst_runs(tmp_path, wan: str, rho: str, seeds: int = 10, steps: int = 80, text: str = ONE_WAY):
    """(the closed form's queueing, the simulated queueing per step) of ONE_WAY with `wan`, on the
    numpy engine (the same model as SimPy's, tests/test_simulate_vector.py)."""
    from ctdsl.api import load
    from ctdsl.simulate import vector
    from ctdsl.simulate.plan import build_plans
    from ctdsl.simulate.runner import spawn_keys
    from ctdsl.simulate.stats import estimate

    path = tmp_path / "burst.ct"
    path.write_text(text.format(wan=wan))
    spec = load(path, {"rho": rho}).spec
    plan = build_plans(spec)["dense"]
    keys = spawn_keys(spec)
    runs = [vector.run(plan, 20240611, k, steps, 1, spawn_keys=keys) for k in range(seeds)]
    return plan.queueing, estimate([r.queueing for r in runs], level=0.99)


@pytest.mark.parametrize("rho", ["0", "0.3", "0.6", "0.9", "0.95"])
def test_a_burst_on_one_loaded_link_agrees_with_the_simulation(tmp_path, rho):
    # the two steps of the ring across 2 dcs go east -> west over the loaded link and west -> east
    # over a clear one at the same rate: each step waits on one loaded edge, back to back (1 us
    # apart), and the compute between syncs (80,000 s, 5 relaxation times of the queue at 0.95,
    # S / (1 - sqrt(rho))^2) lets the link forget the sync before. S = 100 GB / 10 GB/s = 10 s;
    # x = 8,029,995,008 values x 2 B / 2 over 10 GB/s = 0.803 s: by hand, W + rho (W + x)
    r, S, x = float(rho), 10.0, 0.8029995008
    W = r * S / (2 * (1 - r))
    closed, sim = _burst_runs(tmp_path, "wan east -> west = loaded\nwan west -> east = clear", rho)
    assert closed == pytest.approx(W + r * (W + x), rel=1e-12, abs=1e-12)
    lo, hi = sim.interval
    if r == 0:
        assert closed == 0 and abs(sim.mean) < 1e-6
    else:  # 10 seeds x 80 steps, a 99% t interval; the M/D/1 wait per step (2 W) lies outside it at 0.3 and 0.6
        assert lo <= closed <= hi, (rho, closed, sim.interval)


def test_a_burst_over_both_directions_is_a_lower_bound(tmp_path):
    # both directions loaded: each step ends when the slower of two FIFO queues serves its job (a
    # fork-join); the burst on one link alone can only end sooner (queueing.py)
    for rho in ("0.3", "0.9"):
        closed, sim = _burst_runs(tmp_path, "wan east <-> west = loaded", rho, seeds=6, steps=30)
        assert closed < sim.interval[0], (rho, closed, sim.interval)


FAIR_WAY = ONE_WAY.replace("; sharing = fifo", "")  # the link shared fairly: the default


@pytest.mark.parametrize("rho", ["0", "0.3", "0.6", "0.9", "0.95"])
def test_a_burst_on_one_fairly_shared_link_agrees_with_the_simulation(tmp_path, rho):
    # the one-way ring above on a link shared fairly, simulated as processor sharing (the numpy
    # engine's fair link, the SimPy one's draw for draw: tests/test_simulate_vector.py): two steps of
    # x = 0.803 s, each on one loaded edge, are one flow of 2 x: by hand 2 x rho / (1 - rho); S = 10 s
    # does not enter (insensitivity)
    r, x = float(rho), 0.8029995008
    closed, sim = _burst_runs(tmp_path, "wan east -> west = loaded\nwan west -> east = clear", rho, text=FAIR_WAY)
    assert closed == pytest.approx(2 * x * r / (1 - r), rel=1e-12, abs=1e-12)
    lo, hi = sim.interval
    if r == 0:
        assert closed == 0 and abs(sim.mean) < 1e-6
    else:  # 10 seeds x 80 steps, a 99% t interval; the FIFO form of the same burst lies outside it at 0.3 and 0.6
        assert lo <= closed <= hi, (rho, closed, sim.interval)
        W = r * 10.0 / (2 * (1 - r))
        assert r > 0.6 or not lo <= W + r * (W + x) <= hi


def test_a_fair_burst_over_both_directions_is_a_lower_bound(tmp_path):
    # both directions loaded and shared fairly: each step ends when the slower of two processor-sharing
    # queues lets its flow through (a fork-join); the mean of one link alone is below the mean of the slower
    for rho in ("0.3", "0.9"):
        closed, sim = _burst_runs(tmp_path, "wan east <-> west = loaded", rho, seeds=6, steps=30, text=FAIR_WAY)
        assert closed < sim.interval[0], (rho, closed, sim.interval)


def test_queueing_scales_with_one_over_one_minus_rho(tmp_path):
    waits = []
    for rho in (0.3, 0.6, 0.9):
        r = solve(tmp_path, link=f"load = {rho}; transfer = 1 GB").schemes["gather"]
        waits.append(r.components[QUEUEING].value)
    S = 0.1
    assert waits == pytest.approx([rho * S / (2 * (1 - rho)) for rho in (0.3, 0.6, 0.9)], rel=1e-12)


def test_an_oversubscribed_link_is_said_so(tmp_path):
    sol = solve(tmp_path, link="load = 0.95; transfer = 1 GB")
    from ctdsl.report.tables import step_table

    notes = " ".join(step_table(sol).notes)
    # dense: 2 WAN steps of 4 shards of 16.06/8 GB at 10 GB/s = 1.606 s busy per step, far more than
    # the 5% of a ~3.5 s step the background leaves
    assert "over-subscribed" in notes and "1 - rho" in notes
    assert "lower bound" in notes  # both directions of the WAN are loaded: a fork-join (queueing.py)


def test_no_load_gives_no_queueing_component(tmp_path):
    r = solve(tmp_path).schemes["dense"]
    assert not any(k.key is ComponentKey.QUEUEING for k in r.components)
    assert r.closed_forms == () and r.loaded_links == ()


# ---- stragglers -------------------------------------------------------------------------------


def _straggler_note(r):
    return next(cf for cf in r.closed_forms if cf.component == STRAGGLERS)


def test_exponential_jitter_h1_is_the_harmonic_number_exactly(tmp_path):
    free = solve(tmp_path).schemes["dense"]
    r = solve(tmp_path, dc="jitter = 2 s").schemes["dense"]
    # 8 workers: H_8 = 1 + 1/2 + ... + 1/8 = 761/280
    assert r.components[STRAGGLERS].expr == 2 * sp.Rational(761, 280)
    assert _straggler_note(r).status == "exact"
    assert r.step_time.value - free.step_time.value == pytest.approx(2 * 761 / 280, rel=1e-12)


def test_uniform_jitter_h1(tmp_path):
    r = solve(tmp_path, dc="jitter = 1 s; jitter_kind = uniform").schemes["dense"]
    # the largest of 8 U(0, 1) has mean 8/9
    assert r.components[STRAGGLERS].expr == sp.Rational(8, 9)
    assert _straggler_note(r).status == "exact"


def test_diloco_waits_less_for_stragglers(tmp_path):
    h1 = solve(tmp_path, dc="jitter = 1 s").schemes["dense"].components[STRAGGLERS].value
    h10 = solve(tmp_path, dc="jitter = 1 s", scheme="period = 10").schemes["dense"]
    assert _straggler_note(h10).status == "numerically integrated"
    # E[max of 8 Gamma(10, 1)] / 10, by scipy: far closer to the mean (1) than H_8 = 2.718
    expected = _scipy_expected_max(stats.gamma(10), 8) / 10
    assert h10.components[STRAGGLERS].value == pytest.approx(expected, rel=1e-7)
    assert 1 < h10.components[STRAGGLERS].value < h1


def _scipy_expected_max(dist, n: int, lo: float = 0.0) -> float:
    value, err = integrate.quad(lambda y: 1 - dist.cdf(y) ** n, lo, np.inf, limit=200)
    return lo + value


@pytest.mark.parametrize("n, H", [(2, 1), (8, 1), (8, 2), (64, 1), (8, 100), (3, 7.5)])
def test_exponential_factor_against_scipy(n, H):
    c, status, _ = ST.unit_factor("exponential", n, H)
    expected = _scipy_expected_max(stats.gamma(H), n) / H
    assert float(c) == pytest.approx(expected, rel=1e-7)
    assert status == ("exact" if H == 1 else "numerically integrated")


@pytest.mark.parametrize("n, sigma", [(2, 0.25), (8, 0.5), (16, 1.0)])
def test_lognormal_factor_against_scipy(n, sigma):
    c, status, _ = ST.unit_factor("lognormal", n, 1, sigma)
    assert float(c) == pytest.approx(_scipy_expected_max(stats.lognorm(sigma), n), rel=1e-7)
    assert status == "numerically integrated"


def test_uniform_sum_of_two_against_the_triangular_law():
    # the sum of two U(0, 1) is triangular on [0, 2] with its mode at 1
    c, status, _ = ST.unit_factor("uniform", 8, 2)
    assert float(c) == pytest.approx(_scipy_expected_max(stats.triang(0.5, loc=0, scale=2), 8) / 2, rel=1e-7)
    assert status == "numerically integrated"


def test_lognormal_sum_is_marked_an_approximation():
    c, status, formula = ST.unit_factor("lognormal", 8, 100, 0.5)
    assert status == "approximation" and "Fenton-Wilkinson" in formula


def test_unlike_dcs_against_monte_carlo():
    # 4 workers at 1 s + 0.5 s x Exp(1), 4 at a fixed 1.2 s: E[max] - 1.2 by numerical integration,
    # checked against a Monte Carlo estimate with its 99.9% confidence interval
    groups = [ST.Group(4, 1.0, 0.5, "exponential"), ST.Group(4, 1.2, 0.0)]
    value, status = ST.excess(groups, 1)
    assert status == "numerically integrated"
    rng = np.random.default_rng(12345)
    n = 200_000
    sample = np.maximum(1.2, (1.0 + 0.5 * rng.exponential(size=(n, 4))).max(axis=1)) - 1.2
    half = stats.norm.ppf(0.9995) * sample.std(ddof=1) / math.sqrt(n)
    assert abs(value - sample.mean()) <= half


def test_unlike_dcs_in_a_spec_are_integrated_at_the_defaults(tmp_path):
    r = solve(tmp_path, dc="jitter = 1 s", west="jitter = 0.5 s").schemes["dense"]
    st = _straggler_note(r)
    assert st.status == "numerically integrated" and "defaults" in st.note
    # 4 workers with Exp scale 1 and 4 with scale 0.5, same base: E[max] by scipy over the product of CDFs
    def cdf(y):
        return stats.expon.cdf(y) ** 4 * stats.expon(scale=0.5).cdf(y) ** 4

    expected, _ = integrate.quad(lambda y: 1 - cdf(y), 0, np.inf)
    assert r.components[STRAGGLERS].value == pytest.approx(expected, rel=1e-7)


def test_overlap_with_jitter_is_an_approximation(tmp_path):
    r = solve(tmp_path, dc="jitter = 1 s", scheme="overlap = true").schemes["dense"]
    assert _straggler_note(r).status == "approximation"


def test_no_jitter_no_stragglers(tmp_path):
    r = solve(tmp_path).schemes["dense"]
    assert STRAGGLERS not in r.components and all(cf.component != STRAGGLERS for cf in r.closed_forms)


def test_json_and_explain_say_what_is_exact(tmp_path):
    sol = solve(tmp_path, link="load = 0.5; transfer = 1 GB", dc="jitter = 1 s")
    data = sol.to_json()
    dense = data["schemes"][0]
    forms = {cf["component"]: cf["status"] for cf in dense["closed_forms"]}
    assert forms == {"queueing:shared": "lower bound", "stragglers": "exact"}  # by key (docs/solve-json.md)
    phases = {p["name"]: p["queueing"] for p in dense["phases"]}
    assert phases["reduce-scatter in each dc"] is None
    q = phases["all-reduce of each shard across dcs"]
    assert q["waits"][0]["wait"] == pytest.approx(0.5 * 0.1 / (2 * 0.5))
    from ctdsl.report.explain import explain

    text = explain(sol, "dense")
    assert "queueing: each step waits" in text and "stragglers: exact" in text


def test_flagship_with_a_loaded_wan_keeps_its_breakevens_checkable():
    from test_solve_breakeven import numeric_check  # brentq on the lambdified difference

    sol = solve_file("specs/llama70b_wan.ct", {"wan_load": "0.5"})
    # DiLoCo's outer sync runs in series every 100 steps: its WAN phase pays the wait as a component of
    # its own (the per-step schemes' buckets carry theirs inside the exposed sync)
    assert ComponentId(ComponentKey.QUEUEING, "wan") in sol.schemes["diloco"].components
    free = solve_file("specs/llama70b_wan.ct")
    assert sol.schemes["adamw"].step_time.value > free.schemes["adamw"].step_time.value
    assert sol.breakevens
    for be in sol.breakevens:
        numeric_check(sol, be)


def test_breakeven_over_the_load_agrees_with_a_root_finder(tmp_path):
    # a root near rho = 1: brentq with an absolute tolerance to match (numeric_check's 1e-6 suits
    # bandwidths of 1e10 B/s, not a utilisation)
    from scipy.optimize import brentq

    text = SPEC.format(link="load = rho; transfer = 2 GB", dc="jitter = 1 s", west="", scheme="")
    text = "param rho = 0.5 in 0.01 .. 0.99\n" + text + "breakeven gather vs dense over rho\n"
    sol = solve_text(tmp_path, text)
    (be,) = sol.breakevens
    sym = sol.symbols["rho"]
    diff = sp.lambdify((sym,), sol.schemes["gather"].time_to_target.expr - sol.schemes["dense"].time_to_target.expr)
    grid = np.linspace(0.01, 0.99, 2001)
    vals = [float(diff(x)) for x in grid]
    found = [brentq(diff, a, b, xtol=1e-15, rtol=1e-15) for a, b, fa, fb in zip(grid, grid[1:], vals, vals[1:]) if fa * fb < 0]
    assert [r.value for r in be.roots] == pytest.approx(found, rel=1e-12)
    assert len(found) == 1
