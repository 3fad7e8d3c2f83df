"""tools/validation_whatif.py, the evidence of docs/validation.md ("What is left and why"):
its wave quantisation and its ranking-noise figures, each against a value derived by hand.
In-process and without a solve (the page's figures come from running the tool)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import validation_whatif as W  # noqa: E402


def test_wave_efficiency_by_hand():
    # 22B's QKV forward output at TP 8, micro-batch 4: 8,192 x 2,304. In 256 x 128 tiles:
    # 32 x 18 = 576 tiles, 6 waves of 108 (648 tile slots): 576 / 648 = 8/9.
    assert W.wave_efficiency(8192, 2304, [(256, 128)]) == pytest.approx(8 / 9, rel=1e-12)
    # in 128 x 128 tiles: 64 x 18 = 1,152 tiles, 11 waves (1,188 slots): 1152 / 1188
    assert W.wave_efficiency(8192, 2304, [(128, 128)]) == pytest.approx(1152 / 1188, rel=1e-12)
    # the best of the two
    assert W.wave_efficiency(8192, 2304, [(256, 128), (128, 128)]) == pytest.approx(1152 / 1188, rel=1e-12)
    # a partial tile: 100 x 100 in one 256 x 128 tile on 108 SMs: 10,000 useful of 108 x 32,768
    assert W.wave_efficiency(100, 100, [(256, 128)]) == pytest.approx(10_000 / (108 * 32_768), rel=1e-12)


def test_gemm_waste_by_hand():
    # 1T's QKV at TP 8, micro-batch 1: m = 2,048 tokens, k = 25,600, n = 9,600, 256 x 128 tiles:
    # forward 8 x 75 = 600 tiles in 6 waves (648); input gradient 8 x 200 = 1,600 in 15 (1,620);
    # weight gradient 100 x 75 = 7,500 in 70 (7,560): the mean of 648/600, 1620/1600, 7560/7500
    want = (648 / 600 + 1620 / 1600 + 7560 / 7500) / 3
    assert W.gemm_waste(2048, 25600, 9600, [(256, 128)]) == pytest.approx(want, rel=1e-12)


def test_the_patched_gemm_carries_the_waste_and_is_undone():
    from ctdsl import units as U
    from ctdsl.symbolic import compute_ops as CO
    from ctdsl.symbolic.dimensioned import DimExpr

    d = lambda v: DimExpr(sp.Integer(v), U.ONE)  # noqa: E731
    beta = DimExpr(sp.Integer(2), U.DATA)
    before = CO.gemm("QKV", d(8192), d(6144), d(2304), beta)
    undo = W.apply([(256, 128)])
    try:
        op = CO.gemm("QKV", d(8192), d(6144), d(2304), beta)
    finally:
        undo()
    # 2 m k n FLOPs x the mean waste of the forward (8,192 x 2,304), input-gradient
    # (8,192 x 6,144: 32 x 48 = 1,536 tiles, 15 waves, 1,620 slots) and weight-gradient
    # (6,144 x 2,304: 24 x 18 = 432 tiles, exactly 4 waves) outputs
    waste = (648 / 576 + 1620 / 1536 + 1) / 3
    assert float(op.flops.e) == pytest.approx(2 * 8192 * 6144 * 2304 * waste, rel=1e-12)
    assert op.nbytes == before.nbytes
    assert CO.gemm("QKV", d(8192), d(6144), d(2304), beta).flops == before.flops  # undone


def test_rank_noise_without_error_ranks_exactly_and_falls_with_it():
    measured = [9.6, 9.9, 10.0, 10.4, 11.0, 12.4, 13.2, 16.2, 20.4]
    assert W.rank_noise(measured, 0.0, draws=50) == (1.0, 1.0, 1.0)
    rho2, _, _ = W.rank_noise(measured, 2.0, draws=400)
    rho10, _, _ = W.rank_noise(measured, 10.0, draws=400)
    assert 1.0 > rho2 > rho10


PIPE = """
model m { layers = 4; width = 1024; heads = 8; kv_heads = 8; mlp = 4096; gated = false; vocab = 32000
  tied = true; causal = true; seq = 1024; bytes_per_value = 2 B; tokens = 8 * 1024 }
device d { peak = 100 TFLOP/s; efficiency = 0.5; mem_bw = 1 TB/s; gemm_half = 1 GFLOP; mem_efficiency = 0.8 }
link nv { bandwidth = 100 GB/s; latency = 0 us }
switch s {}
replica r { tp = 1; pp = 2; micro_batch = 2; gpus_per_node = 2; scaleup_link = nv; compute = operations }
dc a { replica = r; replicas = 1; device = d; link = nv; switch = s }
"""


def test_head_once_takes_the_end_stages_extra_out_of_the_bubble(tmp_path):
    """--head-once: the bubble less (pp - 1) / v x the end stages' extra of one micro-batch, the
    rest of the step as it was (pp = 2, v = 1, m = 8 / 2 = 4 micro-batches)."""
    from solvekit import solve_text

    def terms():
        r = solve_text(tmp_path, PIPE).schemes["step"]
        return {t.id.id: float(t.value.value) for t in r.terms}

    before = terms()
    undo = W.apply(None, head_once=True)
    try:
        after = terms()
    finally:
        undo()
    assert before["end_stages"] > 0 and before["pipeline_bubble"] > 0
    assert after["pipeline_bubble"] == pytest.approx(before["pipeline_bubble"] - (2 - 1) / 1 * before["end_stages"] / 4, rel=1e-12)
    assert {k: v for k, v in after.items() if k != "pipeline_bubble"} == pytest.approx({k: v for k, v in before.items() if k != "pipeline_bubble"}, rel=1e-12)
    assert terms() == pytest.approx(before, rel=1e-12)  # undone
