"""ctdsl uncertainty: the sampler against closed-form distributions, P(first), break-evens, Sobol.

Each spec here makes a scheme's time to target T = steps x step with a step
time that no drawn param touches, so T / step is the drawn expression itself
(steps = s1 + s2, steps = a b), whose distribution is known in closed form.
The step time comes from the solver at the defaults, outside the code under
test. Tolerances are 4 standard errors of the estimate (two-sided, about
99.99 % confidence), the standard errors written out in each test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.numeric import sobol as S
from ctdsl.numeric.forms import CompiledForms
from ctdsl.numeric.uncertainty import MAX_UNCERTAINTY_SAMPLES, MoneyForms, breakeven_roots, draws, uncertainty

HEAD = """import std.devices
import std.links
import std.models
model job : llama3_8b { tokens = 8192 }
device gpu0 : h100 { efficiency = 0.4 }
switch tor {}
dc east { workers = 4; device = gpu0; link = ib_ndr; switch = tor }
dc west : east {}
"""
WAN = "wan east <-> west = eth100g\n"
N = 200_000
Z = 4  # standard errors allowed


def _solve(tmp_path, body: str, name: str = "spec.ct"):
    path = tmp_path / name
    path.write_text(HEAD + body, encoding="utf-8")
    return ctdsl.load(str(path)).solve()


def _spread(u, scheme: str):
    return next(s for s in u.schemes if s.name == scheme)


def test_a_sum_of_two_uniforms_is_triangular(tmp_path):
    # s1, s2 ~ U(0, 1000): X = s1 + s2 is triangular on 0 .. 2000 with its mode at 1000:
    # mean 1000, variance 2 x 1000^2 / 12 = 166,666.7 (sd 408.25); for x <= 1000 the CDF is
    # x^2 / (2 x 1000^2), so the 5 % quantile is 1000 sqrt(0.1) = 316.23 and the 95 % one 2000 - 316.23.
    sol = _solve(tmp_path, "param s1 = 500 ~ uniform(0, 1000)\nparam s2 = 500 ~ uniform(0, 1000)\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 + s2 }\n")
    step = float(sol.schemes["a"].step_time)
    t = _spread(uncertainty(sol, N, seed=3), "a").time
    mean, var, q05 = 1000.0, 2 * 1000.0**2 / 12, 1000 * math.sqrt(0.1)
    sd = math.sqrt(var)
    # standard errors: of the mean sd / sqrt(N) = 0.91; of the sd, sd sqrt((kurtosis - 1) / (4 N)) with the
    # triangle's kurtosis 2.4: 0.54; of a quantile, sqrt(p (1 - p) / N) / f(x_p), f(316.23) = 316.23 / 1000^2: 1.54
    assert t.mean / step == pytest.approx(mean, abs=Z * sd / math.sqrt(N))
    assert t.sd / step == pytest.approx(sd, abs=Z * sd * math.sqrt(1.4 / (4 * N)))
    se_q = math.sqrt(0.05 * 0.95 / N) / (q05 / 1000.0**2)
    assert t.q05 / step == pytest.approx(q05, abs=Z * se_q)
    assert t.q95 / step == pytest.approx(2000 - q05, abs=Z * se_q)
    assert t.q50 / step == pytest.approx(1000, abs=Z * math.sqrt(0.25 / N) / (1 / 1000))
    assert t.count == N


def test_a_lognormal_product_is_lognormal(tmp_path):
    # ln a ~ N(ln 100, 0.3^2), ln b ~ N(ln 50, 0.4^2): ln(a b) ~ N(ln 5000, 0.3^2 + 0.4^2 = 0.5^2), so the
    # median of a b is 5000, ln(q95 / q50) = ln(q50 / q05) = 1.6449 x 0.5, and the mean 5000 exp(0.5^2 / 2)
    sol = _solve(tmp_path, "param a = 100 ~ lognormal(100, 0.3)\nparam b = 50 ~ lognormal(50, 0.4)\n" + WAN + "scheme p { payload = dense; collective = hier_allreduce; steps = a * b }\n")
    step = float(sol.schemes["p"].step_time)
    t = _spread(uncertainty(sol, N, seed=5), "p").time
    sigma = 0.5
    # the p-quantile of ln X has standard error sqrt(p (1 - p) / N) sigma / phi(z_p): 0.0014 at the median,
    # 0.0024 at 5 % and 95 % (phi(1.6449) = 0.1031)
    se50 = math.sqrt(0.25 / N) * sigma / 0.3989
    se05 = math.sqrt(0.05 * 0.95 / N) * sigma / 0.1031
    assert math.log(t.q50 / step) == pytest.approx(math.log(5000), abs=Z * se50)
    assert math.log(t.q95 / step) == pytest.approx(math.log(5000) + 1.6449 * sigma, abs=Z * se05)
    assert math.log(t.q05 / step) == pytest.approx(math.log(5000) - 1.6449 * sigma, abs=Z * se05)
    # the mean: sd of X is m sqrt(exp(sigma^2) - 1) = 0.533 m, so its standard error is 0.533 m / sqrt(N)
    m = 5000 * math.exp(sigma**2 / 2)
    assert t.mean / step == pytest.approx(m, abs=Z * m * math.sqrt(math.exp(sigma**2) - 1) / math.sqrt(N))


def test_the_probability_of_being_first_is_the_share_of_the_range_before_the_crossing(tmp_path):
    # T_a = n x step_a with n ~ U(5000, 15000), T_b = 5000 x step_b: a is first exactly when
    # n < c = 5000 step_b / step_a, so P(a first) = (c - 5000) / 10000 (c clipped to the range);
    # the binomial standard error is sqrt(P (1 - P) / N). (Here step_a = 1.250 s, step_b = 2.764 s:
    # c = 11,058, P = 0.606.)
    body = "param n = 10000 ~ uniform(5000, 15000)\n" + WAN
    body += "scheme a { payload = topk; fraction = 0.01; collective = hier_allgather; steps = n }\n"
    body += "scheme b { payload = dense; collective = hier_allreduce; steps = 5000 }\n"
    sol = _solve(tmp_path, body)
    sa, sb = float(sol.schemes["a"].step_time), float(sol.schemes["b"].step_time)
    c = 5000 * sb / sa
    p = min(1.0, max(0.0, (c - 5000) / 10000))
    assert 0.05 < p < 0.95, "the case must put the crossing inside the range"
    u = uncertainty(sol, N, seed=11)
    first = {s.name: s.first for s in u.schemes}
    assert first["a"] == pytest.approx(p, abs=Z * math.sqrt(p * (1 - p) / N))
    assert first["a"] + first["b"] == pytest.approx(1.0)


def test_break_even_roots_agree_with_the_solver_solved_again_at_each_draw(tmp_path):
    # an independent method: for a few draws of the efficiency, `solve --set eff=...` solves the break-even
    # exactly (symbolic roots, checked by the solver's own scan); the sampler's grid and bisection must find
    # the same lowest root, and nan exactly where the solver finds none in range
    body = "param bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 41\nparam eff = 0.4 in 0.1 .. 0.9 ~ uniform(0.1, 0.9)\n"
    body = body + "link wan : eth100g { bandwidth = bw }\nwan east <-> west = wan\n"
    body += "scheme a { payload = dense; collective = hier_allreduce; steps = 10000 }\n"
    body += "scheme b { payload = band; fraction = 1/16; collective = hier_allgather; steps = 11500 }\n"
    body += "breakeven b vs a over bw\n"
    path = tmp_path / "be.ct"
    path.write_text(HEAD.replace("efficiency = 0.4", "efficiency = eff") + body, encoding="utf-8")
    sol = ctdsl.load(str(path)).solve()
    forms = CompiledForms(sol)
    drawn = draws(sol.spec, 6, seed=2)
    got, _ = breakeven_roots(forms, MoneyForms(sol, forms), sol.breakevens[0], sol.spec.params["bw"], drawn, 6)
    for e, r in zip(drawn["eff"], got):
        again = ctdsl.load(str(path), overrides={"eff": repr(float(e))}).solve().breakevens[0]
        if again.roots:
            assert r == pytest.approx(min(x.value for x in again.roots), rel=1e-9)
        else:
            assert math.isnan(r)


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_draws(tmp_path):
    (tmp_path / "spec.ct").write_text(HEAD + "param s1 = 500 ~ uniform(0, 1000)\nparam s2 = 500 ~ normal(500, 50)\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 + s2 }\n", encoding="utf-8")
    runner = CliRunner()
    runs = [runner.invoke(app, ["uncertainty", str(tmp_path / "spec.ct"), "-n", "5000", "--seed", s, "-f", "json", "--no-sobol"]) for s in ("4", "4", "5")]
    assert [r.exit_code for r in runs] == [0, 0, 0]
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stdout != runs[2].stdout
    data = json.loads(runs[0].stdout)
    assert data["samples"] == 5000 and data["seed"] == 4 and data["params"] == ["s1", "s2"]
    assert data["schemes"]["a"]["time_to_target"]["dim"] == "s"
    # --set fixes a param: s2 is no longer drawn, and s1's draws are the first ones of the generator
    fixed = runner.invoke(app, ["uncertainty", str(tmp_path / "spec.ct"), "-n", "5000", "--seed", "4", "-f", "json", "--no-sobol", "--set", "s2=500"])
    assert fixed.exit_code == 0 and json.loads(fixed.stdout)["params"] == ["s1"]
    sd = json.loads(fixed.stdout)["schemes"]["a"]["time_to_target"]["sd"]
    assert sd < data["schemes"]["a"]["time_to_target"]["sd"]  # var(s1) < var(s1) + var(s2)


def test_sobol_indices_of_an_additive_function():
    # T = a x + b y with x ~ U(0, 1), y ~ U(0, 2), a = 3, b = 1: var x = 1/12, var y = 4/12, so
    # S1_x = a^2 var x / (a^2 var x + b^2 var y) = 9 / 13, S1_y = 4 / 13, and with no interaction ST = S1
    pytest.importorskip("SALib")

    class P:
        def __init__(self, name, kind, args):
            self.name = name
            self.dist = type("D", (), {"kind": kind, "args": args})()

    problem = S.problem_of([P("x", "uniform", (0.0, 1.0)), P("y", "uniform", (0.0, 2.0))])
    out, used = S.indices(problem, lambda X: {"T": 3 * X[:, 0] + X[:, 1]}, 1 << 16, seed=1)
    (ix, iy) = out["T"]
    assert used == 16384 * (2 + 2)  # the largest power-of-two base with base x (params + 2) <= 2^16
    assert ix.first == pytest.approx(9 / 13, abs=0.03) and iy.first == pytest.approx(4 / 13, abs=0.03)
    assert ix.total == pytest.approx(9 / 13, abs=0.03) and iy.total == pytest.approx(4 / 13, abs=0.03)


def test_sobol_maps_each_distribution_to_salib():
    class P:
        def __init__(self, name, kind, args):
            self.name = name
            self.dist = type("D", (), {"kind": kind, "args": args})()

    pr = S.problem_of([P("t", "triangular", (1.0, 1.5, 3.0)), P("l", "lognormal", (math.e, 0.5)), P("n", "normal", (2.0, 0.1))])
    # triangular's peak as a fraction of its width: (1.5 - 1) / (3 - 1); lognormal in ln space: ln e = 1
    assert pr["dists"] == ["triang", "lognorm", "norm"]
    assert pr["bounds"] == [[1.0, 3.0, 0.25], [1.0, 0.5], [2.0, 0.1]]


def test_the_draws_follow_each_distribution_by_its_own_moments(tmp_path):
    # triangular(lo, mode, hi): mean (lo + mode + hi) / 3; normal(mean, sd): mean and sd
    sol = _solve(tmp_path, "param t = 0.4 ~ triangular(0.3, 0.4, 0.8)\nparam g = 1 ms ~ normal(1 ms, 0.1 ms)\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = 100 }\n")
    d = draws(sol.spec, N, seed=0)
    var_t = (0.3**2 + 0.4**2 + 0.8**2 - 0.3 * 0.4 - 0.3 * 0.8 - 0.4 * 0.8) / 18
    assert d["t"].mean() == pytest.approx(1.5 / 3, abs=Z * math.sqrt(var_t / N))
    assert d["g"].mean() == pytest.approx(1e-3, abs=Z * 1e-4 / math.sqrt(N))
    assert d["g"].std() == pytest.approx(1e-4, rel=Z / math.sqrt(2 * N))
    assert d["t"].min() >= 0.3 and d["t"].max() <= 0.8


def test_the_command_bounds_its_samples_and_says_when_nothing_is_uncertain(tmp_path):
    from ctdsl.cli.uncertainty_cmd import SAMPLES_LIMIT

    assert SAMPLES_LIMIT == MAX_UNCERTAINTY_SAMPLES
    (tmp_path / "plain.ct").write_text(HEAD + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = 100 }\n", encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(app, ["uncertainty", str(tmp_path / "plain.ct")])
    assert r.exit_code == 0 and "no param carries a distribution" in r.stderr
    r = runner.invoke(app, ["uncertainty", str(tmp_path / "plain.ct"), "--samples", str(MAX_UNCERTAINTY_SAMPLES + 1)])
    assert r.exit_code == 2
    with pytest.raises(ValueError):
        uncertainty(ctdsl.load(str(tmp_path / "plain.ct")).solve(), MAX_UNCERTAINTY_SAMPLES + 1)


def test_csv_and_table_name_every_scheme_with_units(tmp_path):
    (tmp_path / "spec.ct").write_text(HEAD + "param s1 = 500 ~ uniform(400, 600)\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 }\n", encoding="utf-8")
    runner = CliRunner()
    r = runner.invoke(app, ["uncertainty", str(tmp_path / "spec.ct"), "-n", "1000", "-f", "csv", "--no-sobol"])
    assert r.exit_code == 0
    rows = r.stdout.splitlines()
    assert rows[0].startswith("what,name,quantity,unit,mean")
    assert rows[1].startswith("scheme,a,time_to_target,s,")
    out = tmp_path / "t.txt"
    r = runner.invoke(app, ["uncertainty", str(tmp_path / "spec.ct"), "-n", "1000", "--no-sobol", "-o", str(out)])
    assert r.exit_code == 0 and "Time to target" in out.read_text(encoding="utf-8")


def test_codesign_doc_shows_what_the_command_prints():
    # docs/codesign.md, Uncertainty: the command it gives prints the rows it quotes
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "codesign.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Uncertainty") :]
    quoted = section[section.index("```text\n") + 8 :].split("```")[0].strip().splitlines()
    assert len(quoted) == 2
    r = CliRunner().invoke(app, ["uncertainty", str(root / "examples" / "18_uncertainty.ct"), "--no-sobol"])
    assert r.exit_code == 0
    for line in quoted:
        assert line in r.stdout.splitlines()


# ---- a table of samples: the empirical distribution, resampled with replacement --------------------

TABLE = (1.02, 1.08, 1.08, 1.11, 1.19, 1.3)  # 1.08 twice: drawn with probability 2/6


def _table_moments(values) -> tuple[float, float, float]:
    """The empirical distribution's mean, variance and fourth central moment (each value with weight 1 / k)."""
    k = len(values)
    mean = sum(values) / k
    var = sum((v - mean) ** 2 for v in values) / k
    return mean, var, sum((v - mean) ** 4 for v in values) / k


def test_a_table_of_samples_is_drawn_with_the_frequencies_of_its_values(tmp_path):
    from scipy.stats import chisquare

    sol = _solve(tmp_path, f"param r = 1.1 in 0.9 .. 1.5 ~ samples([{', '.join(map(str, TABLE))}])\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = 100 }\n")
    assert sol.spec.params["r"].dist.args == TABLE
    d = draws(sol.spec, N, seed=7)["r"]
    values = sorted(set(TABLE))
    assert set(np.unique(d)) == set(values)  # only the table's values, every one of them
    counts = np.array([np.sum(d == v) for v in values])
    p = np.array([TABLE.count(v) / len(TABLE) for v in values])
    # each count is binomial(N, p): within 4 of its standard errors, sqrt(N p (1 - p)) (about 167 to 211)
    assert np.all(np.abs(counts - N * p) <= Z * np.sqrt(N * p * (1 - p)))
    # and together: Pearson's chi-square against the exact frequencies, 4 degrees of freedom
    assert chisquare(counts, N * p).pvalue > 1e-4
    mean, var, m4 = _table_moments(TABLE)
    assert d.mean() == pytest.approx(mean, abs=Z * math.sqrt(var / N))
    # the standard error of a sample variance: sqrt((m4 - var^2) / N)
    assert d.var() == pytest.approx(var, abs=Z * math.sqrt((m4 - var**2) / N))


def test_a_table_goes_through_the_compiled_forms_to_time_and_first(tmp_path):
    # steps = n from a table of five equally likely values: T = n x step exactly, so its quantiles are table
    # values (the 5 % quantile the smallest, the median the middle, 95 % the largest) and P(a first) is the
    # share of the table below b's T / step_a
    table = (9000, 10000, 11000, 12500, 14000)
    body = f"param n = 10000 in 5000 .. 20000 ~ samples([{', '.join(map(str, table))}])\n" + WAN
    body += "scheme a { payload = topk; fraction = 0.01; collective = hier_allgather; steps = n }\n"
    body += "scheme b { payload = dense; collective = hier_allreduce; steps = 5000 }\n"
    sol = _solve(tmp_path, body)
    sa, sb = float(sol.schemes["a"].step_time), float(sol.schemes["b"].step_time)
    u = uncertainty(sol, N, seed=2)
    t = _spread(u, "a").time
    assert (t.q05 / sa, t.q50 / sa, t.q95 / sa) == pytest.approx((9000, 11000, 14000), rel=1e-12)
    mean, var, _ = _table_moments(table)
    assert t.mean / sa == pytest.approx(mean, abs=Z * math.sqrt(var / N))
    below = sum(1 for n in table if n * sa < 5000 * sb) / len(table)
    assert 0 < below < 1, "the case must put b's time between the table's values"
    first = {s.name: s.first for s in u.schemes}
    assert first["a"] == pytest.approx(below, abs=Z * math.sqrt(below * (1 - below) / N))


def test_a_table_is_reproducible_and_drawn_in_the_spec_order(tmp_path):
    sol = _solve(tmp_path, "param s1 = 500 ~ uniform(0, 1000)\nparam r = 1.1 ~ samples([1.02, 1.3, 1.5])\nparam s2 = 1 ~ normal(1, 0.1)\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = 1000 * r }\n")
    one, two, other = draws(sol.spec, 1000, seed=4), draws(sol.spec, 1000, seed=4), draws(sol.spec, 1000, seed=5)
    assert all(np.array_equal(one[k], two[k]) for k in one) and not np.array_equal(one["r"], other["r"])
    # one generator, param after param: r's draws are the generator's next integers after s1's uniforms
    rng = np.random.default_rng(4)
    rng.uniform(0, 1000, 1000)
    assert np.array_equal(one["r"], np.array([1.02, 1.3, 1.5])[rng.integers(0, 3, 1000)])


def test_the_quantile_map_of_a_table_gives_each_value_its_share_of_u01():
    class P:
        def __init__(self, name, kind, args):
            self.name = name
            self.dist = type("D", (), {"kind": kind, "args": args})()

    p = P("r", "samples", TABLE)
    assert S.problem_of([p]) == {"num_vars": 1, "names": ["r"], "bounds": [[0.0, 1.0]], "dists": ["unif"]}
    # u on a fine regular grid of (0, 1): the quantile function Q(u) takes each value on 1 / k of it
    u = (np.arange(6000) + 0.5) / 6000
    q = S.design_values(p, u)
    assert [int(np.sum(q == v)) for v in (1.02, 1.08, 1.11, 1.19, 1.3)] == [1000, 2000, 1000, 1000, 1000]
    assert np.all(np.diff(q) >= 0)  # a quantile function is non-decreasing
    assert S.design_values(p, np.array([0.0, 1.0])).tolist() == [1.02, 1.3]  # the ends of [0, 1] map into the table


def test_sobol_indices_with_a_table_of_samples(tmp_path):
    # steps = s1 + s2, s1 from a table (the empirical distribution: variance v1 below), s2 ~ U(0, 2000)
    # (variance 2000^2 / 12); T = step x (s1 + s2) is additive, so S1 = ST = each variance's share
    pytest.importorskip("SALib")
    table = (1000, 3000, 3500, 6000)
    _, v1, _ = _table_moments(table)
    v2 = 2000.0**2 / 12
    # the GPUs are rented by the hour, so the cost to target is steps x a constant too: the same shares
    body = f"param s1 = 1000 ~ samples([{', '.join(map(str, table))}])\nparam s2 = 500 ~ uniform(0, 2000)\n" + WAN
    path = tmp_path / "sobol.ct"
    path.write_text(HEAD.replace("efficiency = 0.4", "efficiency = 0.4; price = 2 USD/h") + body + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 + s2 }\n", encoding="utf-8")
    sol = ctdsl.load(str(path)).solve()
    forms = CompiledForms(sol)
    times, costs, used = S.scheme_indices(sol, forms, MoneyForms(sol, forms), 1 << 16, seed=3)
    assert used == 16384 * 4  # base x (2 params + 2)
    for found in (times, costs):
        i1, i2 = found["a"]
        assert (i1.param, i2.param) == ("s1", "s2")
        assert i1.first == pytest.approx(v1 / (v1 + v2), abs=0.03) and i1.total == pytest.approx(v1 / (v1 + v2), abs=0.03)
        assert i2.first == pytest.approx(v2 / (v1 + v2), abs=0.03)
    unpriced = _solve(tmp_path, body + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 + s2 }\n")
    f2 = CompiledForms(unpriced)
    assert S.scheme_indices(unpriced, f2, MoneyForms(unpriced, f2), 1 << 10, seed=3)[1] is None  # nothing priced: no cost indices


def test_never_in_range_is_split_by_the_scheme_lower_throughout(tmp_path):
    # b's steps come from a table: with few steps it is faster at every WAN rate in range, with many slower at
    # every rate, in between the times cross. Each draw without a root is checked against the solver itself:
    # the side is the sign of T_b - T_a at the low end of the range, solved with --set
    body = "param bw = 50 GB/s in 20 GB/s .. 1000 GB/s log 9\nparam n = 10000 in 100 .. 100000 ~ samples([2000, 15000, 60000])\n"
    body += "link wan : eth100g { bandwidth = bw }\nwan east <-> west = wan\n"
    body += "scheme a { payload = dense; collective = hier_allreduce; steps = 10000 }\n"
    body += "scheme b { payload = band; fraction = 1/16; collective = hier_allgather; steps = n }\n"
    body += "breakeven b vs a over bw\n"
    path = tmp_path / "split.ct"
    path.write_text(HEAD + body, encoding="utf-8")
    study = ctdsl.load(str(path))
    sol = study.solve()
    forms = CompiledForms(sol)
    drawn = draws(sol.spec, 300, seed=1)
    roots, sides = breakeven_roots(forms, MoneyForms(sol, forms), sol.breakevens[0], sol.spec.params["bw"], drawn, 300)
    by_n = {}
    for n, r, side in zip(drawn["n"], roots, sides):
        by_n.setdefault(float(n), set()).add((bool(np.isfinite(r)), int(side)))
    assert all(len(v) == 1 for v in by_n.values())  # a draw's answer depends on n alone
    for n, ((has_root, side),) in by_n.items():
        at = study.solve({"n": repr(n), "bw": "20 GB/s"}).schemes
        gap = at["b"].time_to_target.value - at["a"].time_to_target.value
        assert side == (0 if has_root else int(np.sign(gap))), n
    assert {side for (_, side), in by_n.values()} == {-1, 0, 1}, "the case must give both sides and a root"
    u = uncertainty(sol, 300, seed=1)
    (b,) = u.breakevens
    assert b.x_throughout == pytest.approx(float(np.mean(sides < 0))) and b.y_throughout == pytest.approx(float(np.mean(sides > 0)))
    assert b.never == pytest.approx(b.x_throughout + b.y_throughout)


def test_the_probability_of_being_cheapest_is_the_share_of_the_table_below_the_crossing(tmp_path):
    # a runs on GPUs alone for n steps, n from a table; b on sites with a dear module for 5000. Cost and time
    # are both steps x a per-step figure (the hardware is rented by the hour), so a is first when
    # n x step_a < 5000 step_b and cheapest when n x cost_a / 10000 < cost_b, with the solver's figures at
    # the default n = 10000: the two thresholds differ by the module's rent
    table = (6000, 8000, 10000, 12500, 14000, 20000)
    text = HEAD.replace("efficiency = 0.4", "efficiency = 0.4; price = 2.5 USD/h; depreciation = 1 yr")
    text = text.replace("switch = tor }", "switch = tor; pluggable = m }")
    text += "pluggable m { port { rate = 25 GB/s }; ops = [dct]; price = 7 kUSD }\nvariant bare { pluggable = none }\n"
    text += f"param n = 10000 ~ samples([{', '.join(map(str, table))}])\n" + WAN
    text += "scheme a { payload = topk; fraction = 0.01; collective = hier_allgather; steps = n; sites = bare }\n"
    text += "scheme b { payload = dense; collective = hier_allreduce; steps = 5000 }\n"
    path = tmp_path / "cheap.ct"
    path.write_text(text, encoding="utf-8")
    sol = ctdsl.load(str(path)).solve()
    a, b = sol.schemes["a"], sol.schemes["b"]
    first = sum(n * a.step_time.value < b.time_to_target.value for n in table) / len(table)
    cheapest = sum(n * a.cost_to_target.value / 10000 < b.cost_to_target.value for n in table) / len(table)
    assert 0 < first < 1 and 0 < cheapest < 1 and first != cheapest, "the case must separate the two"
    u = uncertainty(sol, N, seed=9)
    got = {s.name: (s.first, s.cheapest) for s in u.schemes}
    assert got["a"][0] == pytest.approx(first, abs=Z * math.sqrt(first * (1 - first) / N))
    assert got["a"][1] == pytest.approx(cheapest, abs=Z * math.sqrt(cheapest * (1 - cheapest) / N))
    assert got["b"][1] == pytest.approx(1 - got["a"][1])
    r = CliRunner().invoke(app, ["uncertainty", str(path), "-n", "2000", "-f", "json", "--no-sobol"])
    assert r.exit_code == 0 and json.loads(r.stdout)["schemes"]["a"]["cheapest"] == pytest.approx(got["a"][1], abs=0.05)
    table_out = CliRunner().invoke(app, ["uncertainty", str(path), "-n", "2000", "--no-sobol"]).stdout
    assert "cheapest" in table_out


def test_sobol_indices_of_a_break_even_against_its_closed_form(tmp_path, monkeypatch):
    # docs/sensitivity.md's two sites: T_dense = 100 (c + D / b), T_q2 = n2 (c + D / (8 b)), c = 0.06 s / eff,
    # D = 2e9 B; they tie at b* = (D / 0.06 s) x eff x h(n2), h(n) = (100 - n / 8) / (n - 100). With
    # eff ~ U(0.3, 0.5) and n2 from the table [300, 400, 450], b* = A x B, A and B independent, so
    # Var(b*) ~ E[A^2] E[B^2] - E[A]^2 E[B]^2, S1_A = Var(A) E[B]^2 / Var(b*), S1_B = Var(B) E[A]^2 / Var(b*),
    # ST_A = 1 - S1_B and ST_B = 1 - S1_A. The roots lie in 1.25 .. 5.2 GB/s, inside b's range and where the
    # WAN binds (the 10 GB/s link would take half its time at 5 GB/s). The design goes through the break-even's
    # grid and bisection.
    pytest.importorskip("SALib")
    import ctdsl.numeric.uncertainty as NU

    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "sensitivity.md").read_text(encoding="utf-8")
    spec = doc.split("```ct\n# One worker in each of two data centres")[1].split("\n", 1)[1].split("```")[0]
    for old, new in (
        ("param eff = 0.5 in 0.25 .. 1", "param eff = 0.4 ~ uniform(0.3, 0.5)\nparam n2 = 400 ~ samples([300, 400, 450])"),
        ("steps = 400", "steps = n2"),
    ):
        assert old in spec
        spec = spec.replace(old, new)
    path = tmp_path / "two_sites.ct"
    path.write_text(spec, encoding="utf-8")
    sol = ctdsl.load(str(path)).solve()
    [root] = sol.breakevens[0].roots
    assert root.value == pytest.approx(2e9 / 0.06 * 0.4 * (50 / 300), rel=1e-9)  # the closed form at the defaults
    h = [(100 - n / 8) / (n - 100) for n in (300, 400, 450)]
    ea, va = 0.4, 0.2**2 / 12
    eb, eb2 = sum(h) / 3, sum(x * x for x in h) / 3
    vy = (va + ea**2) * eb2 - ea**2 * eb**2
    s1a, s1b = va * eb**2 / vy, (eb2 - eb**2) * ea**2 / vy
    # a design of 4096 x 4 points, whose 95 % bootstrap half-widths are at most 0.034 here: 0.05 is 3 standard errors
    monkeypatch.setattr(NU, "BREAKEVEN_SAMPLES", 1 << 14)
    u = uncertainty(sol, 1 << 14, seed=2, sobol=True)
    [b] = u.sobol_breakevens
    assert b.note is None and b.evaluations == 4096 * 4
    ia, ib = b.indices
    assert (ia.param, ib.param) == ("eff", "n2")
    assert ia.first == pytest.approx(s1a, abs=0.05) and ib.first == pytest.approx(s1b, abs=0.05)
    assert ia.total == pytest.approx(1 - s1b, abs=0.05) and ib.total == pytest.approx(1 - s1a, abs=0.05)


def test_a_break_even_never_in_range_somewhere_has_no_indices_and_says_why(tmp_path):
    pytest.importorskip("SALib")
    body = "param bw = 50 GB/s in 20 GB/s .. 1000 GB/s log 9\nparam n = 10000 in 100 .. 100000 ~ samples([2000, 15000, 60000])\n"
    body += "param e = 0.4 in 0.3 .. 0.5 ~ uniform(0.35, 0.45)\n"
    body += "link wan : eth100g { bandwidth = bw }\nwan east <-> west = wan\n"
    body += "scheme a { payload = dense; collective = hier_allreduce; steps = 10000 }\n"
    body += "scheme b { payload = band; fraction = 1/16; collective = hier_allgather; steps = n }\nbreakeven b vs a over bw\n"
    sol = _solve(tmp_path, body, "never.ct")
    u = uncertainty(sol, 2000, seed=1, sobol=True)
    [b] = u.sobol_breakevens
    assert b.indices is None and "never in range" in b.note
    from ctdsl.report.uncertainty_out import uncertainty_json, uncertainty_tables

    notes = next(t for t in uncertainty_tables(u) if t.title == "Break-evens").notes
    assert any("b vs a over bw: no Sobol indices (never in range" in n for n in notes)
    assert uncertainty_json(u)["sobol"]["breakevens"][0]["indices"] is None


def test_sobol_output_is_the_same_bytes_for_the_same_seed_zero_included(tmp_path):
    # seed 0 is the default: SALib's bootstrap must be seeded for it too (it treats a false seed as none)
    pytest.importorskip("SALib")
    (tmp_path / "spec.ct").write_text(HEAD + "param s1 = 500 ~ uniform(0, 1000)\nparam r = 1.1 ~ samples([1.02, 1.3, 1.5])\n" + WAN + "scheme a { payload = dense; collective = hier_allreduce; steps = s1 * r }\n", encoding="utf-8")
    runs = [CliRunner().invoke(app, ["uncertainty", str(tmp_path / "spec.ct"), "-n", "2000", "-f", "json", "--seed", "0"]) for _ in range(2)]
    assert [r.exit_code for r in runs] == [0, 0] and runs[0].stdout == runs[1].stdout
    assert json.loads(runs[0].stdout)["sobol"]["time_to_target"]["a"]["r"]["S1_conf"] > 0
