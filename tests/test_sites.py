"""Dcs that stand for K alike sites (`sites = K`), against bytes and times derived by hand.

Every figure is worked out here from docs/language.md ("dc", "sites") and
docs/cost-model.md ("Replicas"), not read from the code. The common parts, as in
tests/test_replicas.py:

  model: P = 64e9 parameters at 2 B, so D = 128e9 B; tokens 1000 per step per
  replica; device 100 TFLOP/s at efficiency 1. NIC link 50 GB/s, 10 us (counted
  once per transfer); WAN link 100 GB/s, 1 ms, four in parallel (400 GB/s).
  A replica is tp 4 x pp 2 = 8 GPUs, one NIC each; a site holds R = 16 of them,
  128 GPUs, and each GPU's shard is s = D / 8 = 16e9 B, synced by a shard group of
  n = 16 members in each site. From a GPU to a GPU of another replica of its site:
  one NIC segment, 10 us; to the next site: NIC, WAN, NIC, 1.02 ms.

K enters as a param: nothing is unrolled per site, so the exact forms hold for any
K and the solve does the same work at K = 3 as at K = 30,000.
"""

from __future__ import annotations

import cProfile
import json
import math
import pstats

import pytest
from scipy.optimize import brentq
from siteskit import BREAKEVEN, D, HEAD, LAT_ACROSS, LAT_IN, REL, S, WAN
from siteskit import step as _step
from solvekit import C, ROOT, solve_text

import ctdsl

ALONE = HEAD + """
param K = 4 in 2 .. 100000 log 6
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
wan a <-> a = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""


def phases(result) -> dict[str, float]:
    return {p.name: p.time.value for p in result.phases}


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel)


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    path = tmp_path_factory.mktemp("alone") / "alone.ct"
    path.write_text(ALONE, encoding="utf-8")
    return path


@pytest.mark.parametrize("K", [2, 5, 1000])
def test_k_alike_sites_in_a_ring(alone, K):
    """hier_allreduce over K sites of one dc: the in-site rings do not depend on K; the
    all-reduce of the slices takes 2 (K - 1) steps of s / (n K) a GPU, and each of the K
    WANs of the ring carries a site's 128 slices a step."""
    r = ctdsl.load(alone, {"K": str(K)}).solve().schemes["x"]
    got = phases(r)
    rs = 15 * (S / 16 / 50e9 + LAT_IN)  # 0.30015 s, as in one site alone
    slice_ = S / (16 * K)
    across = 2 * (K - 1) * (LAT_ACROSS + max(slice_ / 50e9, 128 * slice_ / WAN))
    assert close(got["reduce-scatter in each dc"], rs)
    assert close(got["all-gather in each dc"], rs)
    assert close(got["all-reduce of each slice across dcs"], across)
    assert close(r.wan.value, 2 * (K - 1) / K * D)  # each WAN: 2 (K - 1) steps of D / K
    assert close(r.wire.value, 2 * 15 * S / 16 + 2 * (K - 1) * slice_)
    compute = 6 * 64e9 * 1000 / (8 * 100e12)
    step = compute + 2 * rs + across
    assert close(r.step_time.value, step)
    # energy follows every site: K x 128 GPUs' static power, K switches, and the bytes on all K WANs
    assert close(r.energy_parts["static"].value, K * 128 * 300 * step)
    assert close(r.energy_parts["switches"].value, K * 500 * step)
    assert close(r.energy_parts["links"].value, K * r.wan.value * 8 * 10e-12)


def test_two_sites_are_two_declared_dcs(tmp_path, alone):
    """sites = 2 is exactly the pair of alike dcs written out (tests/test_replicas.py's equal sites)."""
    two = solve_text(tmp_path, HEAD + """
dc a { replica = r; replicas = 16; device = d; link = nic; switch = s }
dc b : a {}
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
""").schemes["x"]
    ring = ctdsl.load(alone, {"K": "2"}).solve().schemes["x"]
    assert phases(ring) == pytest.approx(phases(two), rel=REL)
    for q in ("wan", "wire", "step_time"):
        assert close(getattr(ring, q).value, getattr(two, q).value)
    assert close(ring.energy_to_target.value, two.energy_to_target.value)


MIXED = HEAD + """
param K = 3 in 2 .. 64 log 6
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
dc b : a { replicas = 8; sites = 1 }
wan a <-> a = wan * 4
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
scheme y { payload = dense; collective = ring_allreduce; steps = 10 }
"""


@pytest.mark.parametrize("K", [3, 6])
def test_sites_of_one_dc_then_another_dc(tmp_path, K):
    """K sites of dc a (16 replicas each) and one site b (8 replicas): Kt = K + 1 sites in one ring,
    a's sites in a row, then b. Every site sends D / Kt a step across (its 128 or 64 GPUs' slices),
    so each WAN (a to a, a to b, b to a) carries D / Kt a step."""
    sol = solve_text(tmp_path, MIXED, overrides={"K": str(K)})
    x, y = sol.schemes["x"], sol.schemes["y"]
    Kt = K + 1
    rs = max(15 * (S / 16 / 50e9 + LAT_IN), 7 * (S / 8 / 50e9 + LAT_IN))  # the sites side by side: a's binds
    # a GPU of a sends s / (16 Kt), one of b s / (8 Kt); a's NICs take in on average what they send,
    # b's take a's last site's 128 slices over 64 NICs: s / (8 Kt); the WANs D / Kt
    bw_time = max(S / (8 * Kt) / 50e9, 128 * S / (16 * Kt) / WAN)
    assert close(phases(x)["reduce-scatter in each dc"], rs)
    assert close(phases(x)["all-reduce of each slice across dcs"], 2 * (Kt - 1) * (LAT_ACROSS + bw_time))
    assert close(x.wan.value, 2 * (Kt - 1) / Kt * D)
    # ring_allreduce: one ring per shard group over N = 16 K + 8 members, site after site: 2 (N - 1)
    # steps of s / N; each of the 8 groups crosses each WAN once, so a WAN carries 8 s / N a step, and
    # every NIC sends and takes in one s / N a step
    N = 16 * K + 8
    step = LAT_ACROSS + max(S / N / 50e9, 8 * S / N / WAN)
    assert close(phases(y)["ring all-reduce over all replicas"], 2 * (N - 1) * step)
    assert close(y.wan.value, 2 * (N - 1) * 8 * S / N)


INNET = HEAD.replace("switch s { power = 500 W }", "switch s { sum = true; ops = [add] }") + """
param K = 4 in 2 .. 64 log 6
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
wan a <-> a = wan * 4
scheme sum { payload = dense; collective = innet_sum; steps = 10 }
scheme gather { payload = dense; collective = hier_allgather; steps = 10 }
"""


@pytest.mark.parametrize("K", [2, 7])
def test_in_network_sum_and_all_gather_over_k_sites(tmp_path, K):
    """innet_sum: every GPU sends s up to its site's switch; the K switches all-reduce the whole D in
    2 (K - 1) steps of D / K; down s. hier_allgather: K - 1 exchange steps of s a GPU (128 s on a WAN)
    and a distribution of (K - 1) s."""
    sol = solve_text(tmp_path, INNET, overrides={"K": str(K)})
    sm, ga = phases(sol.schemes["sum"]), phases(sol.schemes["gather"])
    assert close(sm["up to the switch"], LAT_IN + S / 50e9)
    assert close(sm["all-reduce of the sums across dcs"], 2 * (K - 1) * (1e-3 + D / K / WAN))
    assert close(sm["down to the GPUs"], LAT_IN + S / 50e9)
    assert close(sol.schemes["sum"].wan.value, 2 * (K - 1) * D / K)
    assert close(ga["gather in each dc"], 15 * (LAT_IN + S / 50e9))
    assert close(ga["exchange across dcs"], (K - 1) * (LAT_ACROSS + max(S / 50e9, 128 * S / WAN)))
    assert close(ga["distribute in each dc"], 15 * (LAT_IN + (K - 1) * S / 50e9))
    assert close(sol.schemes["gather"].wan.value, (K - 1) * 128 * S)


def test_nothing_is_unrolled_and_the_solve_does_not_grow_with_k(alone):
    """The graph has the same two nodes at any K, and a solve makes the same Python calls at
    K = 3 as at K = 30,000 (cProfile's count, as bench/bench_replicas.py counts them)."""
    calls = {}
    for K in (3, 30_000):
        study = ctdsl.load(alone, {"K": str(K)})
        assert [n.id for n in study.spec.topology.nodes()] == ["a.s", "a.gpu"]
        study.solve()  # warm the caches of this process
        prof = cProfile.Profile()
        prof.enable()
        ctdsl.load(alone, {"K": str(K)}).solve()
        prof.disable()
        calls[K] = pstats.Stats(prof).total_calls
    assert abs(calls[30_000] - calls[3]) <= 0.01 * calls[3], calls


def test_breakeven_over_the_number_of_sites_against_a_bracketed_root(tmp_path):
    sol = solve_text(tmp_path, BREAKEVEN)
    (be,) = sol.breakevens
    gap = lambda K: 11000 * _step(K, 20) - 10000 * _step(K, 1)  # noqa: E731
    assert gap(2) > 0 > gap(64)  # adamw first with few sites (compute binds), diloco with many
    root = brentq(gap, 2, 64, xtol=1e-14, rtol=1e-15)
    (got,) = be.roots
    assert close(got.value, root, 1e-9), (got.value, root)
    for K in (2, 10, 64):  # and the step times themselves, anywhere in the range
        r = solve_text(tmp_path, BREAKEVEN, overrides={"K": repr(K)})
        assert close(r.schemes["adamw"].step_time.value, _step(K, 1))
        assert close(r.schemes["diloco"].step_time.value, _step(K, 20))


def test_sweep_over_k_follows_the_hand_formula(tmp_path):
    path = tmp_path / "be.ct"
    path.write_text(BREAKEVEN, encoding="utf-8")
    sw = ctdsl.load(path).sweep({"K": (2, 64, 7, "log")})
    ks = sw[sw.param_columns["K"]]
    assert len(ks) == 7 and close(ks[0], 2) and close(ks[-1], 64)
    for K, a, d in zip(ks, sw["adamw.step_s"], sw["diloco.step_s"]):
        assert close(a, _step(K, 1), 1e-9) and close(d, _step(K, 20), 1e-9)


def test_graph_shows_the_multiplicities_and_expands_a_small_ring(tmp_path):
    from typer.testing import CliRunner

    from ctdsl.cli import app

    path = tmp_path / "small.ct"
    path.write_text(ALONE.replace("replicas = 16", "replicas = 2").replace("param K = 4 in", "param K = 3 in"), encoding="utf-8")
    run = lambda *a: CliRunner().invoke(app, ["graph", str(path), *a])  # noqa: E731
    grouped = json.loads(run().stdout)
    counts = {n["id"]: n.get("count_value") for n in grouped["nodes"]}
    assert counts == {"a.s": 3, "a.gpu": 48}  # 3 switches; 3 sites x 2 replicas x 8 GPUs
    (ring,) = [e for e in grouped["edges"] if e["source"] == e["target"]]
    assert ring["count_value"] == 3 and ring["count"] == "K"  # the ring's K WANs
    dot = run("-f", "dot").stdout
    assert '"a.s" [shape=box3d, label="a.s x 3 (K)"]' in dot
    expanded = json.loads(run("--expand").stdout)
    ids = sorted(n["id"] for n in expanded["nodes"])
    assert ids[:3] == ["a.s0.gpu0", "a.s0.gpu1", "a.s0.gpu10"] and len(ids) == 3 * 16 + 3
    wans = sorted((e["source"], e["target"]) for e in expanded["edges"] if e["kind"] == "wan")
    assert wans == [("a.s0.s", "a.s1.s"), ("a.s1.s", "a.s2.s"), ("a.s2.s", "a.s0.s")]
    assert len(expanded["edges"]) == 3 * 16 * 2 + 3  # each GPU to its site's switch and back, and the ring


def test_simulation_takes_k_at_its_value(alone):
    """The simulator evaluates K at its value (here 5, by --set): the free step is solve's, and jitter
    draws one extra time per replica of every site, 5 x 16 = 80 of them."""
    study = ctdsl.load(alone, {"K": "5"})
    sol = study.solve()
    sim = study.simulate(steps=20, seeds=3, warmup=2).schemes["x"]
    assert close(sim.plan.free_step, sol.schemes["x"].step_time.value, 1e-9)
    assert sim.plan.workers == 80


def test_memory_per_gpu_does_not_change_with_k(tmp_path):
    """ZeRO shards over a site's replicas, and a GPU holds its shard whatever K is."""
    text = """
import std.devices
import std.links
import std.models
param K = 3 in 2 .. 64 log 6
model job : llama3_70b { seq = 8192; tokens = 16 * 8192 }
device g : h100 { efficiency = 0.4 }
switch fabric {}
replica tp8pp4 { tp = 8; pp = 4; zero = 1; recompute = full }
dc a { replica = tp8pp4; replicas = 64; sites = K; device = g; link = ib_ndr; switch = fabric }
wan a <-> a = zr400 * 16
scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
"""
    one = text.replace("sites = K; ", "").replace("wan a <-> a = zr400 * 16\n", "")
    many = solve_text(tmp_path, text, "many.ct", overrides={"K": "40"})
    single = solve_text(tmp_path, one, "one.ct")
    (m,), (o,) = many.memory, single.memory
    assert m.total.value == o.total.value and m.fits == o.fits


def test_report_and_lint_read_the_sites(tmp_path, alone):
    from typer.testing import CliRunner

    from ctdsl.cli import app
    from ctdsl.report.document import _summary

    text = repr(_summary(ctdsl.load(alone).solve()))
    assert "1 data centre (4 sites), 64 workers" in text  # 4 sites of 16 replicas
    assert "K sites x 16 x r" in text
    # CTL004 reads the WAN from the dc to itself like any other: 100 GB/s against a 50 GB/s NIC (the
    # spec's model has no shape, so the training step's rules CTL012 and CTL013 speak too)
    out = CliRunner().invoke(app, ["lint", str(alone), "-f", "json"])
    found = json.loads(out.stdout)["diagnostics"]
    assert sorted(d["code"] for d in found) == ["CTL004", "CTL012", "CTL013"]
    (wan,) = [d for d in found if d["code"] == "CTL004"]
    assert "WAN link 'wan' (100 GB/s) is faster than link 'nic' (50 GB/s) inside dc 'a'" in wan["message"]


def test_latex_shows_the_exact_form_in_k(alone, tmp_path):
    from typer.testing import CliRunner

    from ctdsl.cli import app

    out = tmp_path / "k.tex"
    r = CliRunner().invoke(app, ["export", "latex", str(alone), "-o", str(out)])
    assert r.exit_code == 0, r.output
    tex = out.read_text(encoding="utf-8")
    # the WAN's bytes per sync: 2 (K - 1) / K x 128 GB
    assert r"\frac{\left(256 K - 256\right)}{K}" in tex


UNEVEN = """
model m {
  layers = 6
  width = 1024
  heads = 8
  kv_heads = 8
  mlp = 4096
  vocab = 1000
  bytes_per_value = 2 B
  tokens = 1000
}
device d { peak = 100 TFLOP/s; efficiency = 1 }
link nic { bandwidth = 50 GB/s; latency = 10 us }
link wan { bandwidth = 100 GB/s; latency = 1 ms; energy_per_bit = 10 pJ/bit }
switch s {}
replica r { tp = 2; pp = 4; first_stage_layers = 1; last_stage_layers = 1; gpus_per_node = 8 }
dc a { replica = r; replicas = 4; sites = 2; device = d; link = nic; switch = s }
wan a <-> a = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""


def test_uneven_stages_put_the_exact_sum_on_the_wan(tmp_path):
    """6 layers over 4 stages as 1 + 2 + 2 + 1: the most-loaded GPU holds 2 of 6 layers over tp 2,
    s_max = D / 6; the average GPU D / 8. The NICs (each GPU's own) bind at s_max; the WAN carries
    every GPU's own slice, which sums to D / K a step, not 8 x (D / 6) / K.

      P by hand: per layer attention 2 d^2 + 2 d g (d / h) = 4,194,304, MLP 3 d m = 12,582,912;
      6 layers 100,663,296; embeddings 2 V d = 2,048,000: P = 102,711,296, D = 2 P.
    """
    sol = solve_text(tmp_path, UNEVEN)
    P = 6 * (2 * 1024**2 + 2 * 1024 * 8 * 128 + 3 * 1024 * 4096) + 2 * 1000 * 1024
    assert sol.models["m"].params == P == 102_711_296
    r = sol.schemes["x"]
    Dm, K, n = 2 * P, 2, 4
    s_max = Dm / 6
    got = phases(r)
    assert close(got["reduce-scatter in each dc"], 3 * (LAT_IN + s_max / n / 50e9))  # the most-loaded GPU
    # across: 2 steps; a GPU's slice is at most s_max / (n K); the WAN takes the sum over a site's 32
    # GPUs: tp x n x (1 + 2 + 2 + 1) / 6 x D / tp / (n K) = D / K
    across = 2 * (LAT_ACROSS + max(s_max / (n * K) / 50e9, Dm / K / WAN))
    assert close(got["all-reduce of each slice across dcs"], across)
    assert close(r.wan.value, 2 * (K - 1) / K * Dm)
    assert close(r.wire.value, 2 * 3 * s_max / n + 2 * s_max / (n * K))  # the busiest GPU sends s_max's
    assert close(r.energy_parts["links"].value, K * r.wan.value * 8 * 10e-12)  # both WANs, exact bytes


def _tutorial_block() -> str:
    import re

    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    step = text[text.index("## 10."):text.index("## 11.")]
    return next(b for b in re.findall(r"^```ct\n(.*?)^```", step, flags=re.M | re.S) if "sites = n_sites" in b)


def test_the_tutorials_worked_example(tmp_path):
    """The figures step 10 works out by hand at K = 4: a GPU's slice D / (32 x 4) x 1,024 GPUs = D / 4
    on each WAN a step, over 16 x 50 GB/s after NIC, WAN (2 ms) and NIC latencies; 6 steps. And its
    break-even, "about 44 sites", between the whole numbers of sites where the winner changes."""
    text = _tutorial_block()
    sol = solve_text(tmp_path, text)
    Dm = sol.schemes["adamw"].dense.value
    across = 6 * (2e-3 + 2 * 10e-6 + Dm / 4 / (16 * 50e9))
    assert close(phases(sol.schemes["adamw"])["all-reduce of each slice across dcs"], across)
    assert close(sol.schemes["adamw"].wan.value, 6 * Dm / 4)
    doc = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert "6 x 46.1 ms = 276.7 ms" in doc and f"{across * 1e3:.1f}" == "276.7"
    assert f"{6 * Dm / 4 / 1e9:.1f}" == "211.7" and "211.7\nGB on each WAN" in doc
    (root,) = sol.breakevens[0].roots
    assert round(root.value) == 44 and "first from\nabout 44 sites on" in doc
    path = tmp_path / "spec.ct"
    _winner_changes(ctdsl.load(path).sweep({"n_sites": (43, 44, 2)}))


def test_the_example_with_a_hub(tmp_path):
    """examples/20_sites.ct, as docs/language.md quotes it: the WAN carries 2 K' / (K' + 1) of D with
    K' regions and the hub, and DiLoCo first from about 41 regions on."""
    sol = ctdsl.load(ROOT / "examples" / "20_sites.ct").solve()
    a = sol.schemes["adamw"]
    assert close(a.wan.value, 2 * 4 / 5 * a.dense.value)
    (root,) = sol.breakevens[0].roots
    assert round(root.value) == 41
    assert "DiLoCo\nreaches the target first from about 41 regions on" in (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    _winner_changes(ctdsl.load(ROOT / "examples" / "20_sites.ct").sweep({"n_sites": (41, 42, 2)}))


def _winner_changes(sweep) -> None:
    """adamw reaches the target first at the first of two whole numbers of sites, diloco at the second."""
    adamw, diloco = sweep["adamw.time_to_target_s"], sweep["diloco.time_to_target_s"]
    assert adamw[0] < diloco[0] and diloco[1] < adamw[1]


def test_a_variant_replaces_the_link_between_the_sites(tmp_path):
    """`wan a <-> a = LINK` in a variant replaces the ring's link (one connection, each site to the
    next): the all-reduce across K = 3 sites on 400 and 800 GB/s WANs, by hand."""
    text = HEAD + """
param K = 3 in 2 .. 64 log 6
link wan400 { bandwidth = 400 GB/s; latency = 1 ms }
link wan800 { bandwidth = 800 GB/s; latency = 1 ms }
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
wan a <-> a = wan400
variant fast { wan a <-> a = wan800 }
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
scheme y { payload = dense; collective = hier_allreduce; steps = 10; sites = fast }
"""
    sol = solve_text(tmp_path, text)
    slice_ = S / (16 * 3)
    for name, bw in (("x", 400e9), ("y", 800e9)):
        got = phases(sol.schemes[name])["all-reduce of each slice across dcs"]
        assert close(got, 4 * (LAT_ACROSS + max(slice_ / 50e9, 128 * slice_ / bw))), name


@pytest.mark.parametrize("K", [4, 7])
def test_diloco_whose_workers_are_the_sites(tmp_path, K):
    """inner = dc over K sites of one dc: every step each site's replicas reduce-scatter and
    all-gather the dense gradient among themselves (15 steps of s / 16 each); every H = 10 steps
    the slices cross the ring of sites, 2 (K - 1) steps of s / (16 K), as a hierarchical all-reduce's do."""
    text = HEAD + """
param K = 4 in 2 .. 64 log 6
dc a { replica = r; replicas = 16; sites = K; device = d; link = nic; switch = s }
wan a <-> a = wan * 4
scheme x { payload = dense; collective = hier_allreduce; period = 10; inner = dc; steps = 10 }
"""
    r = solve_text(tmp_path, text, overrides={"K": str(K)}).schemes["x"]
    ring = 15 * (S / 16 / 50e9 + LAT_IN)
    slice_ = S / (16 * K)
    across = 2 * (K - 1) * (LAT_ACROSS + max(slice_ / 50e9, 128 * slice_ / WAN))
    got = r.components
    assert close(got[C("sync_in_site:reduce-scatter of the gradients in each dc")].value, ring)
    assert close(got[C("sync_in_site:all-gather of the parameters in each dc")].value, ring)
    assert close(got[C("sync_across_sites:all-reduce of each slice across dcs")].value, across / 10)
    assert close(got[C("sync_in_site:all-gather of the updated parameters in each dc")].value, ring / 10)
    assert close(r.wan.value, 2 * (K - 1) / K * D)


def test_a_param_a_count_is_set_to_is_whole():
    # `sites = n_sites` and a WAN's `* zr_links` are counts set to a param directly: whole numbers
    # (the explorer steps them by one); the flagship's params are bandwidths, a budget, a fraction
    assert ctdsl.load(ROOT / "examples" / "20_sites.ct").spec.whole == {"n_sites"}
    assert ctdsl.load(ROOT / "specs" / "llama405b_3dc.ct").spec.whole == {"zr_links"}
    assert ctdsl.load(ROOT / "specs" / "llama70b_wan.ct").spec.whole == frozenset()
