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
    got = breakeven_roots(forms, MoneyForms(sol, forms), sol.breakevens[0], sol.spec.params["bw"], drawn, 6)
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
