"""The training step (docs/cost-model.md, "The training step"), derived by hand for a small model.

A 4-layer model of width 1024 (8 heads of 128, 2 KV heads, MLP 4096, vocabulary 32,000,
sequences of 2048 tokens, BF16) on replicas of tp 2 x cp 2 x pp 2 = 8 GPUs in nodes of 4, two
replicas a dc, two dcs. Every expected value below is written out from the formulas of
parallelism.md (sections 1-11) with the spec's numbers, in plain floats, never from ctdsl's
own expressions; the comparisons are at 1e-12.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest

from solvekit import C, solve_text

# ---- the spec ---------------------------------------------------------------------------

HEAD = """
param wan_bw = 1 GB/s in 0.1 GB/s .. 100 GB/s log 9
model m {{ layers = 4; width = 1024; heads = 8; kv_heads = 2; mlp = 4096; vocab = 32000; seq = 2048
  bytes_per_value = 2 B; tokens = 8 * 2048; flops_per_token = 6 GFLOP {model} }}
device g {{ peak = 100 TFLOP/s; efficiency = 0.5; mem_bw = 2 TB/s }}
link nv {{ bandwidth = 100 GB/s; latency = 1 us }}
link nic {{ bandwidth = 10 GB/s; latency = 5 us }}
link wan {{ bandwidth = wan_bw; latency = 1 ms }}
switch s {{}}
replica r {{ tp = 2; pp = 2; cp = 2; gpus_per_node = 4; scaleup_link = nv; recompute = {recompute} {replica} }}
dc a {{ replica = r; replicas = 2; device = g; link = nic; switch = s }}
dc b : a {{}}
wan a <-> b = wan
scheme x {{ payload = {payload}; collective = hier_allreduce; steps = 100 {scheme} }}
"""

# the numbers of the spec
L, d, heads, kv, f, V, s, beta = 4, 1024, 8, 2, 4096, 32000, 2048, 2
dh = d // heads
tp, pp, cp, R, K = 2, 2, 2, 2, 2
rate = 100e12 * 0.5
F_tok = 6e9
tokens = 8 * 2048
nv_bw, nv_lat = 100e9, 1e-6
nic_bw, nic_lat = 10e9, 5e-6
wan_bw, wan_lat = 1e9, 1e-3
mem_bw = 2e12
# Megatron's layout (docs/cost-model.md, "Collectives over nodes"): the data-parallel group (cp R
# = 4 members, tp = 2 ranks apart) has KN = 4 // 2 = 2 members in a node of 4, so its ring
# crosses the node boundary once a direction: each step's boundary bytes over the KN members'
# NICs together, nbytes / (KN nic_bw), which binds over the NVLink hop nbytes / nv_bw.
KN = 2

P_layer = 2 * d * d + 2 * d * kv * dh + 3 * d * f  # attention (Q, O and K, V) and the SwiGLU MLP
P_layers = L * P_layer
P = P_layers + 2 * V * d  # untied embeddings, no norms (domain.md section 2)
G = tp * pp * cp


def solve_spec(text: str, overrides=None):
    with tempfile.TemporaryDirectory() as tmp:
        return solve_text(Path(tmp), text, overrides=overrides)


def spec(model="", replica="", scheme="", recompute="none", payload="dense") -> str:
    return HEAD.format(model=model, replica=replica, scheme=scheme, recompute=recompute, payload=payload)


def solve(overrides=None, **kw):
    return solve_spec(spec(**kw), overrides).schemes["x"]


def close(a, b):
    return a == pytest.approx(b, rel=1e-12, abs=1e-15)


# ---- the inner step ---------------------------------------------------------------------


def inner_parts(tp=tp, pp=pp, cp=cp, v=1, recompute="none"):
    """Each part of the inner step, per step, by hand (parallelism.md sections 2-4, 10)."""
    compute = F_tok * tokens / (tp * pp * cp * rate)
    m = tokens / (1 * s)
    t_c = compute / m
    L_st = L / pp
    n = 6 if recompute == "full" else 4
    # tensor parallel on NVLink (a span of tp <= 4 GPUs): n ring all-reduces of b (s/cp) d beta per layer
    S = 1 * (s / cp) * d * beta
    t_tp = L_st * n * (2 * (tp - 1) * nv_lat + 2 * (tp - 1) / tp * S / nv_bw) if tp > 1 else 0.0
    # context parallel on NVLink (span tp cp = 4): a KV chunk per ring step, behind the attention
    kv_chunk = 2 * 1 * (s / cp) * (kv / tp) * dh * beta
    t_kv = nv_lat + kv_chunk / nv_bw
    t_attn = 2 * 1 * 1 * s * s * heads * dh / (tp * cp * cp) / rate
    t_cp = L_st * 3 * (cp - 1) * max(0.0, t_kv - t_attn)
    t_r = {"none": 0.0, "full": t_c / 3, "selective": t_c * 2 * 1 * L * s * heads * dh / F_tok}[recompute]
    bubble = (pp - 1) / v * (t_c + t_r + t_tp + t_cp)
    # pipeline parallel over the NICs (span tp cp pp = 8 > 4): b (s/cp) d beta / tp a transfer
    p2p = nic_lat + (s / cp) * d * beta / tp / nic_bw
    t_pp = (2 * v * m + 2 * (pp - 1)) * p2p if pp > 1 else 0.0
    # optimiser (Megatron's passes, the device has no mem_efficiency): per parameter a GPU
    # updates, its dense shard over cp R ranks (ZeRO 1), the gradient norm's read of the fp32
    # gradient (4 B), Adam's reads of gradient, master, m, v and writes of master, m, v (4 + 2 x
    # 12 B), the copy of the fp32 master to the 16-bit weight (4 + 2 B): 38 B; per parameter it
    # holds, the fp32 gradient buffer zeroed (4 B)
    shard = (P_layers / pp + V * d) / tp
    opt = (shard / (cp * R) * (4 + (4 + 24) + (4 + 2)) + shard * 4) / mem_bw
    return dict(compute=compute, m=m, t_c=t_c, t_r=t_r, t_tp=t_tp, t_cp=t_cp, bubble=bubble, t_pp=t_pp, opt=opt)


def test_each_part_of_the_inner_step():
    r = solve()
    h = inner_parts()
    c = r.components
    assert close(c[C("compute")].value, h["compute"])
    assert close(c[C("tensor_parallel")].value, h["m"] * h["t_tp"])
    assert c[C("context_parallel")].value == 0.0 and h["t_cp"] == 0.0  # each KV send hides behind a ring step's attention
    assert close(c[C("pipeline_bubble")].value, h["bubble"])
    assert close(c[C("pipeline_parallel")].value, h["t_pp"])
    assert close(c[C("optimiser")].value, h["opt"])
    assert C("recompute") not in c
    inner = h["compute"] + h["m"] * (h["t_tp"] + h["t_cp"]) + h["bubble"] + h["t_pp"] + h["opt"]
    assert close(r.inner.value, inner)
    (d0, d1) = r.timeline.dcs
    assert d0.micro_batches.value == 8 and close(d0.window.value, 2 * h["t_c"] / 3)


def test_bytes_of_each_parallelism():
    """Bytes one GPU sends per micro-batch and per step (parallelism.md sections 3-5)."""
    r = solve()
    m = tokens / s
    S = (s / cp) * d * beta
    want = {
        ("tensor_parallel", "nv"): (L / pp * 4 * 2 * (tp - 1) / tp * S, None),  # 8 b s h (t-1)/t per layer (Narayanan 3.2)
        ("context_parallel", "nv"): (L / pp * 3 * (cp - 1) * 2 * (s / cp) * (kv / tp) * dh * beta, None),
        ("pipeline_parallel", "nic"): (S / tp, 2 * m * S / tp),
    }
    got = {(x.kind, x.link): x for x in r.timeline.traffic if x.dc == "a"}
    assert set(got) == set(want)
    for key, (per, step) in want.items():
        assert close(got[key].per_micro.value, per), key
        assert close(got[key].sent.value, step if step is not None else m * per), key
    assert got[("tensor_parallel", "nv")].role == "scale-up" and got[("pipeline_parallel", "nic")].role == "scale-out"


@pytest.mark.parametrize("recompute", ["full", "selective"])
def test_recomputation(recompute):
    r = solve(recompute=recompute)
    h = inner_parts(recompute=recompute)
    assert close(r.components[C("recompute")].value, h["m"] * h["t_r"])
    assert close(r.components[C("tensor_parallel")].value, h["m"] * h["t_tp"])  # six all-reduces a layer with full
    assert close(r.timeline.dcs[0].window.value, 2 * h["t_c"] / 3 + h["t_r"])


def test_interleaved_stages_shrink_the_bubble_and_multiply_the_transfers():
    r = solve(replica="; virtual_stages = 2")
    h = inner_parts(v=2)
    assert close(r.components[C("pipeline_bubble")].value, h["bubble"])
    assert close(r.components[C("pipeline_parallel")].value, h["t_pp"])


# ---- the data-parallel sync ---------------------------------------------------------------


def hier_allreduce(payload_per_gpu: float) -> float:
    """The hierarchical all-reduce of one GPU's shard: n = cp R members a dc, tp pp cp R = 16 GPUs
    a dc, KN of a group in a node (above), the WAN carrying every GPU's slice (docs/cost-model.md, Replicas)."""
    n = cp * R
    gpus = G * R
    in_dc = (n - 1) * (nic_lat + max(payload_per_gpu / n / (KN * nic_bw), payload_per_gpu / n / nv_bw))
    across_step = 2 * nic_lat + wan_lat + max(gpus * payload_per_gpu / (n * K) / wan_bw, payload_per_gpu / (n * K) / nic_bw)
    return in_dc + 2 * (K - 1) * across_step + in_dc


def test_plain_data_parallelism():
    r = solve()
    h = inner_parts()
    shard = 2 * P / (tp * pp)
    sync = hier_allreduce(shard)
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    assert close(r.step_time.value, inner + sync)
    assert close(r.utilisation.value, inner / (inner + sync))


def test_overlap_with_the_backward_pass_bucket_by_bucket():
    r = solve(scheme="; overlap = backward; bucket = 16 MB")
    h = inner_parts()
    shard = 2 * P / (tp * pp)
    B = math.ceil(shard / 16e6)
    tau = hier_allreduce(shard / B)
    w = 2 * h["t_c"] / 3  # the last micro-batch's backward pass
    exposed = max(B * tau - w * (B - 1) / B, tau)
    (sy,) = r.syncs
    assert sy.buckets == B == 4
    assert close(sy.bucket_time.value, tau)
    assert close(r.components[C("exposed_sync:sync")].value, exposed)
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    assert close(r.step_time.value, inner + exposed)


def test_zero3_gathers_the_parameters_and_drops_the_last_all_gather():
    r = solve(replica="; zero = 3")
    h = inner_parts()
    n = cp * R
    shard = 2 * P / (tp * pp)  # the parameters at 2 bytes
    T_ag = (n - 1) * (nic_lat + shard / n / (KN * nic_bw))
    t_f, t_b = h["t_c"] / 3, 2 * h["t_c"] / 3
    one_layer = T_ag / (L / pp)
    per_micro = max(one_layer, T_ag - t_f) + max(one_layer, T_ag - t_b)
    assert close(r.components[C("parameter_gathers")].value, h["m"] * per_micro)
    # the bubble's micro-batches gather their parameters too
    assert close(r.components[C("pipeline_bubble")].value, (pp - 1) * (h["t_c"] + h["t_tp"] + h["t_cp"] + per_micro))
    assert [p.name for p in r.phases] == ["reduce-scatter in each dc", "all-reduce of each slice across dcs"]
    held = (P_layers / pp + V * d) / tp
    opt = held / n * (38 + 4) / mem_bw  # ZeRO 3 shards the optimiser and the gradient buffer alike
    assert close(r.components[C("optimiser")].value, opt)


def test_diloco_whose_workers_are_the_dcs():
    """inner = dc: the dense gradient reduced inside each dc every step; every H steps each GPU's
    slice of the outer gradient across the dcs and the updated slices gathered again."""
    H = 50
    r = solve(scheme=f"; period = {H}; inner = dc")
    h = inner_parts()
    n = cp * R
    shard = 2 * P / (tp * pp)
    in_dc = (n - 1) * (nic_lat + shard / n / (KN * nic_bw))
    across_step = 2 * nic_lat + wan_lat + G * R * shard / (n * K) / wan_bw
    inner_sync = 2 * in_dc
    outer = 2 * (K - 1) * across_step + in_dc
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    assert close(r.step_time.value, inner + inner_sync + outer / H)
    assert [p.every_step for p in r.phases] == [True, True, False, False]
    # the WAN carries 2 (K-1)/K of the payload per sync, whatever the replicas (per sync period: H inner syncs stay in the dcs)
    assert close(r.wan.value, 2 * (K - 1) * G * R * shard / (n * K))


def streaming(wan: float, F: int) -> tuple[float, float, float]:
    """By hand, Streaming DiLoCo with inner = dc over a WAN of `wan` B/s: (one fragment's outer
    sync of FP4 values, the inner sync every step, the inner step)."""
    h = inner_parts()
    n = cp * R
    dense_shard = 2 * P / (tp * pp)
    payload_shard = P * 0.5 / (tp * pp)
    in_dc = lambda x: (n - 1) * (nic_lat + x / n / (KN * nic_bw))  # noqa: E731
    across_step = 2 * nic_lat + wan_lat + G * R * payload_shard / F / (n * K) / wan
    fragment = 2 * (K - 1) * across_step + in_dc(dense_shard / F)
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    return fragment, 2 * in_dc(dense_shard), inner


def test_streaming_diloco_fragments_with_a_delay():
    """F fragments of FP4 outer gradients, each every H steps, overlapped over tau_d inner steps:
    a fragment sync exposes max(0, its time - tau_d x the inner step), F of them per H steps."""
    H, F, delay = 100, 4, 1
    r = solve({"wan_bw": "0.02 GB/s"}, payload="quantise; bits = 4 b", scheme=f"; period = {H}; inner = dc; fragments = {F}; delay = {delay}")
    fragment, inner_sync, inner = streaming(0.02e9, F)
    # the delay's inner steps each wait for the inner sync too
    exposed = max(0.0, fragment - delay * (inner + inner_sync)) * F / H
    assert close(r.components[C("exposed_sync:outer sync")].value, exposed)
    assert exposed > 0  # at 20 MB/s one fragment outlasts one inner step
    transform = r.components[C("transform")].value
    assert close(r.step_time.value, inner + inner_sync + transform + exposed)


def test_a_moe_replica_sends_its_tokens_to_the_experts():
    """ep 2 over two MoE layers of 4 experts, top-2: four all-to-alls per MoE layer per micro-batch
    of T k d beta, T = b s / (cp tp) with sequence parallelism, (ep-1)/ep of it leaving the GPU."""
    r = solve(model="; experts = 4; experts_per_token = 2; expert_mlp = 2048; moe_layers = 2", replica="; ep = 2")
    h = inner_parts()
    T = 1 * s / (cp * tp)
    size = T * 2 * d * beta
    moe_on_stage = 2 * (L / pp) / L
    a2a = (2 - 1) * nv_lat + (2 - 1) / 2 * size / nv_bw  # span ep = 2 <= 4: NVLink
    got = {x.kind: x for x in r.timeline.traffic if x.dc == "a"}
    assert close(got["expert_parallel"].per_micro.value, moe_on_stage * 4 * (2 - 1) / 2 * size)
    assert close(r.components[C("expert_parallel")].value, h["m"] * moe_on_stage * 4 * a2a)


def test_no_timeline_without_seq():
    text = spec().replace("; seq = 2048", "")
    r = solve_spec(text).schemes["x"]
    assert r.timeline is None and list(r.components)[0] == C("compute") and C("pipeline_bubble") not in r.components


def test_utilisation_target_is_exact_through_the_exposed_sync():
    """The WAN bandwidth for a compute utilisation of 0.5 with backward overlap, against brentq on the hand formula."""
    from scipy.optimize import brentq

    text = spec(scheme="; overlap = backward; bucket = 16 MB") + "target utilisation = 0.5 over wan_bw\n"
    sol = solve_spec(text)
    (t,) = sol.targets
    h = inner_parts()
    inner = h["compute"] + h["m"] * h["t_tp"] + h["bubble"] + h["t_pp"] + h["opt"]
    shard = 2 * P / (tp * pp)
    B = math.ceil(shard / 16e6)
    w = 2 * h["t_c"] / 3
    global wan_bw
    saved = wan_bw

    def cu(bw):
        global wan_bw
        wan_bw = bw
        tau = hier_allreduce(shard / B)
        wan_bw = saved
        return inner / (inner + max(B * tau - w * (B - 1) / B, tau)) - 0.5

    want = brentq(cu, 0.1e9, 100e9, xtol=1e-6, rtol=1e-14)
    assert t.roots[0].value == pytest.approx(want, rel=1e-9)


def test_fragment_syncs_that_outrun_the_link_set_the_step():
    """With a delay longer than the H / F steps between fragment syncs (F delay > H), a slow WAN
    queues them: F syncs of tau every H steps need F tau / H of every step, more than the inner
    step plus the delayed exposure."""
    H, F, delay = 8, 4, 5
    r = solve({"wan_bw": "0.001 GB/s"}, payload="quantise; bits = 4 b", scheme=f"; period = {H}; inner = dc; fragments = {F}; delay = {delay}")
    fragment, inner_sync, inner = streaming(0.001e9, F)
    delayed = max(0.0, fragment - delay * (inner + inner_sync)) * F / H
    bound = F * fragment / H - (inner + inner_sync)
    assert bound > delayed  # the link binds
    assert close(r.components[C("exposed_sync:outer sync")].value, bound)
    assert close(r.step_time.value, inner + inner_sync + r.components[C("transform")].value + bound)


def test_a_measured_mfu_is_the_inner_step_in_one_block():
    """A device with a measured MFU: the inner step is the model FLOPs / (GPUs x peak x mfu), with
    the bubble and the model-parallel traffic inside it; the reported MFU is that mfu x CU."""
    r = solve_spec(spec().replace("efficiency = 0.5;", "efficiency = 0.5; mfu = 0.3;")).schemes["x"]
    inner = F_tok * tokens / (G * 100e12 * 0.3)
    sync = hier_allreduce(2 * P / (tp * pp))
    assert r.timeline is None and list(r.components)[0] == C("compute") and C("pipeline_bubble") not in r.components
    assert close(r.components[C("compute")].value, inner)
    assert close(r.step_time.value, inner + sync)
    assert close(r.mfu.value, 0.3 * inner / (inner + sync))
