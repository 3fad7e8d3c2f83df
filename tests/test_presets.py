"""The library presets against their published figures.

Each model's parameter count P (and, for an MoE model, the count P_act a token
uses) is written out below by hand from the shape its source gives, and compared
both with what the checker counts and with the figure the source publishes, to
the precision it publishes it. The device and link figures are the datasheets'
numbers, typed here from the datasheets, not read from the preset files.
Formulas: parallelism.md sections 1.1 and 1.2 (d width, L layers, V vocabulary):
attention per layer 2 d (h d_h) + 2 d (g d_h), a gated MLP 3 d f, a plain one
2 d f, norms 2d per layer and d at the end, embeddings V d (twice untied).
"""

from __future__ import annotations

import textwrap

import pytest
import sympy as sp

from ctdsl import units as U
from ctdsl.api import check
from ctdsl.model import expr as E
from ctdsl.model import payload as PL
from ctdsl.results.params import Symbols
from ctdsl.symbolic.context import context
from solvekit import solve_text

SPEC = """\
import std.devices
import std.links
import std.models
"""


@pytest.fixture(scope="module")
def std(tmp_path_factory):
    path = tmp_path_factory.mktemp("std") / "std.ct"
    path.write_text(SPEC, encoding="utf-8")
    result = check(str(path))
    assert result.ok, [d.message for d in result.diagnostics]
    return result.spec


def value(spec, expr) -> float:
    return E.evaluate(expr, spec.defaults())


def params(spec, name) -> int:
    return round(value(spec, spec.models[name].params))


def active(spec, name) -> int:
    return round(value(spec, PL.active_params(spec.models[name])))


# ---- models: hand counts and published figures ------------------------------------


def test_llama3_8b_and_70b_keep_domain_figures(std):
    # domain.md section 2, norms not counted: L(2d^2 + 2dg d/h + 3df) + 2Vd
    assert params(std, "llama3_8b") == 32 * (2 * 4096**2 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336) + 2 * 128256 * 4096
    assert params(std, "llama3_8b") == 8_029_995_008
    assert params(std, "llama3_70b") == 70_552_387_584
    assert round(params(std, "llama3_8b") / 1e9, 2) == 8.03  # Meta: "8B", Hugging Face 8.03e9
    assert round(params(std, "llama3_70b") / 1e9, 2) == 70.55


def test_llama3_405b(std):
    d, L, f, V = 16384, 126, 53248, 128256
    attn = 2 * d * d + 2 * d * 8 * 128  # Q, O: d x d; K, V: d x (8 heads x 128)
    layer = attn + 3 * d * f + 2 * d  # SwiGLU, two RMSNorms
    hand = L * layer + d + 2 * V * d  # final norm, untied embeddings
    assert hand == 405_853_388_800  # the released config's count, with norms
    assert params(std, "llama3_405b") == hand
    assert round(hand / 1e9, 1) == 405.9  # the paper's "405B"


def test_gpt3_175b(std):
    d, L, V = 12288, 96, 50257
    hand = L * (4 * d * d + 2 * d * 4 * d) + V * d  # MHA, GeLU 4d, tied embeddings
    assert hand == 174_563_733_504
    assert params(std, "gpt3_175b") == hand
    assert round(hand / 1e9) == 175  # Brown et al. Table 2.1: "175.0B" (biases, norms, positions not counted)


def test_nemotron4_340b(std):
    d, L, V, f = 18432, 96, 256000, 73728
    embedding = 2 * V * d  # untied
    body = L * (2 * d * d + 2 * d * 8 * 192 + 2 * d * f)  # 8 KV heads of 192; squared ReLU, not gated
    assert params(std, "nemotron4_340b") == embedding + body
    assert round(embedding / 1e9, 1) == 9.4  # arXiv:2406.11704: 9.4B embedding parameters
    assert round(body / 1e9, 1) == 331.6  # and 331.6B non-embedding
    assert round((embedding + body) / 1e9) == 341


def test_mixtral_8x7b(std):
    d, L, V, f, E_, k = 4096, 32, 32000, 14336, 8, 2
    attn = 2 * d * d + 2 * d * 8 * 128
    layer = attn + E_ * 3 * d * f + d * E_ + 2 * d  # experts, router, norms
    hand = L * layer + d + 2 * V * d
    hand_active = hand - L * (E_ - k) * 3 * d * f
    assert hand == 46_702_792_704  # the released checkpoint's count
    assert params(std, "mixtral_8x7b") == hand
    assert active(std, "mixtral_8x7b") == hand_active == 12_879_925_248
    assert round(hand / 1e9, 1) == 46.7  # Mistral AI: 46.7B total
    assert round(hand_active / 1e9, 1) == 12.9  # and 12.9B per token


def test_deepseek_v3(std):
    d, V, E_, k, fe, fsh, f = 7168, 129280, 256, 8, 2048, 2048, 18432
    mla = 7168 * 1536 + 1536 * 16384 + 1536 * 8192 + 7168 * 512 + 512 * 16384 * 2 + 7168 * 64 + 16384 * 7168
    assert mla == 187_105_280
    dense_layer = mla + 3 * d * f + 2 * d
    moe_layer = mla + E_ * 3 * d * fe + 3 * d * fsh + d * E_ + 2 * d
    hand = 3 * dense_layer + 58 * moe_layer + d + 2 * V * d
    hand_active = hand - 58 * (E_ - k) * 3 * d * fe
    assert params(std, "deepseek_v3") == hand == 671_026_279_424
    assert active(std, "deepseek_v3") == hand_active == 37_552_157_696
    assert round(hand / 1e9) == 671  # arXiv:2412.19437: 671B total
    assert int(hand_active / 1e9) == 37  # and "37B" activated: 37.55e9 truncated
    assert round((hand_active - V * d) / 1e9) == 37  # or 36.63e9 without the input lookup


def test_moe_compute_uses_active_and_sync_uses_total(tmp_path):
    """Through the solver: the update is v P, the compute 6 P_act per token."""
    text = SPEC + textwrap.dedent(
        """
        model job : mixtral_8x7b { tokens = 1000 }
        device accel : h100 { efficiency = 0.5 }
        switch tor {}
        dc east { workers = 2; device = accel; link = ib_ndr; switch = tor }
        scheme adamw { payload = dense; collective = ring_allreduce }
        """
    )
    r = solve_text(tmp_path, text)
    m = r.models["job"]
    assert m.params == 46_702_792_704
    assert m.dense.value == 2 * 46_702_792_704
    assert m.flops_per_step.value == 6 * 12_879_925_248 * 1000


def test_flops_with_seq_are_the_full_form(tmp_path):
    """parallelism.md 2.3 for Llama-3-8B at s = 8192, c = 1 (causal):
    6 [L d d_h (2h + 2g) + L 3df + dV] + 6 L s h d_h."""
    L, d, f, V, s = 32, 4096, 14336, 128256, 8192
    bracket = L * (2 * d * d + 2 * d * 8 * 128) + L * 3 * d * f + d * V
    text = SPEC + "model job : llama3_8b { tokens = 1; seq = 8192 }\nmodel full : job { causal = false }\n"
    path = tmp_path / "s.ct"
    path.write_text(text, encoding="utf-8")
    spec = check(str(path)).spec
    assert value(spec, spec.models["job"].flops_per_token) == 6 * bracket + 6 * 1 * L * s * d
    assert value(spec, spec.models["full"].flops_per_token) == 6 * bracket + 6 * 2 * L * s * d
    assert value(spec, spec.models["job"].params) == 8_029_995_008  # P itself does not move


# ---- devices and links: datasheet figures -------------------------------------------

T, G = 1e12, 1e9
DEVICES = {
    # name: (dense BF16 FLOP/s, dense FP8 FLOP/s or None, HBM B/s, HBM B, board W)
    "a100": (312 * T, None, 2039 * G, 80 * G, 400),  # A100 SXM4 80 GB datasheet
    "a100_40gb": (312 * T, None, 1555 * G, 40 * G, 400),  # A100 SXM4 40 GB
    "a100_80gb": (312 * T, None, 2039 * G, 80 * G, 400),
    "h100": (989 * T, 1979 * T, 3350 * G, 80 * G, 700),  # H100 SXM5 datasheet: 1,979 / 3,958 with sparsity
    "h100_sxm": (989 * T, 1979 * T, 3350 * G, 80 * G, 700),
    "h200": (989 * T, 1979 * T, 4800 * G, 141 * G, 700),  # H200 SXM datasheet
    "b200": (2250 * T, 4500 * T, 8000 * G, 180 * G, 1000),  # HGX B200: 36 / 72 PFLOP/s sparse, 1.44 TB, 64 TB/s per 8
    "gb200": (2500 * T, 5000 * T, 8000 * G, 186 * G, 1200),  # GB200 NVL72: 360 / 720 PFLOP/s sparse, 13.4 TB, 576 TB/s per 72
    "mi300x": (1307.4 * T, 2614.9 * T, 5300 * G, 192 * G, 750),  # MI300X data sheet
}


@pytest.mark.parametrize("name", sorted(DEVICES))
def test_device_datasheet(std, name):
    peak, fp8, bw, mem, power = DEVICES[name]
    d = std.devices[name]
    assert value(std, d.peak) == pytest.approx(peak, rel=1e-12)
    assert (d.peak_fp8 is None) if fp8 is None else value(std, d.peak_fp8) == pytest.approx(fp8, rel=1e-12)
    assert value(std, d.mem_bw) == pytest.approx(bw, rel=1e-12)
    assert value(std, d.memory) == pytest.approx(mem, rel=1e-12)
    assert value(std, d.power) == pytest.approx(power, rel=1e-12)


def test_rack_and_board_totals(std):
    """GB200 per GPU x 72 gives the NVL72 page's rack dense figures; B200 x 8 the HGX board's."""
    gb = std.devices["gb200"]
    assert value(std, gb.peak) * 72 == pytest.approx(360e15 / 2, rel=1e-12)
    assert value(std, gb.peak_fp8) * 72 == pytest.approx(720e15 / 2, rel=1e-12)
    assert value(std, gb.mem_bw) * 72 == pytest.approx(576e12, rel=1e-12)
    assert value(std, gb.memory) * 72 == pytest.approx(13.4e12, rel=0.001)  # 13.392 TB: 186 GB is rounded
    b = std.devices["b200"]
    assert value(std, b.memory) * 8 == pytest.approx(1.44e12, rel=1e-12)


LINKS = {  # name: line rate in Gb/s, one direction
    "nvlink3": 2400, "nvlink4": 3600, "nvlink5": 7200,  # 600, 900, 1,800 GB/s both ways
    "ib_hdr": 200, "ib_ndr": 400, "ib_xdr": 800,
    "roce400g": 400, "roce800g": 800,
    "eth100g": 100, "eth400g": 400, "eth800g": 800,
    "zr400": 400,
}


@pytest.mark.parametrize("name", sorted(LINKS))
def test_link_line_rate(std, name):
    assert value(std, std.links[name].bandwidth) == pytest.approx(LINKS[name] * 1e9 / 8, rel=1e-12)


def test_only_nvlink3_states_its_collectives_channels(std):
    """NCCL's log for 8 A100s on 2nd-generation NVSwitch counts 24 channels ("Channel 23/24",
    NVIDIA/nccl-tests issue 100), one SM each (NVIDIA/nccl issue 689): the nvlink3 preset holds 24 of
    the a100 preset's 108 SMs while a collective runs. No other preset states a channel count."""
    assert value(std, std.links["nvlink3"].channels) == 24
    assert value(std, std.devices["a100"].sms) == 108
    assert [n for n, link in std.links.items() if link.channels is not None] == ["nvlink3"]


def test_zr400_latency_covers_its_fibre(std):
    link = std.links["zr400"]
    assert value(std, link.latency) >= value(std, link.distance) / 2e8  # light in fibre, 5 us per km


def test_head_dim_frees_width_from_heads(tmp_path):
    """With head_dim, width need not be heads x head_dim: attention is 2 d (h d_h) + 2 d (g d_h),
    and the KV cache 2 L g d_h v."""
    path = tmp_path / "h.ct"
    path.write_text(
        "model m { layers = 2; width = 60; heads = 8; kv_heads = 2; head_dim = 16; mlp = 128; vocab = 100; bytes_per_value = 2 B }\n",
        encoding="utf-8",
    )
    result = check(str(path))
    assert result.ok, [d.message for d in result.diagnostics]
    spec = result.spec
    m = spec.models["m"]
    hand = 2 * (2 * 60 * (8 * 16) + 2 * 60 * (2 * 16) + 3 * 60 * 128) + 2 * 100 * 60
    assert value(spec, m.params) == hand == 96_480
    assert value(spec, PL.kv_bytes_per_token(m)) == 2 * 2 * 2 * 16 * 2


def test_formulas_in_the_dimensioned_algebra(tmp_path):
    """The same formulas run in the back end's dimensioned sympy (D.FieldAlgebra): with the
    expert count a param, P and P_act are exact polynomials in it, dimensionless."""
    text = SPEC + textwrap.dedent(
        """
        param n = 8 in 4 .. 64
        model job : mixtral_8x7b { experts = n; tokens = 1 }
        device accel : h100 { efficiency = 0.5 }
        switch tor {}
        dc east { workers = 2; device = accel; link = ib_ndr; switch = tor }
        scheme adamw { payload = dense; collective = ring_allreduce }
        """
    )
    path = tmp_path / "n.ct"
    path.write_text(text, encoding="utf-8")
    spec = check(str(path)).spec
    symbols = Symbols(spec)
    cm = context(spec, symbols)
    model = spec.models["job"]
    (n,) = cm.sym(model.params).free_symbols
    P, P_act = PL.total_params(model, cm.formulas), PL.active_params(model, cm.formulas)
    assert P.dim == P_act.dim == U.ONE
    d, L, V, f = 4096, 32, 32000, 14336
    attn = 2 * d * d + 2 * d * 8 * 128
    hand = L * (attn + n * 3 * d * f + d * n + 2 * d) + d + 2 * V * d
    assert sp.expand(P.e - hand) == 0
    assert sp.expand(P_act.e - (hand - L * (n - 2) * 3 * d * f)) == 0
    assert sp.expand(P.e - cm.sym(model.params)) == 0  # the checker's count, the same form
    flops = cm.field(model, "flops_per_token")
    assert flops.dim == U.OPS and sp.expand(flops.e - 6 * P_act.e) == 0
