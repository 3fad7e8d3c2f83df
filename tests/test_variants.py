"""Variants of the sites: a scheme runs on the hardware its variant describes.

Expected values are derived by hand below (every latency is 0, so that only bytes
over bandwidth count), or come from an independent path: the same hardware written
as its own file without variants, a numeric root-finder (scipy's brentq) on the two
step times, the simulator's event loop against the closed form.

The spec: model P = 1e9 values of v = 2 B, so D = v P = 2e9 B; 6e12 FLOP per step
on a device of 1000 TFLOP/s x 0.5, so compute = 6e12 / 5e14 = 0.012 s. Two dcs of
L = 2 workers; intra-dc links B = 100 GB/s; the WAN W = wan_bw = 12.5 GB/s at the
default; the module `q` in every port at 25 GB/s (its optics performs the DCT at
50 GB/s, so nothing is charged to a budget).

hier_allreduce of c bytes (docs/cost-model.md, ctdsl/symbolic/routing.py):
reduce-scatter in each dc, L - 1 = 1 step of c/L; all-reduce of each shard across
the 2 dcs, 2 steps of c/(L N_dc) = c/4, where the WAN edge carries both workers'
shards (c/2); all-gather in each dc, 1 step of c/L. A transfer takes the largest
of bytes over bandwidth on the edges of its route.
"""

from __future__ import annotations

import json
import textwrap

import pytest
import sympy as sp
from scipy.optimize import brentq
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.simulate import engine
from ctdsl.simulate.plan import build_plans, free_spec, loaded_edges
from solvekit import C, ROOT, solve_text

HARDWARE = """\
param wan_bw = 12.5 GB/s in 1 GB/s .. 1000 GB/s log 31
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000; flops_per_token = 6e9 FLOP }
device d { peak = 1000 TFLOP/s; efficiency = 0.5 }
link intra { bandwidth = 100 GB/s; latency = 0 s }
link slow_intra { bandwidth = 50 GB/s; latency = 0 s }
link wan { bandwidth = wan_bw; latency = 0 s }
link wan4 { bandwidth = 4 * wan_bw; latency = 0 s }
link busy_wan { bandwidth = wan_bw; latency = 0 s; load = 0.5; transfer = 1 GB }
switch tor {}
pluggable q { port { rate = 25 GB/s }; optics { rate = 50 GB/s; performs = [dct] }; ops = [fft, dct, mac, add] }
pluggable q50 { port { rate = 50 GB/s }; ops = [fft, dct, mac, add] }
switch agg { sum = true }
"""
SITES = """\
dc east {{ workers = 2; device = d; link = intra; switch = tor{plug} }}
dc west : east {{}}
wan east <-> west = wan
"""
VARIANTS = """\
variant bare { pluggable = none }
variant fat : bare { wan east <-> west = wan4 }
variant oneway : bare { wan east -> west = wan4 }
variant lopsided : bare { east { link = slow_intra } }
variant big : bare { workers = 4 }
variant busy : bare { wan east <-> west = busy_wan }
variant other { pluggable = q50 }
variant summing : bare { switch = agg }
scheme dense_module { payload = dense; collective = hier_allreduce; steps = 1000 }
scheme band_module { payload = band; fraction = 1/16; at = q; collective = hier_allreduce; steps = 1000 }
scheme dense_bare { payload = dense; collective = hier_allreduce; steps = 1000; sites = bare }
scheme dense_fat { payload = dense; collective = hier_allreduce; steps = 1000; sites = fat }
scheme dense_oneway { payload = dense; collective = hier_allreduce; steps = 1000; sites = oneway }
scheme dense_lop { payload = dense; collective = hier_allreduce; steps = 1000; sites = lopsided }
scheme dense_big { payload = dense; collective = hier_allreduce; steps = 1000; sites = big }
scheme dense_busy { payload = dense; collective = hier_allreduce; steps = 1000; sites = busy }
scheme dense_other { payload = dense; collective = hier_allreduce; steps = 1000; sites = other }
scheme dense_sum { payload = dense; collective = innet_sum; steps = 1000; sites = summing }
breakeven band_module vs dense_bare over wan_bw
"""
MODULE = "; pluggable = q"
SPEC = HARDWARE + SITES.format(plug=MODULE) + VARIANTS
W = 12.5e9


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("variants") / "spec.ct"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sol(spec_path):
    return ctdsl.load(spec_path).solve()


def _step(sol, name):
    return sol.schemes[name].step_time.value


# ---- step times on each variant, by hand -----------------------------------------------------------


def test_scheme_without_the_module_is_the_bare_cluster(sol, tmp_path):
    # dense on `bare` (pluggable = none): c = D = 2e9 B over worker <-> switch at B = 1e11 B/s
    #   reduce-scatter: 1 step of c/2 = 1e9 B / 1e11 B/s = 0.01 s
    #   across dcs:     2 steps, each max(c/4 / B, (c/2) / W) = max(0.005, 1e9 / 12.5e9 = 0.08) = 0.08 s
    #   all-gather:     0.01 s
    # step = 0.012 + 0.01 + 2 x 0.08 + 0.01 = 0.192 s
    assert _step(sol, "dense_bare") == pytest.approx(0.012 + 0.01 + 2 * 0.08 + 0.01, rel=1e-12)
    # the same hardware as a file of its own, without the module and without variants
    alone = solve_text(tmp_path, HARDWARE + SITES.format(plug="") + "scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }\n")
    assert _step(sol, "dense_bare") == pytest.approx(alone.schemes["dense"].step_time.value, rel=1e-12)
    assert sol.schemes["dense_bare"].energy_per_step.value == pytest.approx(alone.schemes["dense"].energy_per_step.value, rel=1e-12)


def test_schemes_on_the_declared_sites_are_unchanged(sol, tmp_path):
    # dense through the module: every worker's edge is the port at 25 GB/s
    #   reduce-scatter: 1e9 B / 2.5e10 B/s = 0.04 s; across: 2 x max(5e8 / 2.5e10, 0.08) = 0.16 s; all-gather 0.04 s
    assert _step(sol, "dense_module") == pytest.approx(0.012 + 0.04 + 0.16 + 0.04, rel=1e-12)
    # band 1/16 in the module: the dense stream through the slowest stage, 2e9 B / 2.5e10 B/s = 0.08 s;
    # then c = 1.25e8 B: 6.25e7 / 2.5e10 = 0.0025 s; 2 x max(3.125e7 / 2.5e10, 6.25e7 / 1.25e10 = 0.005); 0.0025 s
    assert _step(sol, "band_module") == pytest.approx(0.012 + 0.08 + 0.0025 + 2 * 0.005 + 0.0025, rel=1e-12)
    # and the same as a file without any variant
    plain = solve_text(
        tmp_path,
        HARDWARE + SITES.format(plug=MODULE) + "\n".join(line for line in VARIANTS.splitlines() if line.startswith("scheme") and "_module" in line) + "\n",
    )
    for name in ("dense_module", "band_module"):
        assert sol.schemes[name].step_time.value == plain.schemes[name].step_time.value
        assert sol.schemes[name].energy_per_step.value == plain.schemes[name].energy_per_step.value
        assert sol.schemes[name].sites is None


def test_a_variant_replaces_a_wan_link_and_inherits_its_base(spec_path, sol):
    spec = ctdsl.load(spec_path).spec
    fat = spec.variants["fat"]
    assert all(dc.pluggable is None for dc in fat.dcs.values())  # from its base, `bare`
    assert [(w.a, w.b, w.link) for w in fat.wans] == [("east", "west", "wan4"), ("west", "east", "wan4")]
    assert [w.link for w in spec.wans] == ["wan", "wan"]  # the declared sites keep theirs
    # across dcs: 2 x (1e9 B / 5e10 B/s = 0.02 s) (the intra shard, 5e8 / 1e11 = 0.005 s, is smaller)
    assert _step(sol, "dense_fat") == pytest.approx(0.012 + 0.01 + 2 * 0.02 + 0.01, rel=1e-12)


def test_a_variants_wan_takes_its_own_count_of_links(tmp_path):
    # `= wan * 8` in a variant: eight links of W in parallel, 8 x 12.5e9 = 1e11 B/s across.
    # across dcs: 2 x max(c/4 / B = 0.005, (c/2) / 8W = 1e9 / 1e11 = 0.01) = 0.02 s
    # A variant's WAN is the link and count it writes: `= wan4` on sites declared `= wan * 2` is one
    # link of 4W, not two: 2 x 1e9 / 5e10 = 0.04 s across, where the declared 2W take 2 x 0.04 = 0.08 s.
    sites = SITES.format(plug="").replace("= wan\n", "= wan * 2\n")
    text = HARDWARE + sites + textwrap.dedent("""\
        variant eight { wan east <-> west = wan * 8 }
        variant more : eight { workers = 2 }
        variant swap { wan east <-> west = wan4 }
        scheme declared { payload = dense; collective = hier_allreduce; steps = 1000 }
        scheme on_eight { payload = dense; collective = hier_allreduce; steps = 1000; sites = eight }
        scheme on_more { payload = dense; collective = hier_allreduce; steps = 1000; sites = more }
        scheme on_swap { payload = dense; collective = hier_allreduce; steps = 1000; sites = swap }
        """)
    sol = solve_text(tmp_path, text)
    rest = 0.012 + 0.01 + 0.01  # compute, reduce-scatter and all-gather inside each dc
    assert _step(sol, "declared") == pytest.approx(rest + 2 * 1e9 / (2 * W), rel=1e-12)
    assert _step(sol, "on_eight") == pytest.approx(rest + 2 * 0.01, rel=1e-12)
    assert _step(sol, "on_more") == pytest.approx(rest + 2 * 0.01, rel=1e-12)  # inherited with its count
    assert _step(sol, "on_swap") == pytest.approx(rest + 2 * 1e9 / (4 * W), rel=1e-12)


def test_a_variants_wan_count_with_a_unit_is_an_error(tmp_path):
    text = HARDWARE + SITES.format(plug="") + "variant v { wan east <-> west = wan * 8 GB }\n"
    path = tmp_path / "spec.ct"
    path.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(app, ["check", str(path)])
    line = text.count("\n")  # the variant is the last line
    col = text.splitlines()[-1].index("8 GB") + 1
    assert r.exit_code == 1
    assert f"spec.ct:{line}:{col}: CT202" in r.output
    assert r.output.count("CT202") == 1  # one mistake, one diagnostic, though it names both directions


def test_one_direction_of_a_wan(spec_path, sol):
    g = ctdsl.load(spec_path).spec.variants["oneway"].topology
    env = {"wan_bw": W}
    from ctdsl.model import expr as E

    assert E.evaluate(g.edge("east.tor", "west.tor").bandwidth, env) == 4 * W
    assert E.evaluate(g.edge("west.tor", "east.tor").bandwidth, env) == W
    # the slower direction binds each step across: 1e9 / 12.5e9 = 0.08 s, as on `bare`
    assert _step(sol, "dense_oneway") == pytest.approx(0.192, rel=1e-12)


def test_a_field_for_one_dc_only(spec_path, sol):
    spec = ctdsl.load(spec_path).spec
    lop = spec.variants["lopsided"].dcs
    assert (lop["east"].link, lop["west"].link) == ("slow_intra", "intra")
    # east at 50 GB/s: reduce-scatter 1e9 / 5e10 = 0.02 s (west's 0.01 s waits for it); all-gather the same;
    # across: 2 x max(5e8 / 5e10 = 0.01, 0.08) = 0.16 s
    assert _step(sol, "dense_lop") == pytest.approx(0.012 + 0.02 + 0.16 + 0.02, rel=1e-12)


def test_workers_for_every_dc(sol):
    # L = 4: reduce-scatter 3 steps of c/4 = 5e8 B / 1e11 = 0.005 s -> 0.015 s; across: 2 steps of c/8 = 2.5e8 B,
    # four shards on the WAN edge: 1e9 / 12.5e9 = 0.08 s each; all-gather 0.015 s
    assert _step(sol, "dense_big") == pytest.approx(0.012 + 0.015 + 0.16 + 0.015, rel=1e-12)


def test_another_module_and_a_summing_switch(spec_path, sol):
    spec = ctdsl.load(spec_path).spec
    assert {dc.pluggable for dc in spec.variants["other"].dcs.values()} == {"q50"}
    # the port at 50 GB/s: reduce-scatter 1e9 / 5e10 = 0.02 s; across 2 x max(5e8 / 5e10, 0.08); all-gather 0.02 s
    assert _step(sol, "dense_other") == pytest.approx(0.012 + 0.02 + 0.16 + 0.02, rel=1e-12)
    # innet_sum at the variant's summing switch, no module: up, 2e9 B / 1e11 = 0.02 s; between the switches
    # 2 (N_dc - 1) = 2 steps of c / N_dc = 1e9 B / 12.5e9 = 0.08 s; down, 0.02 s
    assert {dc.switch for dc in spec.variants["summing"].dcs.values()} == {"agg"}
    assert _step(sol, "dense_sum") == pytest.approx(0.012 + 0.02 + 2 * 0.08 + 0.02, rel=1e-12)


# ---- break-even between variants -----------------------------------------------------------------


def test_breakeven_between_schemes_on_two_variants(sol):
    # band_module (declared sites) and dense_bare (variant bare), both WAN-bound near the root:
    #   T_module(W) = 0.012 + 0.08 + 0.005 + 2 x 6.25e7 / W = 0.097 + 1.25e8 / W   (W < 5e10)
    #   T_bare(W)   = 0.012 + 0.02 + 2 x 1e9 / W           = 0.032 + 2e9 / W      (W < 2e11)
    #   equal at 0.065 = 1.875e9 / W: W = 1.875e9 / 0.065 = 28.846... GB/s
    (b,) = sol.breakevens
    (root,) = b.result.roots
    assert root.value == pytest.approx(1.875e9 / 0.065, rel=1e-12)
    assert (root.below, root.above) == ("band_module", "dense_bare")
    # a numeric root-finder on the two step times, evaluated from their exact forms
    sym = sol.symbols["wan_bw"]
    tm, tb = sol.schemes["band_module"].step_time.expr, sol.schemes["dense_bare"].step_time.expr
    f = sp.lambdify(sym, tm - tb, "math")
    assert brentq(f, 1e9, 1e12, xtol=1e-3, rtol=1e-15) == pytest.approx(root.value, rel=1e-9)


def test_sweep_follows_the_variant(sol):
    import numpy as np

    from ctdsl.numeric import CompiledForms, evaluate

    forms = CompiledForms(sol)
    ws = np.array([1e9, 1e10, 1e11])
    chunk = evaluate(forms, {"wan_bw": ws})
    # dense_bare: 0.032 + 2 max(0.005, 1e9 / W)
    expected = 0.032 + 2 * np.maximum(0.005, 1e9 / ws)
    assert np.allclose(chunk.values[("dense_bare", "step")], expected, rtol=1e-12, atol=0)


# ---- graph, lint, simulation, outputs --------------------------------------------------------------


def _graph(spec_path, *args):
    out = CliRunner().invoke(app, ["graph", str(spec_path), *args])
    assert out.exit_code == 0, out.stderr
    d = json.loads(out.stdout)
    return len(d["nodes"]), len(d["edges"])


def test_graph_of_each_variant(spec_path):
    # declared: per dc 2 workers + 2 modules + 1 switch = 5 nodes; per worker w<->m and m<->switch, 4 edges;
    # 2 x 5 = 10 nodes, 4 workers x 4 + 2 WAN directions = 18 edges
    assert _graph(spec_path) == (10, 18)
    # bare: per dc 2 workers + 1 switch; 4 workers x 2 + 2 = 10 edges
    assert _graph(spec_path, "--variant", "bare") == (6, 10)
    # big: 4 workers a dc: 2 x 5 = 10 nodes, 8 x 2 + 2 = 18 edges
    assert _graph(spec_path, "--variant", "big") == (10, 18)
    bad = CliRunner().invoke(app, ["graph", str(spec_path), "--variant", "nope"])
    assert bad.exit_code == 2 and "no variant 'nope'" in bad.stderr and "Traceback" not in bad.stderr


def _lint(tmp_path, text):
    path = tmp_path / "lint.ct"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    out = CliRunner().invoke(app, ["lint", str(path), "--format", "json"])
    assert out.exit_code in (0, 1), out.stderr
    return json.loads(out.stdout)


def _codes(found) -> list[str]:
    items = found if isinstance(found, list) else found.get("diagnostics", found.get("findings", []))
    return sorted(d["code"] for d in items)


def test_lint_reads_the_variant_a_scheme_runs_on(tmp_path):
    # the hardware without the definitions the other tests use (CTL001 would name them)
    kept = [line for line in HARDWARE.splitlines() if not line.startswith(("link slow_intra", "link wan4", "link busy_wan", "pluggable q", "switch agg"))]
    base = "\n".join(kept) + "\n" + SITES.format(plug="") + "scheme dense { payload = dense; collective = hier_allreduce; steps = 10 }\n"
    assert _codes(_lint(tmp_path, base)) == []
    # one worker a dc on the variant a hierarchical scheme runs on: CTL010 there, and only there
    solo = base + "variant solo { workers = 1 }\nscheme dense_solo { payload = dense; collective = hier_allreduce; steps = 10; sites = solo }\n"
    found = _lint(tmp_path, solo)
    assert _codes(found) == ["CTL010", "CTL010"]
    assert "variant 'solo'" in json.dumps(found)
    # a module only a variant has, whose charged DCT exceeds its budget: CTL003
    small = "pluggable small { port { rate = 25 GB/s }; compute { budget = 50 GFLOP/s }; ops = [dct] }\n"
    charged = base + small + "variant mod { pluggable = small }\nscheme band { payload = band; fraction = 1/16; at = small; collective = hier_allreduce; steps = 10; sites = mod }\n"
    assert _codes(_lint(tmp_path, charged)) == ["CTL003"]
    # a variant no scheme runs on is unused (CTL001); a link only its WAN names goes with it
    unused = base + "link wan4 { bandwidth = 4 * wan_bw; latency = 0 s }\nvariant spare { wan east <-> west = wan4 }\n"
    found = _lint(tmp_path, unused)
    assert _codes(found) == ["CTL001", "CTL001"] and "variant 'spare'" in json.dumps(found)
    used = unused + "scheme on_spare { payload = dense; collective = hier_allreduce; steps = 10; sites = spare }\n"
    assert _codes(_lint(tmp_path, used)) == []


def test_simulation_runs_each_scheme_on_its_variant(spec_path, sol):
    spec = ctdsl.load(spec_path).spec
    plans = build_plans(free_spec(spec))
    for name in ("dense_bare", "dense_fat", "dense_lop", "dense_big", "dense_module", "band_module"):
        r = engine.run(plans[name], 7, 0, steps=3, warmup=1, load=False, jitter=False)
        assert r.step == pytest.approx(sol.schemes[name].step_time.value, rel=1e-12), name
    assert plans["dense_bare"].workers == 4 and plans["dense_big"].workers == 8


def test_a_loaded_wan_in_a_variant_is_simulated(spec_path):
    spec = ctdsl.load(spec_path).spec
    # only variant `busy` has a loaded link: both directions of its WAN get a random stream
    assert loaded_edges(spec) == [("east.tor", "west.tor"), ("west.tor", "east.tor")]
    plan = build_plans(spec, ["dense_busy"])["dense_busy"]
    # the WAN is shared fairly (the default sharing: processor sharing, queueing.py): the 2 steps across
    # dcs each put 2 workers' 2 GB / 4 on it, x = 1 GB / 12.5 GB/s = 0.08 s, one flow of 2 x that
    # stays 2 x / (1 - rho) at rho = 0.5: it waits 2 x rho / (1 - rho) = 0.16 s
    assert plan.queueing == pytest.approx(2 * 0.08 * 0.5 / 0.5, rel=1e-12)
    assert plan.free_step == pytest.approx(0.192, rel=1e-12)
    r = engine.run(plan, 7, 0, steps=20, warmup=2, load=True, jitter=False)
    assert r.step > plan.free_step  # it queued behind the background transfers


def test_solve_names_the_sites_of_each_scheme(spec_path):
    out = CliRunner().invoke(app, ["solve", str(spec_path), "--format", "json"])
    assert out.exit_code == 0, out.stderr
    sites = {s["name"]: s["sites"] for s in json.loads(out.stdout)["schemes"]}
    assert sites["dense_module"] is None and sites["dense_bare"] == "bare" and sites["dense_fat"] == "fat"
    md = CliRunner().invoke(app, ["solve", str(spec_path), "--format", "markdown"]).stdout.splitlines()
    header = next(i for i, line in enumerate(md) if line.startswith("| scheme | sites |"))
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1] for line in md[header + 2 : header + 10] if line.startswith("|")}
    assert rows["dense_module"] == "declared" and rows["dense_lop"] == "lopsided"
    csv = CliRunner().invoke(app, ["solve", str(spec_path), "--format", "csv"]).stdout.splitlines()
    assert csv[0].endswith(",sites") and csv[1].startswith("dense_module,") and csv[1].endswith(",declared")
    explain = CliRunner().invoke(app, ["solve", str(spec_path), "--explain", "dense_fat"])
    assert "runs on variant fat of the sites" in explain.stdout


def test_the_six_variant_example(tmp_path):
    sol = ctdsl.load(ROOT / "examples" / "16_variants.ct").solve()
    assert {n: r.sites for n, r in sol.schemes.items()} == {
        "adamw": "gpu_only",
        "diloco": "gpu_only",
        "demo": "gpu_only",
        "band_gpu": "gpu_only",
        "band_module": None,
        "band_switch": "summing",
    }
    sym = sol.symbols["wan_bw"]
    for b in sol.breakevens:
        tx, ty = sol.schemes[b.x].time_to_target.expr, sol.schemes[b.y].time_to_target.expr
        f = sp.lambdify(sym, tx - ty, "math")
        for root in b.result.roots:  # each root is a sign change of the difference of the two times
            assert f(root.value * 0.99) * f(root.value * 1.01) < 0, (b.x, b.y)
    ties = {(b.x, b.y): len(b.result.roots) for b in sol.breakevens}
    assert ties == {("band_module", "adamw"): 1, ("band_switch", "band_gpu"): 1, ("band_module", "band_gpu"): 0}


def test_the_report_lists_each_variant(tmp_path):
    out = tmp_path / "r.md"
    done = CliRunner().invoke(app, ["report", str(ROOT / "examples" / "16_variants.ct"), "-o", str(out)])
    assert done.exit_code == 0, done.stderr
    text = out.read_text(encoding="utf-8")
    assert "| summing | east | 4 | accel | ib_ndr | agg | - | band_switch |" in text
    assert "| gpu_only | west | 4 | accel | ib_ndr | tor | - | adamw, diloco, demo, band_gpu |" in text


def test_a_variant_keeps_the_declared_jitter(tmp_path):
    # jitter 12 ms x Exp(1) on every worker: the slowest of N = 4 waits 12 ms x H_4 = 12 ms x 25/12 = 25 ms
    # per step (H = 1); a variant changes the hardware, not the workers' variability
    sites = SITES.format(plug=MODULE).replace("switch = tor; pluggable = q", "switch = tor; pluggable = q; jitter = 12 ms")
    sol = solve_text(tmp_path, HARDWARE + sites + VARIANTS)
    for name in ("dense_module", "dense_bare", "dense_fat"):
        assert sol.schemes[name].components[C("stragglers")].value == pytest.approx(0.012 * 25 / 12, rel=1e-12), name
    # dense on `big` has 8 workers: 12 ms x H_8 = 12 ms x 761/280
    assert sol.schemes["dense_big"].components[C("stragglers")].value == pytest.approx(0.012 * 761 / 280, rel=1e-12)
