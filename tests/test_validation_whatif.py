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



def test_deepspeeds_pipeline_schedule_has_1f1bs_makespan():
    """tools/deepspeed_schedule.py: DeepSpeed's TrainSchedule, command by command. With free
    transfers its makespan is 1F1B's, (m + pp - 1)(f + b), for any f and b (checked at b = 2 f and
    b = 3 f, full recomputation's). At pp = 2 each of the 2 m blocking transfers is exposed: 2 m c
    more (docs/validation.md, "vTrain 18.4B")."""
    import deepspeed_schedule as DS

    for pp in (2, 4, 8):
        for m in (1, 3, 4, 16):
            for f, b in ((1.0, 2.0), (1.0, 3.0)):
                assert DS.makespan(m, pp, f, b) == pytest.approx((m + pp - 1) * (f + b), rel=1e-12)
    for m in (4, 8, 16):
        assert DS.makespan(m, 2, 1.0, 2.0, 0.1) - (m + 1) * 3.0 == pytest.approx(2 * m * 0.1, rel=1e-9)
    # every stage runs each micro-batch's forward and backward once
    for s in range(4):
        ops = DS.commands(8, 4, s)
        assert sorted(k for op, k in ops if op == "F") == list(range(8)) == sorted(k for op, k in ops if op == "B")
