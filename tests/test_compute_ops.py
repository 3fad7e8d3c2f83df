"""Compute per operation (`compute = operations`, issue 27 item 2), against the operations'
FLOPs and bytes worked out here by hand from docs/cost-model.md ("Compute per operation"):
each operation max((F + F_half) / (peak x eff), Q / (mem_bw x mem_eff)), a memory-bound one
Q / (mem_bw x mem_eff); the backward twice the forward.

The spec: 4 layers of width h = 1024, a = g = 8 heads of d_h = 128, a GeLU MLP of f = 4096,
vocabulary V = 32,000, s = 1024, 2-byte values; 8,192 tokens a step in micro-batches of
b = 2 sequences (m = 4); tp = 2 with sequence parallelism; 100 TFLOP/s at efficiency 0.5
(5e13 FLOP/s), gemm_half 1 GFLOP, 1 TB/s at mem_efficiency 0.8 (8e11 B/s).
"""

from __future__ import annotations

import math

import pytest
import sympy as sp
from solvekit import C, solve_text

RATE, HALF, MEM = 100e12 * 0.5, 1e9, 1e12 * 0.8
T, h, a, g, dh, f, V, tp, beta, s, b = 2048, 1024, 8, 8, 128, 4096, 32000, 2, 2, 1024, 2
MICRO, LAYERS = 4, 4

SPEC = """
model m {{ layers = 4; width = 1024; heads = 8; kv_heads = 8; mlp = 4096; gated = false; vocab = 32000
  tied = true; causal = true; seq = 1024; bytes_per_value = 2 B; tokens = 8 * 1024 }}
device d {{ peak = 100 TFLOP/s; peak_fp8 = 200 TFLOP/s; efficiency = 0.5; mem_bw = 1 TB/s; gemm_half = 1 GFLOP; mem_efficiency = 0.8 }}
link nv {{ bandwidth = 100 GB/s; latency = 0 us }}
switch s {{}}
replica r {{ tp = 2; micro_batch = 2; gpus_per_node = {gpn}; scaleup_link = nv; compute = operations; {extra} }}
dc a {{ replica = r; replicas = 1; device = d; link = nv; switch = s }}
"""


def gemm(m, k, n, rate=RATE):
    flops, nbytes = 2 * m * k * n, beta * (m * k + k * n + m * n)
    return max((flops + HALF) / rate, nbytes / MEM)


def memory(nbytes):
    return nbytes / MEM


def layer(flash=True, sp=True, rate=RATE):
    """One layer's forward: (its GEMMs, its memory-bound operations, its attention core)."""
    qo, kv = T * a * dh / tp, b * s * g * dh / tp
    if flash:
        core_g = max((2 * 1 * T * s * a * dh / tp + HALF) / RATE, beta * (2 * qo + 2 * kv) / MEM)
        core_m = 0.0
    else:
        n = (a / tp) * T * s  # scores
        one = max((2 * T * s * a * dh / tp + HALF) / RATE, beta * (qo + kv + n) / MEM)
        core_g = 2 * one
        core_m = memory(2 * beta * n) + memory((2 * beta + 1) * n)
    gemms = gemm(T, h, (a + 2 * g) * dh / tp, rate) + core_g + gemm(T, a * dh / tp, h, rate) + gemm(T, h, f / tp, rate) + gemm(T, f / tp, h, rate)
    mem = core_m + memory(beta * 2 * T * f / tp) + memory((10 * beta + 2) * T * h / (tp if sp else 1))
    return gemms, mem, core_g + core_m


EMB = memory(2 * beta * T * h)
HEAD = gemm(T, h, V / tp) + memory(2 * beta * T * V / tp)


def terms(tmp_path, extra="recompute = none", gpn=2):
    r = solve_text(tmp_path, SPEC.format(extra=extra, gpn=gpn)).schemes["step"]
    return {t.id.id: t.value.value for t in r.terms}


def close(x, y):
    return math.isclose(x, y, rel_tol=1e-9)


def test_operations_one_stage(tmp_path):
    got = terms(tmp_path)
    gemms, mem, _ = layer()
    assert close(got["compute"], MICRO * 3 * LAYERS * gemms)
    assert close(got["memory_bound"], MICRO * 3 * LAYERS * mem)
    # one stage holds the embedding and the LM head, forward and backward
    assert close(got["end_stages"], MICRO * 3 * (EMB + HEAD))
    assert "recompute" not in got


def test_recomputation_full_and_selective(tmp_path):
    gemms, mem, core = layer()
    assert close(terms(tmp_path, "recompute = full")["recompute"], MICRO * LAYERS * (gemms + mem))
    assert close(terms(tmp_path, "recompute = selective")["recompute"], MICRO * LAYERS * core)


def test_without_flash_and_sequence_parallelism(tmp_path):
    got = terms(tmp_path, "recompute = none; flash = false; sequence_parallel = false")
    gemms, mem, _ = layer(flash=False, sp=False)
    assert close(got["compute"], MICRO * 3 * LAYERS * gemms)
    assert close(got["memory_bound"], MICRO * 3 * LAYERS * mem)


def test_fp8_gemms_at_peak_fp8(tmp_path):
    # the linear layers at 200 TFLOP/s x 0.5 (efficiency_fp8 defaults to efficiency); attention stays at BF16
    got = terms(tmp_path, "recompute = none; gemm_precision = fp8")
    gemms, _, core = layer(rate=2 * RATE)
    assert close(got["compute"], MICRO * 3 * LAYERS * gemms)
    # the LM head is a linear layer too
    head = gemm(T, h, V / tp, 2 * RATE) + memory(2 * beta * T * V / tp)
    assert close(got["end_stages"], MICRO * 3 * (EMB + head))


def test_end_stages_with_a_pipeline(tmp_path):
    # pp = 2: 2 layers a stage; the first adds the embedding, the last the LM head: the last binds
    got = terms(tmp_path, "recompute = none; pp = 2", gpn=4)
    gemms, mem, _ = layer()
    t_layer = gemms + mem
    assert close(got["compute"], MICRO * 3 * 2 * gemms)
    slowest = max(2 * t_layer + EMB, 2 * t_layer + HEAD)
    assert close(got["end_stages"], MICRO * 3 * (slowest - 2 * t_layer))
    # the bubble: the fill and drain pass through the other stage, which lacks the LM head: (pp - 1)
    # slots of a stage without the end stages' extra (no traffic inside it but tp's); a pipeline of
    # identical micro-batches takes sum_i t_i + (m - 1) max_i t_i. The convention leaves the first
    # stage's embedding (a lookup, EMB under 1% of HEAD here) out of it too. (With the head in the
    # bubble, as before, this was (pp - 1) x the slowest stage's slot.)
    slot = (got["compute"] + got["memory_bound"] + got["tensor_parallel"]) / MICRO
    assert got["end_stages"] > 0
    assert close(got["pipeline_bubble"], 1 * slot)


def test_uneven_end_stages(tmp_path):
    # pp = 3 on 4 layers: first 1, last 1, the middle 2 (Llama 3's lighter end stages)
    got = terms(tmp_path, "recompute = none; pp = 3; first_stage_layers = 1; last_stage_layers = 1", gpn=6)
    gemms, mem, _ = layer()
    t_layer = gemms + mem
    slowest = max(1 * t_layer + EMB, 1 * t_layer + HEAD, 2 * t_layer)
    assert close(got["compute"], MICRO * 3 * 2 * gemms)  # the most layers a stage holds: 2
    assert close(got["end_stages"], MICRO * 3 * (slowest - 2 * t_layer))


@pytest.mark.parametrize("fields", ["gemm_half = 0 GFLOP; mem_efficiency = 0.8", "gemm_half = 1 GFLOP; mem_efficiency = 1"])
def test_block_ignores_the_operation_fields(tmp_path, fields):
    # compute = block (the default) is FLOPs / (peak x efficiency): the curve's fields change nothing
    text = SPEC.format(extra="recompute = none", gpn=2).replace("compute = operations; ", "")
    a_ = solve_text(tmp_path, text).schemes["step"]
    b_ = solve_text(tmp_path, text.replace("gemm_half = 1 GFLOP; mem_efficiency = 0.8", fields), name="b.ct").schemes["step"]
    assert a_.step_time.value == b_.step_time.value
    assert C("memory_bound") not in {t.id for t in a_.terms}


@pytest.mark.parametrize(
    ("stages", "ok"),
    [
        ("pp = 4; first_stage_layers = 6; last_stage_layers = 6; virtual_stages = 2", True),  # Llama 3's: 5 + 1, 5 + 5 + 5 + 5 x 2, 5 + 1
        ("pp = 4; virtual_stages = 4", True),  # 8 layers a stage, chunks of 2
        ("pp = 4; virtual_stages = 3", False),  # chunks of 8 / 3 layers
        ("pp = 4; first_stage_layers = 4; last_stage_layers = 4; virtual_stages = 2", False),  # 12 a stage: chunks of 6, and 4 < 6
        # Llama 3 405B's: one layer a chunk, an end stage one layer short, its last chunk only the
        # embedding or the LM head (arXiv:2407.21783 section 3.3.2): 1 + 15 x 2 + 1
        ("pp = 17; first_stage_layers = 1; last_stage_layers = 1; virtual_stages = 2", True),
        ("pp = 17; first_stage_layers = 1; last_stage_layers = 1; virtual_stages = 4", False),  # 2 a stage: no 4 chunks
    ],
)
def test_virtual_stages_hold_whole_layers(tmp_path, stages, ok):
    # CT440 (issue 27 item 4): before it, any virtual_stages passed and shrank the bubble to (pp - 1) / v
    from ctdsl.api import check

    path = tmp_path / "v.ct"
    path.write_text(f"""
import std.devices
import std.links
import std.models
model m : llama3_8b {{ tokens = 1024 }}
device g : h100 {{ efficiency = 0.4 }}
switch s {{}}
replica r {{ tp = 2; {stages} }}
dc a {{ replica = r; replicas = 1; device = g; link = ib_ndr; switch = s }}
""", encoding="utf-8")
    codes = [d.code for d in check(path).diagnostics]
    assert ("CT440" not in codes) is ok, codes


MOE = """
model m {{ layers = 2; width = 1024; heads = 8; kv_heads = 8; mlp = 4096; gated = false; vocab = 32000
  experts = 4; experts_per_token = 2; expert_mlp = 2048
  tied = true; causal = true; seq = 1024; bytes_per_value = 2 B; tokens = 8 * 1024 }}
device d {{ peak = 100 TFLOP/s; efficiency = 0.5; mem_bw = 1 TB/s; gemm_half = 1 GFLOP; mem_efficiency = 0.8 }}
link nv {{ bandwidth = 100 GB/s; latency = 0 us }}
switch s {{}}
replica r {{ ep = 2; micro_batch = 2; gpus_per_node = 2; scaleup_link = nv; compute = operations; recompute = none; {extra} }}
dc a {{ replica = r; replicas = 2; device = d; link = nv; switch = s }}
"""


@pytest.mark.parametrize(
    ("extra", "load", "pad", "launches"),
    [
        ("moe_imbalance = 0.2", 1.2, 1, 1),  # dropless: the most-loaded rank takes 1.2 x the balanced tokens
        ("moe_imbalance = 0.2; capacity_factor = 1.1", 1.1, 1, 1),  # dropped at the capacity
        ("moe_imbalance = 0.2; capacity_factor = 1.25; pad_to_capacity = true", 1.25, 1.25, 1),  # padded: every expert its capacity
        ("grouped_gemm = false", 1, 1, 2),  # one GEMM per local expert (4 / ep = 2), each paying F_half
    ],
)
def test_moe_execution(tmp_path, extra, load, pad, launches):
    """MoE layers on tp = 1: T = 2,048 tokens a GPU routes, k = 2 copies each, 4 experts of
    f_e = 2,048 over ep = 2 (2 a GPU); every layer is MoE, so the dense MLP is not run."""
    r = solve_text(tmp_path, MOE.format(extra=extra)).schemes["step"]
    got = {t.id.id: t.value.value for t in r.terms}
    E, k, fe, local = 4, 2, 2048, 2
    beta_ = 2
    rows = load * T * k
    qo = kv = T * a * dh
    attn_g = (gemm(T, h, (a + 2 * g) * dh) + max((2 * T * s * a * dh + HALF) / RATE, beta_ * (2 * qo + 2 * kv) / MEM) + gemm(T, a * dh, h))
    attn_m = memory((10 * beta_ + 2) * T * h)
    up = max((2 * rows * h * fe + launches * HALF) / RATE, beta_ * (rows * h + local * h * fe + rows * fe) / MEM)
    down = max((2 * rows * fe * h + launches * HALF) / RATE, beta_ * (rows * fe + local * fe * h + rows * h) / MEM)
    moe_g = gemm(T, h, E) + up + down
    moe_m = memory(4 * beta_ * pad * T * k * h) + memory(beta_ * rows * 2 * fe)
    assert close(got["compute"], MICRO * 3 * 2 * (attn_g + moe_g))
    assert close(got["memory_bound"], MICRO * 3 * 2 * (attn_m + moe_m))


def test_recompute_share_is_a_param(tmp_path):
    """recompute_share (a param here): only that share of the layers recomputes, and with full
    recomputation only those layers run their forward's two all-reduces again, 4 + 2 x share a
    layer (without tp_async_backward: the papers' count, no gather again); each all-reduce of S =
    b s d beta = 4,194,304 B among tp = 2 on the 100 GB/s link with no latency takes 2 (tp - 1) /
    tp x S / W."""
    gemms, mem, _ = layer()
    S = b * s * h * beta
    allreduce = 2 * (tp - 1) / tp * S / 100e9
    text = "param share = 1 in 0.1 .. 1\n" + SPEC.format(extra="recompute = full; recompute_share = share", gpn=2)
    for value in (1.0, 0.5, 0.25):
        r = solve_text(tmp_path, text, overrides={"share": str(value)}).schemes["step"]
        got = {t.id.id: t.value.value for t in r.terms}
        assert close(got["recompute"], MICRO * LAYERS * (gemms + mem) * value)
        assert close(got["tensor_parallel"], MICRO * LAYERS * (4 + 2 * value) * allreduce)


def test_recompute_share_in_the_memory_check(tmp_path):
    """The layers recompute leaves out store all their activations: at share 1/2 the activations
    are the mean of full recomputation's and none's (two solves of the same spec, the ends)."""
    def activations(extra, name):
        sol = solve_text(tmp_path, SPEC.format(extra=extra, gpn=2), name=name)
        return sol.memory[0].parts["activations"].value

    full, none = activations("recompute = full", "f.ct"), activations("recompute = none", "n.ct")
    half = activations("recompute = full; recompute_share = 0.5", "h.ct")
    assert none > full and close(half, (full + none) / 2)


@pytest.mark.parametrize("extra, n, sp, slow, share", [
    ("recompute = none", 5, True, False, 0.0),  # sequence parallelism: 4 + 1 (the input gathered again) all-reduce equivalents
    ("recompute = full; sequence_parallel = false", 6, False, False, 0.0),  # the forward's and the recomputed forward's 4 of 6
    ("recompute = none; sequence_parallel = false", 4, False, True, 0.0),  # a slow link: the weight gradients hide part of each
    ("recompute = none", 5, True, False, 0.25),  # the collectives hold 16 of 64 SMs while they run
    ("recompute = none; sequence_parallel = false", 4, False, True, 0.25),
])
def test_tp_async_backward(tmp_path, extra, n, sp, slow, share):
    """The backward's column-parallel collectives beside the layers' gradient GEMMs (overlaps.py),
    by hand: with t_1 the time of one all-reduce equivalent (the TP time without the option over
    its L x n0 of them, n0 = 4 or 6), the option makes n all-reduce equivalents a layer (n0, and
    with sequence parallelism one more: the input gathered again), and a micro-batch waits for
    L t_1 (n - 2) + L sum_w x(t_1, w) without sequence parallelism; with it, L t_1 (n - 2) + 2 L
    sum_w x(t_1 / 2, w): the input gradient's reduce-scatter beside the weight-gradient GEMM and
    the input's gather again beside the input-gradient GEMM, each half an all-reduce. w: the QKV
    and MLP-up GEMMs' forward times (each gradient GEMM has its forward's shape). A collective that
    holds a share f of the SMs (the link's channels over the device's sms) leaves its GEMM the
    rest, so the pair takes max(w + f c, c) and exposes x(c, w) = max(f c, c - w); f = 0 without
    channels."""
    text = SPEC if not slow else SPEC.replace("link nv {{ bandwidth = 100 GB/s", "link nv {{ bandwidth = 1 GB/s")
    if share:  # 64 SMs of one-value tiles: no GEMM here wastes a tile or a wave (every m n is a multiple of 64)
        text = text.replace("mem_efficiency = 0.8 }}", "mem_efficiency = 0.8; sms = 64; tile_m = 1; tile_n = 1 }}")
        text = text.replace("latency = 0 us }}", "latency = 0 us; channels = 16 }}")

    def tp_time(more):
        r = solve_text(tmp_path, text.format(extra=extra + more, gpn=2), name=f"t{len(more)}.ct").schemes["step"]
        (term,) = [t for t in r.terms if t.id.id == "tensor_parallel"]
        behind = "the weight- and input-gradient GEMMs of the column-parallel layers" if sp else "the weight-gradient GEMMs of the column-parallel layers"
        assert term.behind == (behind if more else None)
        return term.value.value

    def x(c, w):
        return max(share * c, c - w)

    n0 = n - 1 if sp else n  # all-reduce equivalents without the option
    one = tp_time("") / MICRO / (LAYERS * n0)
    windows = (gemm(T, h, (a + 2 * g) * dh / tp), gemm(T, h, f / tp))
    if sp:
        waited, hidden = LAYERS * one * (n - 2), 2 * LAYERS * sum(x(one / 2, w) for w in windows)
    else:
        waited, hidden = LAYERS * one * (n - 2), LAYERS * sum(x(one, w) for w in windows)
    assert any(c > w for c in (one / 2 if sp else one,) for w in windows) == slow  # the fast link's collectives hide whole
    assert close(tp_time("; tp_async_backward = true"), MICRO * (waited + hidden))


def test_optimiser_passes_at_the_memory_rate(tmp_path):
    """The optimiser step (timeline.py, after Megatron's mixed-precision optimiser), by hand: per
    parameter of the GPU's shard, 4 B (the gradient norm) + 28 B (Adam: gradient, master, m, v
    read; master, m, v written) + 6 B (the fp32 master read, the 16-bit weight written) + 4 B (the
    gradient buffer zeroed), one replica (nothing to shard over), at mem_bw x mem_efficiency."""
    layer_params = 4 * h * h + 2 * h * f  # Q, K, V, O (a d_h = g d_h = h) and the GeLU MLP
    shard = (LAYERS * layer_params + V * h) / tp  # one stage; the tied embedding once
    got = terms(tmp_path)["optimiser"]
    assert close(got, shard * 42 / MEM)  # the model counts no norm weights (norms unset)


def test_optimiser_with_loss_scaling(tmp_path):
    """`loss_scaling = true` (fp16 with a loss scale), by hand from Megatron's fp16 optimiser: per
    parameter of the GPU's shard, the 38 B above, + 6 B (the 16-bit gradient read, the fp32 main
    gradient written) + 8 B (the main gradient unscaled in place: read, write) + 2 B (a 16-bit
    gradient buffer zeroed, not a 4 B one): 54 B, at mem_bw x mem_efficiency."""
    layer_params = 4 * h * h + 2 * h * f
    shard = (LAYERS * layer_params + V * h) / tp
    got = terms(tmp_path, "recompute = none; loss_scaling = true")["optimiser"]
    assert close(got, shard * 54 / MEM)



def _waste(m, n, sms, tile=(256, 128)):
    """Work over useful work of an m x n GEMM output, by hand: whole waves of whole tiles, the
    tile either way round, the smaller (docs/cost-model.md, "Tile and wave quantisation")."""
    out = []
    for tm, tn in (tile, tile[::-1]):
        waves = math.ceil(math.ceil(m / tm) * math.ceil(n / tn) / sms)
        out.append(waves * sms * tm * tn / (m * n))
    return min(out)


def test_tile_and_wave_quantisation_by_hand():
    from ctdsl import units as U
    from ctdsl.symbolic import compute_ops as CO
    from ctdsl.symbolic.dimensioned import DimExpr

    n = lambda x: DimExpr(sp.Integer(x), U.ONE)  # noqa: E731
    waste = lambda w, m, k: float(w.waste(n(m), n(k)).e)  # noqa: E731
    a100 = CO.Waves(n(108), n(256), n(128))
    # 2048 x 1536: 8 x 12 = 96 tiles of 256 x 128 (16 x 6 the other way): one wave of 108 slots
    assert waste(a100, 2048, 1536) == pytest.approx(108 / 96, rel=1e-15)
    # Table 5's 22B QKV forward at TP 8, micro-batch 4: 8192 x 2304, 32 x 18 = 576 tiles, 6 waves
    assert waste(a100, 8192, 2304) == pytest.approx(648 / 576, rel=1e-15)
    # the orientation: 384 x 128 on 2 SMs: 256 x 128 makes 2 tiles, one wave (4/3); 128 x 256 makes
    # 3 tiles, two waves (8/3); the smaller
    assert waste(CO.Waves(n(2), n(256), n(128)), 384, 128) == pytest.approx(4 / 3, rel=1e-15)
    # a GEMM's FLOPs carry the mean of its three passes': forward m x n, input gradient m x k, weight gradient k x n
    op = CO.gemm("g", n(2048), n(1024), n(1536), DimExpr(sp.Integer(2), U.DATA), a100)
    mean = (_waste(2048, 1536, 108) + _waste(2048, 1024, 108) + _waste(1024, 1536, 108)) / 3
    assert float(op.flops.e) == pytest.approx(2 * 2048 * 1024 * 1536 * mean, rel=1e-15)


def test_a_device_with_sms_quantises_every_linear_gemm(tmp_path):
    """The spec above on a device of 10 SMs with 256 x 128 tiles: each of the layer's and the LM
    head's GEMMs costs its FLOPs x the mean of its passes' waste, then F_half; the attention core
    does not."""
    text = SPEC.format(extra="recompute = none", gpn=2).replace("mem_efficiency = 0.8 }", "mem_efficiency = 0.8; sms = 10; tile_m = 256; tile_n = 128 }")
    got = {t.id.id: t.value.value for t in solve_text(tmp_path, text).schemes["step"].terms}

    def qgemm(m, k, n):
        w = (_waste(m, n, 10) + _waste(m, k, 10) + _waste(k, n, 10)) / 3
        return max((2 * m * k * n * w + HALF) / RATE, beta * (m * k + k * n + m * n) / MEM)

    qo, kv = T * a * dh / tp, b * s * g * dh / tp
    core = max((2 * 1 * T * s * a * dh / tp + HALF) / RATE, beta * (2 * qo + 2 * kv) / MEM)
    gemms = qgemm(T, h, (a + 2 * g) * dh // tp) + core + qgemm(T, a * dh // tp, h) + qgemm(T, h, f // tp) + qgemm(T, f // tp, h)
    assert close(got["compute"], MICRO * 3 * LAYERS * gemms)
    head = qgemm(T, h, V // tp) + memory(2 * beta * T * V / tp)
    assert close(got["end_stages"], MICRO * 3 * (EMB + head))
    # and it is slower than the same device without the quantisation
    assert got["compute"] > terms(tmp_path)["compute"]


def test_sms_without_a_tile_is_ct441(tmp_path):
    from ctdsl.api import check

    path = tmp_path / "t.ct"
    path.write_text(SPEC.format(extra="recompute = none", gpn=2).replace("mem_efficiency = 0.8 }", "mem_efficiency = 0.8; sms = 10 }"), encoding="utf-8")
    assert "CT441" in [d.code for d in check(path).diagnostics]
