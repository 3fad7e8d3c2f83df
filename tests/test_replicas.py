"""Dcs of model-parallel replicas, against bytes and times derived by hand.

Every figure below is worked out here from docs/language.md ("replica") and
parallelism.md section 8, not read from the code:

  model: P = 64e9 parameters at 2 B, so D = 128e9 B; tokens 1000 per step per
  replica; device 100 TFLOP/s at efficiency 1. NIC link 50 GB/s, 10 us (counted
  once per transfer); WAN link 100 GB/s, 1 ms. A GPU reaches a GPU of another
  replica of its dc through the fabric switch: one segment of the NIC link, 10 us.
  Across the WAN: NIC, WAN, NIC: 10 us + 1 ms + 10 us = 1.02 ms.
"""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from scipy.optimize import brentq
from solvekit import C, ROOT, solve_text

REL = 1e-12
LAT_IN = 10e-6
LAT_ACROSS = 10e-6 + 1e-3 + 10e-6
D = 128e9  # bytes of the dense update

HEAD = """
model m { params = 64e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link nic { bandwidth = 50 GB/s; latency = 10 us }
link wan { bandwidth = 100 GB/s; latency = 1 ms }
switch s {}
"""


def phases(result) -> dict[str, float]:
    return {p.name: p.time.value for p in result.phases}


def close(a: float, b: float, rel: float = REL) -> bool:
    return math.isclose(a, b, rel_tol=rel)


def test_equal_sites_tp4_pp2(tmp_path):
    # shard s = D / (tp pp) = 16e9; a shard group of a dc has cp R = 16 members; 128 GPUs a dc
    text = HEAD + """
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = 16; device = d; link = nic; switch = s }
dc b : a {}
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    r = solve_text(tmp_path, text).schemes["x"]
    s, n = 16e9, 16
    rs = (n - 1) * (s / n / 50e9 + LAT_IN)  # 15 x (1e9 / 50 GB/s + 10 us) = 0.30015 s
    # across: each GPU sends s / (n K) = 0.5e9; the WAN carries 128 of them, 64e9, over 4 x 100 GB/s
    across = 2 * (LAT_ACROSS + max(0.5e9 / 50e9, 128 * 0.5e9 / 400e9))
    got = phases(r)
    assert close(got["reduce-scatter in each dc"], rs)
    assert close(got["all-reduce of each slice across dcs"], across)
    assert close(got["all-gather in each dc"], rs)
    assert close(r.wire.value, 2 * 15 * 1e9 + 2 * 0.5e9)  # bytes one GPU sends per sync
    assert close(r.wan.value, D)  # 2 (K - 1) / K of the whole update, whatever R is
    assert close(r.components[C("compute")].value, 6 * 64e9 * 1000 / (8 * 100e12))  # over the replica's 8 GPUs


def test_unequal_sites_the_slowest_binds(tmp_path):
    text = HEAD + """
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = 16; device = d; link = nic; switch = s }
dc b : a { replicas = 8 }
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    r = solve_text(tmp_path, text).schemes["x"]
    s = 16e9
    rs_a = 15 * (s / 16 / 50e9 + LAT_IN)  # 0.30015 s
    rs_b = 7 * (s / 8 / 50e9 + LAT_IN)  # 7 x 0.04001 = 0.28007 s
    # a's 128 GPUs send s / 32 each, b's 64 GPUs s / 16: 64e9 on the WAN either way
    across = 2 * (LAT_ACROSS + max(s / 16 / 50e9, 64 * (s / 16) / 400e9, 128 * (s / 32) / 400e9))
    got = phases(r)
    assert close(got["reduce-scatter in each dc"], max(rs_a, rs_b))
    assert close(got["all-gather in each dc"], max(rs_a, rs_b))
    assert close(got["all-reduce of each slice across dcs"], across)
    assert close(r.wan.value, D)
    # the tables say which site binds: the phase's bottleneck names dc a's ring
    rs = next(p for p in r.phases if p.name == "reduce-scatter in each dc")
    assert "a.gpu" in rs.bottleneck, rs.bottleneck


def test_three_sites_context_parallel_shared_nics_leaf_spine(tmp_path):
    # tp 2, pp 2, cp 2: 8 GPUs, one node; 4 NICs a node (two GPUs share one); the spine oversubscribed 2:1
    text = HEAD + """
replica r { tp = 2; pp = 2; cp = 2; nics = 4 }
dc a { replica = r; replicas = 4; device = d; link = nic; switch = s; fabric = leaf_spine; oversubscription = 2 }
dc b : a {}
dc c : a {}
wan a <-> b = wan
wan b <-> c = wan
wan c <-> a = wan
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    r = solve_text(tmp_path, text).schemes["x"]
    s, n, gpus, nics = D / 4, 8, 32, 16  # cp replicates the weights: 8 members of each shard group
    nic_bw = 50e9 / 2
    rs = (n - 1) * (LAT_IN + gpus * (s / n) / nics / nic_bw)  # 7 x (8e9 / 25 GB/s + 10 us)
    slice_ = s / (n * 3)
    across = 4 * (LAT_ACROSS + max(gpus * slice_ / nics / nic_bw, gpus * slice_ / 100e9))
    got = phases(r)
    assert close(got["reduce-scatter in each dc"], rs)
    assert close(got["all-reduce of each slice across dcs"], across)
    assert close(r.wan.value, 4 * gpus * slice_)  # 2 (K - 1) / K D = 4/3 x 128e9
    assert close(r.wan.value, 4 / 3 * D)


def test_counts_are_symbols(tmp_path):
    text = HEAD + """
param R = 16 in 2 .. 4096 log 12
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = R; device = d; link = nic; switch = s }
dc b : a {}
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    for R in (16, 1000, 125_000):  # 128 to a million GPUs a dc, one expression
        r = solve_text(tmp_path, text, overrides={"R": str(R)}).schemes["x"]
        s = 16e9
        rs = (R - 1) * (s / R / 50e9 + LAT_IN)
        across = 2 * (LAT_ACROSS + max(s / (2 * R) / 50e9, 8 * R * s / (2 * R) / 400e9))
        assert close(phases(r)["reduce-scatter in each dc"], rs)
        assert close(phases(r)["all-reduce of each slice across dcs"], across)


BREAKEVEN = HEAD.replace("tokens = 1000", "tokens = 4194304 / (2 * R)") + """
param R = 16 in 2 .. 256 log 8
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = R; device = d; link = nic; switch = s }
dc b : a {}
wan a <-> b = wan * 4
scheme adamw { payload = dense; collective = hier_allreduce; steps = 10000 }
scheme diloco { payload = dense; collective = hier_allreduce; period = 20; steps = 11000 }
breakeven diloco vs adamw over R
"""


def _step(R: float, H: float) -> float:
    """A fixed global batch of 2^22 tokens split over 2 R replicas: compute falls as 1/R, the sync does not."""
    compute = 6 * 64e9 * (4194304 / (2 * R)) / (8 * 100e12)
    s = 16e9
    sync = 2 * (R - 1) * (s / R / 50e9 + LAT_IN) + 2 * (LAT_ACROSS + max(s / (2 * R) / 50e9, 4 * s / 400e9))
    return compute + sync / H


def test_breakeven_over_a_replica_count_against_a_bracketed_root(tmp_path):
    sol = solve_text(tmp_path, BREAKEVEN)
    (be,) = sol.breakevens
    gap = lambda R: 11000 * _step(R, 20) - 10000 * _step(R, 1)  # noqa: E731
    assert gap(2) > 0 > gap(256)  # adamw first with few replicas (compute binds), diloco with many: a bracket
    root = brentq(gap, 2, 256, xtol=1e-14, rtol=1e-15)
    (got,) = be.roots
    assert close(got.value, root, 1e-9), (got.value, root)


def test_simulate_replicas_against_the_closed_form(tmp_path):
    """Groups simulate too: one sync job per phase step carries every GPU's flow on a shared link.

    With jitter only (no load) the closed form is exact: compute + jitter x H_n for n replicas
    drawing Exp(1) extra times each (the harmonic number), so the simulated step's 99% interval
    over 40 seeds must hold the closed form, and the no-load step must be solve's step.
    """
    import ctdsl

    text = HEAD + """
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = 16; device = d; link = nic; switch = s; jitter = 20 ms }
dc b : a {}
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    path = tmp_path / "spec.ct"
    path.write_text(text)
    study = ctdsl.load(path)
    sol = study.solve()
    sim = study.simulate(steps=50, seeds=40, warmup=2).schemes["x"]
    free = 6 * 64e9 * 1000 / (8 * 100e12) + sum(p.time.value for p in sol.schemes["x"].phases)
    assert close(sim.plan.free_step, free, 1e-9)
    harmonic = sum(1 / k for k in range(1, 33))  # 32 replicas in all
    closed = free + 0.02 * harmonic
    assert close(sol.schemes["x"].step_time.value, closed, 1e-9)
    lo, hi = sim.step.mean - 2.708 * sim.step.se, sim.step.mean + 2.708 * sim.step.se  # t(0.995, 39)
    assert lo <= closed <= hi, (lo, closed, hi)


@pytest.mark.parametrize("spec", ["specs/llama405b_3dc.ct"])
def test_study_at_datacentre_scale(spec):
    """102,400 GPUs in three unequal sites solve. The WAN carries every GPU's own slice: 2 (K - 1) / K
    of the whole update, however unevenly the stages split the layers; a GPU's own NIC carries the
    most-loaded stage's shard.

      P of Llama 3 405B (std.models: 126 layers, d 16,384, 128 heads of 128, 8 KV heads, MLP
      53,248, vocabulary 128,256, norms counted, the Hugging Face count), by hand:
        per layer: attention 2 d^2 + 2 d g (d / h) = 536,870,912 + 33,554,432; MLP 3 d m =
        2,617,245,696; two norms 2 d = 32,768; together 3,187,703,808, x 126 = 401,650,679,808
        embeddings 2 V d = 4,202,692,608; the final norm d = 16,384
        P = 405,853,388,800; the BF16 update 2 P
      Stages 7 + 14 x 8 + 7: the most-loaded GPU holds 8 of the 126 layers over tp 8,
      s_max = 2 P x 8 / (126 x 8); the mean over the 128 GPUs of a replica is 2 P / 128.
    """
    from solvekit import solve_file

    sol = solve_file(spec)
    r = sol.schemes["adamw"]
    d, h, g, m, V, L = 16384, 128, 8, 53248, 128256, 126
    P = L * (2 * d * d + 2 * d * g * (d // h) + 3 * d * m + 2 * d) + 2 * V * d + d
    assert P == 405_853_388_800 == sol.models["llama405b"].params
    K = 3
    # each of the 4 steps puts a site's slices on its WAN: the sum over its 128 shard groups of
    # their R slices of s_g / (R K), which is the whole 2 P / K (not 128 s_max / K = 2 P 128 / (126 K))
    assert close(r.wan.value, 2 * (K - 1) / K * 2 * P)
    zr = 64 * 50e9  # the WAN: 64 400ZR links; ib_ndr NICs at 50 GB/s, 10 us; dci 1 ms
    s_max = 2 * P * 8 / (126 * 8)
    across = 4 * (10e-6 + 1e-3 + 10e-6 + 2 * P / K / zr)  # the WAN binds, with the exact bytes
    got = phases(r)
    assert close(got["all-reduce of each slice across dcs"], across)
    # the reduce-scatter runs side by side in the sites; west binds: 220 replicas behind a 2:1 spine,
    # a GPU's NIC at 25 GB/s carrying the most-loaded GPU's s_max / 220 a step
    sites = {"east": (300, 50e9), "central": (280, 50e9), "west": (220, 25e9)}
    rs = max((R - 1) * (10e-6 + s_max / R / bw) for R, bw in sites.values())
    assert close(got["reduce-scatter in each dc"], rs)
    assert sum(1 for _ in sol.breakevens) == 2


def test_batch_split_in_proportion_to_compute(tmp_path):
    # 1,048,576 tokens a step for the whole job; dc a's 128 GPUs at 100 TFLOP/s, dc b's 64 at
    # 200 TFLOP/s: the split gives every replica the same compute time, 6 P B / sum(peak)
    text = HEAD.replace("tokens = 1000", "batch_tokens = 1048576") + """
device fast { peak = 200 TFLOP/s; efficiency = 1; energy_per_flop = 1 pJ/FLOP }
replica r { tp = 4; pp = 2 }
dc a { replica = r; replicas = 16; device = d; link = nic; switch = s }
dc b : a { replicas = 8; device = fast }
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""
    r = solve_text(tmp_path, text).schemes["x"]
    flops = 6 * 64e9 * 1048576
    assert close(r.components[C("compute")].value, flops / (128 * 100e12 + 64 * 200e12))
    # dc b does 64 x 200 / (128 x 100 + 64 x 200) = half the FLOPs, at 1 pJ each; dc a's device costs nothing
    assert close(r.energy_parts["arithmetic"].value, 0.5 * flops * 1e-12)


def test_tokens_and_batch_tokens_together_is_an_error(tmp_path):
    from ctdsl.api import check

    path = tmp_path / "spec.ct"
    path.write_text("model m { params = 1e9; bytes_per_value = 2 B; tokens = 10; batch_tokens = 100 }\n")
    result = check(str(path))
    assert [d.code for d in result.diagnostics] == ["CT308"]


SMALL = """
import std.devices
import std.links
import std.models
model job : llama3_8b { tokens = 8192 }
device gpu0 : h100 { efficiency = 0.4 }
switch tor {}
replica tp2 { tp = 2; gpus_per_node = 2; nics = 1 }
dc east { replica = tp2; replicas = 2; device = gpu0; link = ib_ndr; switch = tor }
scheme adamw { payload = dense; collective = ring_allreduce; steps = 10000 }
"""


def _graph(tmp_path, *args):
    path = tmp_path / "small.ct"
    path.write_text(SMALL)
    return subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", "graph", str(path), *args], capture_output=True, text=True
    )


def test_graph_shows_groups_with_their_counts_and_expands_a_small_one(tmp_path):
    import json

    grouped = json.loads(_graph(tmp_path).stdout)
    gpus = next(n for n in grouped["nodes"] if n["id"] == "east.gpu")
    assert gpus["count_value"] == 4  # 2 replicas of tp 2
    nic = next(e for e in grouped["edges"] if e["source"] == "east.gpu")
    assert nic["count_value"] == 2  # one NIC per 2-GPU node, 2 nodes
    expanded = json.loads(_graph(tmp_path, "--expand").stdout)
    assert sorted(n["id"] for n in expanded["nodes"]) == ["east.gpu0", "east.gpu1", "east.gpu2", "east.gpu3", "east.tor"]
    assert len(expanded["edges"]) == 8  # each GPU to the switch and back
    assert "east.gpu x 4" in _graph(tmp_path, "-f", "dot").stdout


def test_expand_refuses_a_large_group():
    out = subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", "graph", str(ROOT / "specs" / "llama405b_3dc.ct"), "--expand"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "102,400 nodes" in out.stderr and "Traceback" not in out.stderr


MOE = HEAD.replace("model m { params = 64e9; bytes_per_value = 2 B; tokens = 1000 }", """
model m {
  layers = 4
  width = 1024
  heads = 8
  kv_heads = 8
  mlp = 4096
  vocab = 1000
  experts = 8
  experts_per_token = 2
  expert_mlp = 1024
  bytes_per_value = 2 B
  tokens = 1000
}""") + """
replica r { tp = 2; pp = 2; ep = 4; gpus_per_node = 4 }
dc a { replica = r; replicas = 4; device = d; link = nic; switch = s }
dc b : a {}
wan a <-> b = wan * 4
scheme x { payload = dense; collective = hier_allreduce; steps = 10 }
"""


def test_moe_experts_sync_over_their_own_groups(tmp_path):
    """A MoE model with ep = 4: the experts' shard syncs over tp cp R / ep = 2 GPUs of a dc, apart
    from the dense shard's cp R = 4.

      experts per layer: E x 3 x d x f_e = 8 x 3 x 1024 x 1024 = 25,165,824; x 4 layers = 100,663,296
      dense per layer: attention 2 d^2 + 2 d g (d / h) = 4,194,304, router d E = 8,192; no dense MLP
      embeddings: 2 V d = 2,048,000
      P = 4 x 4,202,496 + 2,048,000 + 100,663,296 = 119,521,280
    """
    sol = solve_text(tmp_path, MOE)
    P, P_exp = 119_521_280, 100_663_296
    assert sol.models["m"].params == P
    r = sol.schemes["x"]
    s = 2 * (P - P_exp) / (2 * 2)  # the dense shard: over tp x pp = 4, 9,428,992 B
    s_e = 2 * P_exp / (2 * 4)  # the experts' shard: over pp x ep = 8, 25,165,824 B
    got = phases(r)
    assert close(got["reduce-scatter in each dc"], 3 * (s / 4 / 50e9 + LAT_IN))
    assert close(got["all-reduce of each slice across dcs"], 2 * (LAT_ACROSS + max(s / 8 / 50e9, 16 * s / 8 / 400e9)))
    assert close(got["reduce-scatter in each dc (experts)"], 1 * (s_e / 2 / 50e9 + LAT_IN))
    assert close(got["all-reduce of each slice across dcs (experts)"], 2 * (LAT_ACROSS + max(s_e / 4 / 50e9, 16 * s_e / 4 / 400e9)))
    assert close(r.wan.value, 2 * P)  # 2 (K - 1) / K of the whole update, dense and experts
    assert close(r.wire.value, 2 * 3 * s / 4 + 2 * s / 8 + 2 * 1 * s_e / 2 + 2 * s_e / 4)


def test_expert_parallelism_must_divide_a_stage(tmp_path):
    from ctdsl.api import check

    path = tmp_path / "spec.ct"
    path.write_text(MOE.replace("replicas = 4;", "replicas = 3;").replace("ep = 4", "ep = 4; gpus_per_node = 4; nics = 4").replace("gpus_per_node = 4; nics", "nics"))
    codes = [d.code for d in check(str(path)).diagnostics]
    assert "CT418" in codes
