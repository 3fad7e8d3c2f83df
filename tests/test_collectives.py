"""Collectives over nodes (docs/cost-model.md, "Collectives over nodes"), each time derived by hand.

The spec is vTrain's 3.6B GPT (hidden 3,072, 30 layers, 32 heads, MLP 4h, vocabulary 50,257,
tied, LayerNorm weights, sequences of 2,048, fp16) on 64 GPUs in nodes of 8: NVLink at 150
GB/s a GPU, 800 Gbit/s of NICs a node (100 Gbit/s = 12.5 GB/s a GPU), a global batch of 512
sequences, full recomputation: the case issue 27 reports (TP 16 charged 44 s where a ring that
crosses the node boundary over the node's NICs takes about 5.4 s; a data-parallel ring of 64
with 8 replicas a node charged 1.12 s where it takes about 0.14 s). Latencies are 0 unless a
test sets them, so that the bandwidth terms are exact.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp

from ctdsl import units as U
from ctdsl.language.enums import Algorithm
from ctdsl.symbolic import collectives as CO
from ctdsl.symbolic.dimensioned import DimExpr
from solvekit import C, solve_text

HEAD = """
model gpt {{ layers = 30; width = 3072; heads = 32; kv_heads = 32; mlp = 4 * 3072; gated = false
  vocab = 50257; tied = true; norms = true; causal = false; seq = 2048; bytes_per_value = 2 B
  batch_tokens = 512 * 2048 }}
device a {{ peak = 312 TFLOP/s; efficiency = 0.5 }}
link nv {{ bandwidth = 150 GB/s; latency = {nv_lat} {nv} }}
link nic {{ bandwidth = {nic_bw}; latency = {nic_lat} {nic} }}
switch s {{}}
replica r {{ tp = {tp}; gpus_per_node = 8; scaleup_link = nv; recompute = full; sequence_parallel = false
  micro_batch = {mb}; zero = 0 {replica} }}
dc c {{ replica = r; replicas = {dp}; device = a; link = nic; switch = s }}
scheme dp {{ payload = dense; collective = hier_allreduce }}
"""

NV, NIC = 150e9, 12.5e9
L, h, s, beta = 30, 3072, 2048, 2
P = L * (4 * h * h + 2 * h * 4 * h + 2 * h) + h + 50257 * h  # 3,551,963,136: weights, norms, tied embedding
GLOBAL = 512  # sequences a step


def solve(tp, dp, mb=4, nv_lat="0 s", nic_lat="0 s", nv="", nic="", replica="", nic_bw="100 Gb/s"):
    import tempfile
    from pathlib import Path

    text = HEAD.format(tp=tp, dp=dp, mb=mb, nv_lat=nv_lat, nic_lat=nic_lat, nv=nv, nic=nic, replica=replica, nic_bw=nic_bw)
    with tempfile.TemporaryDirectory() as tmp:
        return solve_text(Path(tmp), text).schemes["dp"]


def close(a, b, rel=1e-12):
    return math.isclose(a, b, rel_tol=rel)


def test_parameters_of_the_case():
    assert P == 3_551_963_136


# ---- TP 16 over two nodes ----------------------------------------------------------------------


def tp16_bytes_per_step(mb: int) -> float:
    """Bytes one GPU sends for TP a step: 6 all-reduces a layer (4, and 2 of the recomputed forward),
    each of b s h beta, 2 (16 - 1)/16 of it sent, over 30 layers and 128 / b micro-batches."""
    micro = GLOBAL / 4 / mb  # 4 replicas of 16 GPUs
    return L * 6 * micro * 2 * 15 / 16 * mb * s * h * beta


def test_issue_example_tp16_crosses_the_node_boundary_over_the_nodes_nics():
    """543.6 GB a step at min(150 GB/s NVLink, 8 x 12.5 GB/s NICs) = 100 GB/s: 5.44 s (not 43.5 s
    at one GPU's 12.5 GB/s)."""
    sent = tp16_bytes_per_step(4)
    assert sent == pytest.approx(543.58e9, rel=1e-4)
    r = solve(tp=16, dp=4, replica="; algorithm = ring")
    assert close(r.components[C("tensor_parallel")].value, sent / 100e9)
    assert r.components[C("tensor_parallel")].value == pytest.approx(5.436, rel=1e-3)
    # the same whatever the micro-batch: the bytes a step do not depend on b
    assert close(solve(tp=16, dp=4, mb=32, replica="; algorithm = ring").components[C("tensor_parallel")].value, sent / 100e9)


def test_auto_takes_the_ring_where_it_is_faster_and_tree_is_2_s_over_w():
    """Without latency the ring (2 (n-1)/n S / W) beats the tree (2 S / W, NCCL's tree algorithm
    bandwidth half its bus bandwidth); stated, the tree costs 16/15 of the ring."""
    sent = tp16_bytes_per_step(4)
    auto = solve(tp=16, dp=4).components[C("tensor_parallel")].value
    assert close(auto, sent / 100e9)
    tree = solve(tp=16, dp=4, replica="; algorithm = tree").components[C("tensor_parallel")].value
    assert close(tree, sent * 16 / 15 / 100e9)


def test_latency_per_step_of_a_ring_and_of_a_tree_across_nodes():
    """With alpha_nic = 10 us and alpha_nv = 5 us, micro-batch 2: each ring all-reduce pays 2 x 15
    steps at the slowest hop's 10 us; a tree pays 2 ((8 - 1) x 5 us + log2(2) x 10 us) = 90 us, so
    auto takes the tree once 300 - 90 = 210 us outweighs the tree's extra bandwidth term
    (2 S / W - 1.875 S / W = 0.125 x 25.2 MB / 100 GB/s = 31.5 us): it does."""
    calls = L * 6 * (GLOBAL / 4 / 2)  # all-reduces a step: 30 x 6 x 64 = 11,520
    S = 2 * s * h * beta
    ring = 2 * 15 * 10e-6 + 2 * 15 / 16 * S / 100e9
    tree = 2 * (7 * 5e-6 + 1 * 10e-6) + 2 * S / 100e9
    assert tree < ring
    r = solve(tp=16, dp=4, mb=2, nv_lat="5 us", nic_lat="10 us")
    assert close(r.components[C("tensor_parallel")].value, calls * tree)
    r = solve(tp=16, dp=4, mb=2, nv_lat="5 us", nic_lat="10 us", replica="; algorithm = ring")
    assert close(r.components[C("tensor_parallel")].value, calls * ring)


def test_tp8_inside_a_node_runs_on_nvlink_at_its_efficiency():
    """TP 8 on one node: 2 x 7/8 S over NVLink at bandwidth x efficiency (0.5 here: twice the time)."""
    micro = GLOBAL / 8 / 4
    S = 4 * s * h * beta
    want = L * 6 * micro * 2 * 7 / 8 * S / (0.5 * NV)
    r = solve(tp=8, dp=8, nv="; efficiency = 0.5")
    assert close(r.components[C("tensor_parallel")].value, want)


# ---- data-parallel rings with several replicas a node ------------------------------------------


def test_issue_example_dp64_with_8_replicas_a_node():
    """TP 1, DP 64: 8 members of the ring in a node; a step's boundary bytes over the node's 8 NICs
    together (100 GB/s), the hops inside on NVLink (150 GB/s): each of the two phases 63 steps of
    (2P / 64) / 100 GB/s; 0.140 s in all (not 2 x 63/64 x 7.1 GB / 12.5 GB/s = 1.12 s)."""
    r = solve(tp=1, dp=64)
    one = 63 * (2 * P / 64) / 100e9
    got = {p.name: p.time.value for p in r.phases}
    assert close(got["reduce-scatter in each dc"], one)
    assert close(got["all-gather in each dc"], one)
    assert 2 * one == pytest.approx(0.1399, rel=1e-3)
    # what a GPU sends is unchanged: 2 x 63 steps of 2P / 64 (part of it over NVLink)
    assert close(r.wire.value, 2 * 63 * 2 * P / 64)


def test_dp_ring_whose_nvlink_hop_binds():
    """With NICs of 400 Gbit/s a GPU (8 x 50 = 400 GB/s a node) the NVLink hop binds: 63 steps of
    (2P / 64) / 150 GB/s a phase."""
    r = solve(tp=1, dp=64, nic_bw="400 Gb/s")
    got = {p.name: p.time.value for p in r.phases}
    assert close(got["reduce-scatter in each dc"], 63 * (2 * P / 64) / NV)


def test_dp_ring_with_one_member_a_node_is_unchanged():
    """TP 8, DP 8: one member of each data-parallel group a node, every hop over its own NIC:
    7 steps of (2P / 8) / 8 / 12.5 GB/s a phase."""
    r = solve(tp=8, dp=8)
    got = {p.name: p.time.value for p in r.phases}
    assert close(got["reduce-scatter in each dc"], 7 * (2 * P / 8) / 8 / NIC)


def test_dp_ring_with_two_members_a_node():
    """TP 4, DP 16: 2 members a node (tp = 4 ranks apart): the boundary over 2 NICs, 25 GB/s."""
    r = solve(tp=4, dp=16)
    got = {p.name: p.time.value for p in r.phases}
    assert close(got["reduce-scatter in each dc"], 15 * (2 * P / 4) / 16 / (2 * NIC))


def test_pipeline_neighbours_are_tp_dp_ranks_apart():
    """PP 2 x TP 1 x DP 32 (Megatron's order, pipeline outermost): neighbouring stages are 32 ranks
    apart, on different nodes: every transfer of b s h beta over a GPU's NIC share."""
    r = solve(tp=1, dp=32, replica="; pp = 2")
    micro = GLOBAL / 32 / 4
    one = 4 * s * h * beta / NIC
    assert close(r.components[C("pipeline_parallel")].value, (2 * micro + 2) * one)


# ---- the algorithms, one call each --------------------------------------------------------------


def _q(x, dim=U.TIME):
    return DimExpr(sp.Integer(x) if isinstance(x, int) else sp.Float(x), dim)


def _fabric(up_bw=100.0, up_lat=1.0, out_bw=10.0, out_lat=5.0, in_network=False):
    up = CO.LinkClass("up", "scale-up", _q(up_bw, U.RATE), _q(up_lat), _q(0, U.ENERGY_PER_DATA), in_network)
    out = CO.LinkClass("out", "scale-out", _q(out_bw, U.RATE), _q(out_lat), _q(0, U.ENERGY_PER_DATA))
    return CO.Fabric(up, out)


def _num(x):
    return float(x.e)


def _lay(n, stride=1, domain=8):
    return CO.layout(_q(n, U.ONE), _q(stride, U.ONE), _q(domain, U.ONE), lambda v: float(v.e))


def test_layout_by_rank_order():
    assert (_lay(16).k.e, _lay(16).spans, _lay(16).count.e) == (8, True, 2)
    assert (_lay(4).k.e, _lay(4).spans) == (4, False)
    assert (_lay(64, stride=2).k.e, _lay(64, stride=2).count.e) == (4, 16)
    assert (_lay(8, stride=8).k.e, _lay(8, stride=8).spans) == (1, True)
    assert (_lay(8, stride=16).k.e, _lay(8, stride=16).count.e) == (1, 8)


def test_ring_tree_in_network_all_to_all_and_p2p_by_hand():
    fab, S = _fabric(), _q(1000.0, U.DATA)
    # ring over 16 with 8 a node: 30 steps at 5 s + 2 x 15/16 x 1000 B / min(100, 8 x 10) B/s
    assert _num(CO.ring(fab, _lay(16), S, 2).time) == pytest.approx(30 * 5 + 1.875 * 1000 / 80, rel=1e-12)
    # the same ring with one member a node: every hop on the NIC
    assert _num(CO.ring(fab, _lay(8, 8), S, 1).time) == pytest.approx(7 * 5 + 7 / 8 * 1000 / 10, rel=1e-12)
    # tree over 32 in 4 nodes of 8: 2 (7 x 1 + 2 x 5) + 2 x 1000 / 80
    assert _num(CO.tree(fab, _lay(32), S).time) == pytest.approx(2 * (7 + 2 * 5) + 2000 / 80, rel=1e-12)
    # in-network only inside one domain whose link offers it: 2 x 1 + 1000 / 100
    assert CO.in_network(fab, _lay(8), S) is None
    innet = _fabric(in_network=True)
    assert _num(CO.in_network(innet, _lay(8), S).time) == pytest.approx(2 + 10, rel=1e-12)
    assert CO.in_network(innet, _lay(16), S) is None
    best, at = CO.all_reduce(innet, _lay(8), S, Algorithm.AUTO, {})
    assert best.algorithm == "in_network" and at["ring"] == pytest.approx(14 * 1 + 1.75 * 1000 / 100)
    # all-to-all over 16, 8 a node: 15 x 5 + max(7/16 x 1000 / 100, 8/16 x 1000 / 10)
    assert _num(CO.all_to_all(fab, _lay(16), S).time) == pytest.approx(75 + 50, rel=1e-12)
    assert _num(CO.all_to_all(fab, _lay(8), S).time) == pytest.approx(7 + 7 / 8 * 1000 / 100, rel=1e-12)
    assert _num(CO.p2p(fab, _lay(2, 16), S).time) == pytest.approx(5 + 100, rel=1e-12)


# ---- data-parallel buckets count the experts over ep (issue 27) ----------------------------------


def test_buckets_cut_the_gpus_own_gradients_experts_over_ep(tmp_path):
    """tests/test_replicas.py's MoE (P = 119,521,280, experts 100,663,296) at tp 2, pp 2, ep 4: a GPU
    holds 2 (P - P_exp) / (tp pp) = 9,428,992 B of dense gradients and 2 P_exp / (pp ep) = 25,165,824 B
    of its experts': 34,594,816 B, 35 buckets of 1 MB (the old count, 2 P / (tp pp) = 59,760,640 B,
    gave 60: the experts as if split tp ways, not ep)."""
    from test_replicas import MOE

    text = MOE.replace("collective = hier_allreduce; steps = 10", "collective = hier_allreduce; steps = 10; overlap = backward; bucket = 1 MB")
    r = solve_text(tmp_path, text).schemes["x"]
    P, P_exp = 119_521_280, 100_663_296
    own = 2 * (P - P_exp) / 4 + 2 * P_exp / 8
    assert own == 34_594_816
    (sy,) = r.syncs
    assert sy.buckets == math.ceil(own / 1e6) == 35


# ---- the MoE all-to-all on the links its group spans (issue 27 item 5) ------------------------------

MOE_SPEC = """
model m { layers = 2; width = 1024; heads = 8; kv_heads = 8; mlp = 4096; vocab = 1000; experts = 8
  experts_per_token = 2; expert_mlp = 1024; seq = 1024; bytes_per_value = 2 B; tokens = 8 * 1024 }
device a { peak = 100 TFLOP/s; efficiency = 1 }
link nv { bandwidth = 100 GB/s; latency = 0 s }
link nic { bandwidth = 10 GB/s; latency = 0 s }
switch s {}
replica r { tp = 1; ep = EP; gpus_per_node = 4; scaleup_link = nv; recompute = none; micro_batch = 1 }
dc c { replica = r; replicas = 8; device = a; link = nic; switch = s }
scheme x { payload = dense; collective = hier_allreduce }
"""


def test_expert_all_to_all_across_two_nodes(tmp_path):
    """ep 8 over nodes of 4 (expert ranks consecutive): each GPU sends 7/8 of S = T k d beta =
    1024 x 2 x 1024 x 2 B, 3/8 of S to the GPUs of its node on NVLink (100 GB/s) and 4/8 across over
    its own NIC (10 GB/s), which binds: 4/8 S / 10 GB/s an all-to-all; 4 a MoE layer (dispatch and
    combine, forward and backward), 2 layers, 8 micro-batches."""
    S = 1024 * 2 * 1024 * 2
    one = max(3 / 8 * S / 100e9, 4 / 8 * S / 10e9)
    r = solve_text(tmp_path, MOE_SPEC.replace("EP", "8")).schemes["x"]
    assert close(r.components[C("expert_parallel")].value, 8 * 2 * 4 * one)
    # ep 4: inside a node, 3/4 S on NVLink
    r = solve_text(tmp_path, MOE_SPEC.replace("EP", "4"), name="ep4.ct").schemes["x"]
    assert close(r.components[C("expert_parallel")].value, 8 * 2 * 4 * 3 / 4 * S / 100e9)
