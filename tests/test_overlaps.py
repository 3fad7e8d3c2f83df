"""Communication overlapped with compute (docs/cost-model.md, "Overlaps"; ctdsl/symbolic/overlaps.py),
each exposed part derived by hand on tests/test_training_step.py's spec and helpers (a 4-layer model
on replicas of tp 2 x cp 2 x pp 2 in nodes of 4, two replicas a dc, two dcs; 8 micro-batches)."""

from __future__ import annotations

import math

from solvekit import C
from test_training_step import KN, L, P, cp, close, inner_parts, nic_lat, nv_bw, nic_bw, pp, solve, tp, R, K, G, wan_bw, wan_lat


def _term(r, key):
    return next(t for t in r.terms if t.id == C(key))


def test_tp_comm_overlap_leaves_the_chunk_that_cannot_hide():
    """Each micro-batch waits for max(t_tp / tp, t_tp - t_c) of its TP collectives; the bubble's
    micro-batches too (the slot)."""
    h = inner_parts()
    r = solve(replica="; tp_comm_overlap = true")
    exposed = max(h["t_tp"] / tp, h["t_tp"] - h["t_c"])
    assert exposed == h["t_tp"] / tp  # the compute covers all but the first chunk
    assert close(r.components[C("tensor_parallel")].value, h["m"] * exposed)
    assert _term(r, "tensor_parallel").behind == "the GEMMs of each micro-batch"
    assert close(r.components[C("pipeline_bubble")].value, (pp - 1) * (h["t_c"] + exposed + h["t_cp"]))
    # without the option every all-reduce is exposed
    assert close(solve().components[C("tensor_parallel")].value, h["m"] * h["t_tp"])


def test_overlap_p2p_hides_the_steady_states_transfers():
    """2 (pp - 1) transfers of the bubble stay, the 2 m of the steady state hide behind m t_c."""
    h = inner_parts()
    m = h["m"]
    one = h["t_pp"] / (2 * m + 2 * (pp - 1))  # one transfer, as the helper charges it
    r = solve(replica="; overlap_p2p = true")
    want = 2 * (pp - 1) * one + max(0.0, 2 * m * one - m * h["t_c"])
    assert close(r.components[C("pipeline_parallel")].value, want)
    assert _term(r, "pipeline_parallel").behind == "the compute of the steady state's micro-batches"


def _in_dc(x: float) -> float:
    n = cp * R
    return (n - 1) * (nic_lat + max(x / n / (KN * nic_bw), x / n / nv_bw))


def _across(x: float) -> float:
    n = cp * R
    return 2 * (K - 1) * (2 * nic_lat + wan_lat + max(G * R * x / (n * K) / wan_bw, x / (n * K) / nic_bw))


def test_overlap_param_gather_with_the_next_forward():
    """The reduce-scatter and the all-reduce across the dcs stay whole; of the parameter all-gather
    (T_ag, the in-dc all-gather) max(T_ag / B, T_ag - t_f) with B = ceil(shard / 25 MB) buckets."""
    h = inner_parts()
    shard = 2 * P / (tp * pp)
    B = math.ceil(shard / 25e6)
    T_ag = _in_dc(shard)
    t_f = h["t_c"] / 3
    exposed = _in_dc(shard) + _across(shard) + max(T_ag / B, T_ag - t_f)
    r = solve(scheme="; overlap_param_gather = true")
    assert close(r.components[C("exposed_sync:sync")].value, exposed)
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    assert close(r.step_time.value, inner + exposed)
    assert "the parameter all-gather" in _term(r, "exposed_sync:sync").behind


def test_overlap_param_gather_with_backward_buckets():
    """With overlap = backward (16 MB buckets), the reduce-scatter and the all-reduce across go bucket
    by bucket behind the last backward pass (exposure.py), the all-gather behind the next forward."""
    h = inner_parts()
    shard = 2 * P / (tp * pp)
    B = math.ceil(shard / 16e6)
    tau = _in_dc(shard / B) + _across(shard / B)
    w = 2 * h["t_c"] / 3
    grads = max(B * tau - w * (B - 1) / B, tau)
    T_ag = _in_dc(shard)
    exposed = grads + max(T_ag / B, T_ag - h["t_c"] / 3)
    r = solve(scheme="; overlap = backward; bucket = 16 MB; overlap_param_gather = true")
    assert close(r.components[C("exposed_sync:sync")].value, exposed)


def test_layers_are_the_spec_s():
    assert L == 4
