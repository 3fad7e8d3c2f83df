"""Memory per GPU (ctdsl.symbolic.memory) against published and hand-derived figures.

Published: the ZeRO paper's Figure 1 (Rajbhandari et al., arXiv:1910.02054): a
7.5B-parameter model on 64 data-parallel GPUs with mixed-precision Adam (K = 12)
needs 120 GB per GPU, 31.4 GB with optimiser states partitioned (P_os), 16.6 GB
with gradients too (P_os+g), 1.9 GB with the parameters too (P_os+g+p); and
Megatron's distributed optimizer guide (docs/source/api-guide/dist_optimizer.md):
18 bytes per parameter, or 6 + 12/d with the optimizer distributed over d ranks.
Hand-derived: Llama-3-70B at tp 8, pp 1, ZeRO-1 over 64 ranks, and Mixtral 8x7B
with expert parallelism, every figure worked out in the comments below.
"""

from __future__ import annotations

import pytest
import sympy as sp

from ctdsl import units as U
from ctdsl.api import check
from ctdsl.model import expr as E
from ctdsl.model import payload as PL
from ctdsl.results.params import Symbols
from ctdsl.symbolic import memory as MEM
from ctdsl.symbolic.context import context
from ctdsl.symbolic.dimensioned import DimExpr, DimensionError

REL = 1e-12


def close(x: DimExpr, expected: float) -> bool:
    assert x.dim == U.DATA
    return float(x.e) == pytest.approx(expected, rel=REL)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "m.ct"
    path.write_text("import std.models\n", encoding="utf-8")
    spec = check(str(path)).spec
    env = spec.defaults()
    return {n: (m, lambda x: round(E.evaluate(x, env))) for n, m in spec.models.items()}


# ---- ZeRO's Figure 1 ----------------------------------------------------------------


@pytest.mark.parametrize(
    "stage, hand, shown",
    [
        (0, 16 * 7.5e9, 120.0),  # 2 + 2 + 12 bytes per parameter
        (1, 4 * 7.5e9 + 12 * 7.5e9 / 64, 31.4),  # 30 + 1.40625 GB
        (2, 2 * 7.5e9 + 14 * 7.5e9 / 64, 16.6),  # 15 + 1.640625 GB
        (3, 16 * 7.5e9 / 64, 1.9),  # 1.875 GB
    ],
)
def test_zero_figure_1(stage, hand, shown):
    parts = MEM.states(sp.Integer(7_500_000_000), 64, stage, MEM.DEEPSPEED)
    total = parts["weights"] + parts["gradients"] + parts["optimizer"]
    assert close(total, hand)
    assert round(float(total.e) / 1e9, 1) == shown


def test_megatron_bytes_per_parameter():
    d = sp.Symbol("d", positive=True)
    plain = MEM.states(1, d, 0, MEM.MEGATRON)
    dist = MEM.states(1, d, 1, MEM.MEGATRON)
    assert sp.simplify(sum(v.e for v in plain.values()) - 18) == 0
    assert sp.simplify(sum(v.e for v in dist.values()) - (6 + 12 / d)) == 0


# ---- Llama-3-70B, tp 8, pp 1, ZeRO-1 over 64 ----------------------------------------


def test_llama3_70b_tp8_zero1_over_64(models):
    model, ev = models["llama3_70b"]
    P, Vd = 70_552_387_584, 128256 * 8192  # Vd = 1,050,673,152
    layers = ev(PL.layer_params(model))
    assert layers == P - 2 * Vd == 68_451_041_280
    # pp = 1 and untied: the one stage holds both tables, so the shard is P / 8 = 8,819,048,448
    shard = MEM.shard(layers, ev(PL.embedding_params(model)), tp=8, pp=1, untied=True)
    assert shard.dense.e == 8_819_048_448 and shard.experts.e == 0
    # s = 8192, b = 1, d = 8192, h = 64, L = 80, SP with selective recompute: 34 s b d / t per
    # layer = 285,212,672 B, x 80 = 22,817,013,760; logits and embeddings (pp = 1):
    # s b d / t = 8,388,608, + 4 (s b d / t)(1 + V/d) = 33,554,432 x 16.65625 = 558,891,008
    act = MEM.activations(8192, 1, 8192, 64, 80, tp=8, sp_on=True, recompute="selective", vocab=128256)
    assert close(act, 22_817_013_760 + 8_388_608 + 558_891_008)  # 23,384,293,376
    out = MEM.per_gpu(shard, 64, 1, 1, act, MEM.MEGATRON)
    assert close(out["weights"], 2 * 8_819_048_448)  # 17,638,096,896
    assert close(out["gradients"], 4 * 8_819_048_448)  # 35,276,193,792: fp32 main gradients
    assert close(out["optimizer"], 12 * 8_819_048_448 / 64)  # 1,653,571,584
    assert close(out["total"], 77_952_155_648)  # 77.95 GB
    assert close(MEM.headroom(out["total"], DimExpr(sp.Integer(80 * 10**9), U.DATA)), 2_047_844_352)  # fits an H100


def test_llama3_70b_whole_on_one_gpu_does_not_fit(models):
    """The flagship's case: one GPU holding the whole model. Its BF16 weights alone are 141.1 GB."""
    model, ev = models["llama3_70b"]
    shard = MEM.shard(ev(PL.layer_params(model)), ev(PL.embedding_params(model)))
    assert shard.dense.e == 70_552_387_584
    out = MEM.states(shard.total, 4, 1, MEM.MEGATRON)
    assert round(float(out["weights"].e) / 1e9, 2) == 141.10
    assert float(MEM.headroom(out["weights"], DimExpr(sp.Integer(80 * 10**9), U.DATA)).e) < 0


# ---- an MoE shard: Mixtral 8x7B, tp 2, pp 4, ep 8, dp 16 ----------------------------


def test_mixtral_expert_parallel_shard(models):
    model, ev = models["mixtral_8x7b"]
    expert = 3 * 4096 * 14336  # 176,160,768 per expert
    assert ev(PL.expert_layer_params(model)) == 8 * expert
    # P less two tables and 32 x 8 experts: attention 32 x 41,943,040 + routers 32 x 32,768
    # + norms 32 x 8,192 + 4,096 = 1,343,492,096
    layers = ev(PL.layer_params(model))
    assert layers == 46_702_792_704 - 2 * 32000 * 4096 - 32 * 8 * expert == 1_343_492_096
    s = MEM.shard(layers, 32000 * 4096, tp=2, pp=4, untied=True, expert_layer_params=8 * expert, moe_layers=32, ep=8)
    assert s.dense.e == (1_343_492_096 // 4 + 131_072_000) // 2 == 233_472_512  # pp > 1: one table
    assert s.experts.e == 32 // 4 * 1 * expert == 1_409_286_144  # 8 layers, 8/8 experts each
    # dense states over dp cp = 16, experts over edp = tp cp dp / (etp ep) = 2 x 16 / 8 = 4
    out = MEM.shard_states(s, 16, 4, 1, MEM.MEGATRON)
    dense = 6 * 233_472_512 + 12 * 233_472_512 / 16  # 1,575,939,456
    experts = 6 * 1_409_286_144 + 12 * 1_409_286_144 / 4  # 12,683,575,296
    assert close(out["weights"] + out["gradients"] + out["optimizer"], dense + experts)
    assert close(out["optimizer"], 12 * 233_472_512 / 16 + 12 * 1_409_286_144 / 4)


# ---- activations: the paper's equations agree with each other ----------------------

s_, b_, d_, h_, t_ = sp.symbols("s b d h t", positive=True)


def test_activation_equations():
    eq1 = s_ * b_ * d_ * (34 + 5 * h_ * s_ / d_)  # no parallelism, eq. 1
    none = MEM.layer_activations(s_, b_, d_, h_)
    assert sp.simplify(none.e - eq1) == 0  # eq. 2 at t = 1 is eq. 1
    sp_ = MEM.layer_activations(s_, b_, d_, h_, tp=t_, sp_on=True)
    assert sp.simplify(sp_.e - eq1 / t_) == 0  # eq. 4: SP divides all of it by t
    sel = MEM.layer_activations(s_, b_, d_, h_, tp=t_, recompute="selective")
    assert sp.simplify(sel.e - s_ * b_ * d_ * (10 + 24 / t_)) == 0
    assert MEM.layer_activations(s_, b_, d_, h_, tp=t_, recompute="full").e == 2 * s_ * b_ * d_


def test_flash_attention_keeps_no_scores():
    # FlashAttention (arXiv:2205.14135) keeps no s x s scores: eq. 4 without its 5 h s / d term,
    # as selective recomputation drops it (parallelism.md section 10)
    fl = MEM.layer_activations(s_, b_, d_, h_, tp=t_, sp_on=True, flash=True)
    assert sp.simplify(fl.e - 34 * s_ * b_ * d_ / t_) == 0
    fl1 = MEM.layer_activations(s_, b_, d_, h_, tp=t_, flash=True)  # no SP: eq. 2 without the scores
    assert sp.simplify(fl1.e - s_ * b_ * d_ * (10 + 24 / t_)) == 0
    assert MEM.layer_activations(s_, b_, d_, h_, tp=t_, recompute="full", flash=True).e == 2 * s_ * b_ * d_


def test_llama3_405b_fits_without_recomputation_as_the_paper_ran_it():
    """Llama 3 405B trained at 8K sequences "without activation checkpointing" (arXiv:2407.21783
    section 3.3.2) on 80 GB H100s at TP 8, PP 16, FSDP. By hand, the first stage's activations
    (Korthikanti eq. 5 with sequence parallelism, FlashAttention's no scores): 126 layers x
    s b d x 34 / t = 126 x 8192 x 16384 x 34 / 8 = 71,873,593,344 B, and the embedding dropout,
    final norm and logits s b d / t x pp = 268,435,456 B. With the scores term (5 h s / d =
    320 against 34) it would be 10 times that, and the run could not have fitted."""
    import ctdsl
    from solvekit import ROOT

    (m,) = ctdsl.load(ROOT / "specs" / "llama405b_16k.ct").solve().memory
    assert m.parts["activations"].value == 71_873_593_344 + 268_435_456
    assert m.fits is True and m.total.value < 80e9


def test_pipeline_and_context_factors():
    per_layer = MEM.layer_activations(4096, 1, 8192, 64, tp=8, sp_on=True, recompute="selective")
    assert per_layer.e == 34 * 4096 * 8192 // 8
    # interleaved over v = 2 chunks at pp = 4: x (1 + 3/8); m = 2 micro-batches < pp: x 2/4
    act = MEM.activations(4096, 1, 8192, 64, 80, tp=8, sp_on=True, recompute="selective", pp=4, microbatches=2, interleave=2)
    assert act.e == per_layer.e * 80 * sp.Rational(11, 8) * sp.Rational(1, 2)
    # cp = 2 halves s: the same as s = 2048
    halved = MEM.activations(4096, 1, 8192, 64, 80, tp=8, sp_on=True, recompute="selective", cp=2)
    assert halved.e == MEM.activations(2048, 1, 8192, 64, 80, tp=8, sp_on=True, recompute="selective").e


def test_symbolic_degrees():
    tp, dp = sp.symbols("tp dp", positive=True, integer=True)
    sh = MEM.shard(1000, 10, tp=tp, pp=1, untied=True)
    assert sp.simplify(sh.dense.e - 1020 / tp) == 0
    opt = MEM.states(sh.total, dp, 1)["optimizer"]
    assert sp.simplify(opt.e - 12 * 1020 / (tp * dp)) == 0


def test_bad_inputs():
    with pytest.raises(ValueError):
        MEM.states(1, 1, 4)
    with pytest.raises(ValueError):
        MEM.layer_activations(1, 1, 1, 1, recompute="some")
    with pytest.raises(DimensionError):
        MEM.count(DimExpr(sp.Integer(1), U.DATA))
    with pytest.raises(ValueError):  # the untied extra table is a branch on pp: it needs a number
        MEM.dense_shard(1, 1, pp=sp.Symbol("pp"))


def test_model_shard_through_the_cost_model(tmp_path):
    """model_shard() cuts the same shards from the spec's model in the back end's algebra."""
    path = tmp_path / "s.ct"
    path.write_text(
        "import std.devices\nimport std.links\nimport std.models\n"
        "model job : mixtral_8x7b { tokens = 1 }\nmodel dense : llama3_70b { tokens = 1 }\n"
        "device accel : h100 { efficiency = 0.5 }\nswitch tor {}\n"
        "dc east { workers = 2; device = accel; link = ib_ndr; switch = tor }\n"
        "scheme adamw { payload = dense; collective = ring_allreduce; model = job }\n",
        encoding="utf-8",
    )
    spec = check(str(path)).spec
    cm = context(spec, Symbols(spec))
    s = MEM.model_shard(spec.models["job"], cm.formulas, tp=2, pp=4, ep=8)
    assert (s.dense.e, s.experts.e) == (233_472_512, 1_409_286_144)  # as in the Mixtral test above
    d = MEM.model_shard(spec.models["dense"], cm.formulas, tp=8)
    assert (d.dense.e, d.experts.e) == (8_819_048_448, 0)  # Llama-3-70B: P / 8
