"""Hostile specs for the back ends: floats out of range, integrals that fail, runs without end.

Each case is a spec written to tmp_path and run through the commands as a
subprocess (solve --format json, sweep --format csv, report -o .md, simulate
with a few steps), with a timeout: the exit code, the diagnostic code or the
'inf' / not-finite value stated, and never a traceback. Where a number is
involved it is compared with one derived by hand (in the comment above it).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from typer.testing import CliRunner

from ctdsl import limits
from ctdsl.cli import app
from ctdsl.symbolic import stragglers as ST
from ctdsl.symbolic.convert import value
from backstop import HANG

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = HANG  # s: a backstop (tests/backstop.py); every case here takes a few seconds

HEAD = """\
import std.devices
import std.links
import std.models

model job : llama3_8b {{ tokens = 8192 }}
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{}}
link shared_wan : eth100g {{ {link} }}
dc east {{
  workers = 4
  device = gpu0
  link = ib_ndr
  switch = tor
  {dc}
}}
dc west : east {{}}
wan east <-> west = shared_wan
scheme adamw {{ payload = dense; collective = hier_allreduce; steps = 10000 {scheme} }}
"""


def spec(tmp_path: Path, name: str, link: str = "", dc: str = "", scheme: str = "", text: str | None = None) -> Path:
    path = tmp_path / f"{name}.ct"
    path.write_text(text if text is not None else HEAD.format(link=link, dc=dc, scheme=scheme), encoding="utf-8")
    return path


def ctdsl(*args) -> subprocess.CompletedProcess:
    code = "import sys; from ctdsl.cli import main; sys.argv = ['ctdsl'] + sys.argv[1:]; main()"
    r = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "NO_COLOR": "1", "MPLBACKEND": "Agg"},
    )
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    return r


def scheme_json(path: Path) -> dict:
    r = ctdsl("solve", path, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["schemes"][0]


def stragglers_of(s: dict) -> tuple[float | None, str]:
    (cf,) = [c for c in s["closed_forms"] if c["component"] == "stragglers"]
    return s["step"]["components"]["stragglers"]["seconds"], cf["formula"]


# ---- class 1 and 9: floats in the stragglers term ------------------------------------------

HUGE_SIGMA = "jitter = 200 ms; jitter_kind = lognormal; jitter_sigma = 1000"


def test_huge_lognormal_sigma_is_inf_on_solve_sweep_and_simulate(tmp_path):
    # E[X] = exp(sigma^2 / 2) = exp(500000): beyond a float, and E[max] >= E[X]
    path = spec(tmp_path, "sigma", dc=HUGE_SIGMA)
    s = scheme_json(path)
    seconds, formula = stragglers_of(s)
    assert seconds is None and s["step"]["seconds"] is None  # JSON writes a non-finite value as null
    assert "= inf (beyond the float range)" in formula
    swept = HEAD.format(link="", dc="jitter = j; jitter_kind = lognormal; jitter_sigma = 1000", scheme="")
    ranged = spec(tmp_path, "sigma_ranged", text="param j = 200 ms in 100 ms .. 300 ms lin 3\n" + swept)
    r = ctdsl("sweep", ranged, "--format", "csv")
    assert r.returncode == 0, r.stderr
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(got) == 3 and all(g["adamw.step_s"] == "" for g in got)  # not finite: an empty cell
    assert all(g["adamw.binding"] == "stragglers" for g in got)
    r = ctdsl("simulate", path, "--steps", "3", "--seeds", "2", "--warmup", "1")
    assert r.returncode == 0, r.stderr
    assert "adamw" in r.stdout


def test_huge_lognormal_sigma_report(tmp_path):
    path = spec(tmp_path, "sigma", dc=HUGE_SIGMA)
    r = ctdsl("report", path, "-o", tmp_path / "r.md")
    assert r.returncode == 0


def test_lognormal_with_large_period_follows_the_bound(tmp_path):
    # H = 10^6 > 10^4: the normal law, kept within E[max] <= N E[Y]. With sigma = 30 the
    # variance exp(900) is beyond a float, so the bound binds: extra = jitter x N exp(sigma^2 / 2)
    # = 0.2 s x 8 x exp(450)
    path = spec(tmp_path, "period", dc="jitter = 200 ms; jitter_kind = lognormal; jitter_sigma = 30", scheme="; period = 1e6")
    seconds, formula = stragglers_of(scheme_json(path))
    assert seconds == pytest.approx(0.2 * 8 * math.exp(450), rel=1e-9)
    assert "normal approximation" in formula
    # a round of 10^6 steps is not simulated
    r = ctdsl("simulate", path, "--steps", "3", "--seeds", "2")
    assert r.returncode == 1
    assert ":18:78: CT608" in r.stderr and "CT608 scheme 'adamw' syncs every 1e+06 steps" in r.stderr


def test_lognormal_heavy_tail_is_integrated_where_it_is():
    # sigma = 30, H = 1: E[max of N] = N E[X Phi(Z)^(N-1)], and under the tilted law Z ~ N(30, 1)
    # Phi(Z) is 1 to double precision, so E[max] = N exp(sigma^2 / 2) = 8 exp(450)
    c, status, _ = ST.unit_factor("lognormal", 8, 1, 30.0)
    assert float(c) == pytest.approx(8 * math.exp(450), rel=1e-9)
    assert status == ST.INTEGRATED
    # and a small sigma stays the known value: E[max of 8 LogNormal(0, 0.5^2)] = 2.13894 (to 5e-5
    # by a 200000-sample Monte Carlo, 2.1369)
    assert float(ST.unit_factor("lognormal", 8, 1, 0.5)[0]) == pytest.approx(2.13894, abs=1e-5)


def test_exponential_large_period_is_normal():
    # H = 10^6: c = (H + sqrt(H) e_8) / H = 1 + e_8 / 1000, e_8 = E[max of 8 N(0, 1)] = 1.4236003
    c, status, _ = ST.unit_factor("exponential", 8, 1e6)
    assert float(c) == pytest.approx(1 + 1.4236003 / 1000, rel=1e-9)
    assert status == ST.APPROXIMATION


def test_integral_that_does_not_converge_falls_back_to_the_normal_law(monkeypatch):
    # the regularised incomplete gamma of Gamma(10^5, 1) raises mpmath's NoConvergence: with the
    # Wilson-Hilferty and normal thresholds moved out of the way the integral is tried and fails;
    # then c = 1 + e_8 / sqrt(10^5) and the formula says so
    monkeypatch.setattr(ST, "_WH_H", 1e9)
    monkeypatch.setattr(ST, "_CLT_H", 1e9)
    ST.unit_factor.cache_clear()
    try:
        c, status, formula = ST.unit_factor("exponential", 8, 1e5)
    finally:
        ST.unit_factor.cache_clear()
    assert float(c) == pytest.approx(1 + 1.4236003 / math.sqrt(1e5), rel=1e-7)
    assert status == ST.APPROXIMATION and "the integral did not converge" in formula


def test_unlike_groups_with_a_huge_sigma_are_inf():
    groups = [ST.Group(4, 1.0, 0.2, "lognormal", 1000.0), ST.Group(4, 0.5, 0.1, "exponential")]
    assert ST.excess(groups, 1) == (math.inf, ST.INTEGRATED)


# ---- class 1: exact values beyond a float in value() and the compiled forms ----------------


def test_value_is_deterministic_out_of_range():
    x, y = sp.symbols("x y", positive=True)
    inf = math.inf
    assert math.isnan(value(x - y, {x: inf, y: inf}))  # fsum raised ValueError
    assert value(x + y, {x: 1e308, y: 1e308}) == inf  # fsum raised OverflowError
    assert value(x**200, {x: 1e300}) == inf  # float ** raised OverflowError
    assert value((-x) ** 3, {x: 1e200}) == -inf
    assert value(sp.Integer(10) ** 400 * x, {x: 1.0}) == inf
    assert value(sp.ceiling(x), {x: inf}) == inf  # math.ceil raised OverflowError
    assert value(sp.log(x), {x: 0.0}) == -inf  # math.log raised ValueError
    assert math.isnan(value(sp.Max(x, y), {x: math.nan, y: 1.0}))
    assert math.isnan(value(sp.Max(y, x), {x: math.nan, y: 1.0}))  # whatever the order


SHAPE = """\
import std.devices
import std.links
param L = 2 in 1 .. 10 log 3
model big {
  layers = L
  width = 10^64 * 10^64 * 10^64
  heads = 32
  kv_heads = 8
  mlp = 14336
  vocab = 128256
  bytes_per_value = 2 B
  tokens = 8192
}
device gpu0 : h100 { efficiency = 0.4 }
switch tor {}
dc east { workers = 8; device = gpu0; link = ib_ndr; switch = tor }
dc west : east {}
wan east <-> west = eth100g
scheme dense { payload = dense; collective = hier_allreduce; steps = 100 }
"""


def test_parameter_count_beyond_a_float_sweeps_as_not_finite(tmp_path):
    # width = 10^192 exactly: width^2 x layers is about 10^384 parameters, an exact integer that
    # the lambdified function turned into OverflowError; now inf, and the cells are empty
    path = spec(tmp_path, "shape", text=SHAPE)
    r = ctdsl("sweep", path, "--format", "csv")
    assert r.returncode == 0, r.stderr
    got = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [float(g["L"]) for g in got] == pytest.approx([1, math.sqrt(10), 10])
    assert all(g["dense.step_s"] == "" for g in got)
    s = scheme_json(path)
    assert s["step"]["seconds"] is None


def test_parameter_count_beyond_a_float_report(tmp_path):
    r = ctdsl("report", spec(tmp_path, "shape", text=SHAPE), "-o", tmp_path / "r.md")
    assert r.returncode == 0


def test_default_times_default_beyond_a_float_is_ct306_everywhere(tmp_path):
    text = HEAD.format(link="bandwidth = a * b * 1 GB/s", dc="", scheme="")
    path = spec(tmp_path, "mul", text="param a = 1e300 in 1 .. 1e300 log 3\nparam b = 1e300\n" + text)
    for args in (["solve", path, "-f", "json"], ["sweep", path], ["report", path, "-o", tmp_path / "r.md"], ["simulate", path, "--steps", "2"]):
        r = ctdsl(*args)
        assert r.returncode == 1 and "CT306 shared_wan.bandwidth cannot be evaluated" in r.stderr, (args, r.stderr)


# ---- class 3: simulated events, wall time, default grids ------------------------------------


@pytest.mark.parametrize("size", ["1 B", "1e-12 B"])
def test_loaded_wan_with_tiny_transfers_is_refused_before_it_runs(tmp_path, size):
    # S = 1 B / 12.5 GB/s = 8e-11 s: at rho = 0.99 about 1.2e10 arrivals per simulated second
    path = spec(tmp_path, "wan", link=f"load = 0.99; transfer = {size}")
    r = ctdsl("simulate", path, "--steps", "3", "--seeds", "2", "--warmup", "1")
    assert r.returncode == 1
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"{path}:8:") and "CT608 link 'shared_wan'" in first
    assert "background transfers; at most 2,000,000 are simulated" in first
    estimate = float(first.split("about ")[1].split(" ")[0])
    assert estimate > 1e12  # a second of steps at least
    # the closed form is still there: M/D/1 W = rho S / (2 (1 - rho)), tiny and finite
    assert scheme_json(path)["step"]["seconds"] > 0


def test_wall_budget_keeps_the_seeds_done(monkeypatch):
    # a budget of 0 s: the check after the first run stops the rest, deterministically
    monkeypatch.setattr(limits, "MAX_SIM_WALL_SECONDS", 0)
    r = CliRunner().invoke(app, ["simulate", str(ROOT / "examples" / "15_contention.ct"), "--steps", "3", "--seeds", "3", "-f", "json"], env={"NO_COLOR": "1"})
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    assert "1 of 9 runs done; scheme 'adamw' has 1 of 3 seeds, not simulated: two_bit, diloco" in r.stderr
    assert "CT608 [warning] the simulation stopped after 0 s (the wall budget)" in r.stderr
    assert data  # the partial result is printed
    assert "Traceback" not in r.output


def test_default_sweep_of_ten_billion_points_is_ct607(tmp_path):
    text = "param a = 1 in 1 .. 2 lin 100000\nparam b = 1 in 1 .. 2 lin 100000\n"
    path = spec(tmp_path, "grid", text=text)
    r = ctdsl("sweep", path)
    assert r.returncode == 1 and r.stdout == ""
    assert "grid.ct:2:7: CT607 the params' sweeps make a grid of 100,000 x 100,000 = 10,000,000,000 points" in r.stderr
    assert f"at most {limits.MAX_GRID_POINTS:,} are swept by default" in r.stderr
    # choosing the axes is still possible
    r = ctdsl("sweep", path, "--sweep", "a=1:2:3")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 4


def test_a_breakeven_stated_many_times_is_solved_and_shown_once(monkeypatch, tmp_path):
    """examples/17_cost_carbon.ct with its cost break-even stated 40 times (the fuzz campaign, seed 18, input 31667,
    stated it 101 times: solve took 6 s, the report over 10): one solve of it, every statement in the tables, and
    one section in the report that says how many times it is stated."""
    import ctdsl
    from ctdsl.symbolic import solve as SOLVE

    text = (ROOT / "examples" / "17_cost_carbon.ct").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("breakeven") and ln.split("#")[0].rstrip().endswith("wan_bw on cost"))
    path = spec(tmp_path, "many", text=text + "\n" + "\n".join([line] * 39) + "\n")
    calls = []
    real = SOLVE.breakeven
    monkeypatch.setattr(SOLVE, "breakeven", lambda *a, **k: calls.append(a[2:5]) or real(*a, **k))
    sol = ctdsl.load(path).solve()
    assert len(sol.breakevens) == 3 + 39 and len(calls) == 3  # the example states three
    same = [b for b in sol.breakevens if (b.over, b.on) == ("wan_bw", "cost")]
    assert len(same) == 40 and all(b is same[0] for b in same)
    out = tmp_path / "many.md"
    r = CliRunner().invoke(app, ["report", str(path), "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    md = out.read_text(encoding="utf-8")
    assert md.count("### band_module vs adamw over wan_bw on cost (stated 40 times)") == 1
    assert md.count("### band_module vs adamw over wan_bw on cost") == 1


def test_a_complex_value_is_refused_without_printing_the_expression(monkeypatch):
    """A cubic's three real roots, written by Cardano's formula, pass through complex values: evaluating each
    raises NumericError, and the error must not print the root (97-113 operations here; the break-even of
    examples/20_sites.ct with replicas = 1, 49 regime pairs, printed 147 such roots for 2.2 CPU-seconds of its
    2.4, found by the fuzz campaign, seed 34 input 57932: tests/fuzz/crashes/timeout_breakeven_cubic_roots_printed.ct)."""
    from sympy.polys.polyroots import roots_cubic
    from sympy.printing.str import StrPrinter

    from ctdsl.symbolic.convert import NumericError

    a, b = sp.Symbol("a", positive=True), sp.Symbol("b")
    roots = roots_cubic(sp.Poly(sp.expand((b - 1) * (b - 2) * (b - a)), b))
    assert len(roots) == 3 and all(sp.count_ops(r) > 90 for r in roots)
    printed = []
    real = StrPrinter.doprint
    monkeypatch.setattr(StrPrinter, "doprint", lambda self, e: printed.append(e) or real(self, e))
    for r in roots:
        with pytest.raises(NumericError, match="complex value"):
            value(r, {a: 3.0})
    assert printed == []
