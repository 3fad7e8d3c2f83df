"""Serving's closed forms (issue 28 part A): each term against a hand derivation, and the
sister simulator's published figures (BrendanJamesLynskey/Disaggregated_Inference_Sim,
examples/results.md, recorded 2026-10-06) as expected values.

The hand derivations below use plain Python arithmetic on the models' shapes and the
datasheet figures, not ctdsl's code: M = P - V d (the weights a step reads), k = 2 L g d_h v.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import sympy as sp

from ctdsl import units as U
from ctdsl.api import load
from ctdsl.model.expr import evaluate
from ctdsl.report.serving_out import serving_csv
from ctdsl.report.tables import render_markdown
from ctdsl.symbolic.context import contexts
from ctdsl.symbolic.convert import Env, Symbols, value
from ctdsl.symbolic.dimensioned import DimExpr
from ctdsl.symbolic.serving_steps import instance_forms

ROOT = Path(__file__).resolve().parents[1]
DISAGG = ROOT / "specs" / "llama70b_disagg.ct"
EXAMPLE = ROOT / "examples" / "22_serving.ct"

# ---- the hand derivation: Llama-3-8B and -70B (domain.md section 2), H100 SXM (datasheet) ----------

PEAK, HBM, MEM = 989e12, 3.35e12, 80e9  # H100 SXM: dense BF16 FLOP/s, HBM B/s, B
ETA, MU, OVERHEAD = 0.55, 0.8, 0.5e-3  # the sister's efficiencies and per-step overhead
V = 128256  # Llama 3 vocabulary


def _shape(layers: int, d: int, kv_heads: int, mlp: int) -> dict:
    dh = d // (d // 128)  # 128-wide heads
    layer = 2 * d * d + 2 * d * kv_heads * dh + 3 * d * mlp
    p = layers * layer + 2 * V * d
    return {"L": layers, "d": d, "P": p, "M": p - V * d, "k": 2 * layers * kv_heads * dh * 2}


L8 = _shape(32, 4096, 8, 14336)
L70 = _shape(80, 8192, 8, 28672)


def _prefill(m: dict, gpus: int, s: int, n: int = 1) -> float:
    flops = 2 * m["M"] * n * s + 2 * m["L"] * m["d"] * n * s * (s + 1)
    nbytes = m["M"] * 2 + n * s * (m["d"] * 2 + m["k"])
    return max(flops / (gpus * PEAK * ETA), nbytes / (gpus * HBM * MU)) + OVERHEAD


def _decode(m: dict, gpus: int, b: float, c: float) -> float:
    flops = 2 * m["M"] * b + 4 * m["L"] * m["d"] * b * (c + 1)
    nbytes = m["M"] * 2 + b * m["d"] * 2 + b * (c + 1) * m["k"]
    return max(flops / (gpus * PEAK * ETA), nbytes / (gpus * HBM * MU)) + OVERHEAD


def test_hand_shapes_are_the_known_sizes():
    assert L8["k"] == 131_072 and L70["k"] == 327_680  # inference.md: B/token
    # the released counts less the norm weights 2 d L + d, which the presets and the sister leave out
    assert L8["P"] == 8_030_261_248 - (2 * 4096 * 32 + 4096) and L70["P"] == 70_553_706_496 - (2 * 8192 * 80 + 8192)


@pytest.fixture(scope="module")
def disagg():
    return load(DISAGG).solve()


@pytest.fixture(scope="module")
def example():
    return load(EXAMPLE).solve()


def _forms(path: Path, instance: str):
    spec = load(path).spec
    symbols = Symbols(spec)
    return instance_forms(contexts(spec, symbols)[None], spec.serving.instances[instance]), Env(symbols.defaults())


def _n(x: int) -> DimExpr:
    return DimExpr(sp.Integer(x), U.ONE)


# ---- steps: the sister's published closed-form figures (results.md section 1) -----------------------


@pytest.mark.parametrize(
    "path, instance, model, gpus, kind, b, c, published_ms",
    [
        (EXAMPLE, "node", L8, 1, "prefill", 1, 2048, 59.033),
        (DISAGG, "node", L70, 4, "prefill", 1, 2048, 133.867),
        (EXAMPLE, "node", L8, 1, "decode", 1, 2048, 6.201),
        (EXAMPLE, "node", L8, 1, "decode", 64, 2048, 12.514),
        (DISAGG, "node", L70, 4, "decode", 16, 2300, 14.592),
        (DISAGG, "node", L70, 4, "decode", 1, 2048, 13.529),
    ],
)
def test_step_times_match_published_and_hand(path, instance, model, gpus, kind, b, c, published_ms):
    forms, env = _forms(path, instance)
    if kind == "prefill":
        got, hand = value(forms.prefill(_n(b), _n(c)).e, env), _prefill(model, gpus, c, b)
    else:
        got, hand = value(forms.decode(_n(b), _n(c)).e, env), _decode(model, gpus, b, c)
    assert got == pytest.approx(hand, rel=1e-12)
    assert round(got * 1e3, 3) == published_ms


def test_decode_bytes_match_published():
    forms, env = _forms(DISAGG, "node")
    assert round(value(forms.decode_bytes(_n(16), _n(2300)).e, env) / 1e9, 3) == 151.068  # results.md: GB after
    assert round(value(forms.decode_bytes(_n(1), _n(2048)).e, env) / 1e9, 3) == 139.675


# ---- capacities (results.md section 8 and the 25 GbE saturation of inference.md) ----------------------


def _path(sol, name):
    return next(r for r in sol.serving if r.name == name)


def test_capacity_bounds_of_llama70b_on_4xh100_over_ndr(disagg):
    r = _path(disagg, "disagg/ndr")
    # published: prefill 7.49, decode 28.8, KV link 74.5 req/s (benchmark output: 7.49, 28.84, 74.45)
    assert round(r.capacities["prefill"].value, 2) == 7.49
    assert round(r.capacities["decode"].value, 2) == 28.84
    assert round(r.capacities["link"].value, 2) == 74.45
    assert r.binding == "prefill" and r.sustainable.value == r.capacities["prefill"].value
    # by hand: 4 prompts of 2,048 in an 8,192-token batch; the decode batch as many as fit in KV
    assert r.capacities["prefill"].value == pytest.approx(4 / _prefill(L70, 4, 2048, 4), rel=1e-12)
    kv_tokens = math.floor((4 * MEM * 0.9 - L70["P"] * 2) / L70["k"])
    b = min(256, kv_tokens // (2048 + 256))
    assert (kv_tokens, b) == (448_288, 194)
    assert r.capacities["decode"].value == pytest.approx(b / _decode(L70, 4, b, 2048 + 128) / 255, rel=1e-12)
    assert r.capacities["link"].value == pytest.approx(1 / (10e-6 + 2048 * L70["k"] / 50e9), rel=1e-12)


def test_25gbe_saturates_near_11_6_requests_per_second(example):
    r = _path(example, "chat/plain")
    assert round(r.capacities["link"].value, 1) == 11.6  # 3.125 GB/s / 268.4 MB
    assert r.capacities["link"].value == pytest.approx(1 / (20e-6 + 268_435_456 / 3.125e9), rel=1e-12)


def test_colocated_capacity_is_the_harmonic_form(disagg):
    r, d = _path(disagg, "coloc/both"), _path(disagg, "disagg/ndr")
    per = 1 / (1 / d.capacities["prefill"].value + 1 / d.capacities["decode"].value)
    assert r.capacities["colocated"].value == pytest.approx(2 * per, rel=1e-12)


# ---- the hand-off: a module streams with the transfer (issue 28: 48.3 ms against 43.0 ms) --------------


def test_fp8_in_a_streaming_module_costs_what_fp8_on_the_gpu_does(example):
    plain, gpu, nic = (_path(example, f"chat/{n}") for n in ("plain", "fp8_gpu", "fp8_nic"))
    kv = 2048 * L8["k"]
    assert plain.value("handoff_kv") == kv == 268_435_456
    assert nic.value("handoff_bytes") == gpu.value("handoff_bytes") == kv / 2
    wire, module = kv / 2 / 3.125e9, kv / 50e9
    assert nic.value("handoff") == pytest.approx(20e-6 + 1e-6 + max(module, wire), rel=1e-12)
    series = 20e-6 + 1e-6 + module + wire  # the module charged before the transfer
    assert round(series * 1e3, 1) == 48.3 and round(nic.value("handoff") * 1e3, 1) == 43.0
    # on the GPU: a pass over the KV in HBM (read 268 MB, write 134 MB) before the same wire time
    gpu_pass = max(0.5 * kv / (PEAK * ETA), 1.5 * kv / (HBM * MU))
    assert gpu.value("transform") == pytest.approx(gpu_pass, rel=1e-12)
    assert round((gpu.value("transform") + gpu.value("handoff")) * 1e3, 1) == 43.1


def test_fp4_sends_4_25_bits_a_value(disagg):
    r = _path(disagg, "disagg/e25_fp4_mod")
    assert r.value("handoff_bytes") == pytest.approx(2048 * L70["k"] * 4.25 / 16, rel=1e-15)


def test_layerwise_exposes_what_outlasts_the_prefill(disagg):
    r = _path(disagg, "disagg/ndr_layer")
    th, tp = r.value("handoff"), r.value("prefill")
    assert r.value("handoff_exposed") == pytest.approx(max(th / 80, th - tp * 79 / 80), rel=1e-12)
    assert r.value("handoff_exposed") == pytest.approx(th / 80, rel=1e-12)  # NDR: the last layer's share


# ---- queues, TPOT, TTFT and goodput at 4 req/s ------------------------------------------------------


def test_queue_waits_are_pollaczek_khinchine(disagg):
    r = _path(disagg, "disagg/e25")
    lam, cv = 4.0, 0.5
    s_link = 20e-6 + 2048 * L70["k"] / 3.125e9
    wire = s_link - 20e-6
    rho = lam * s_link
    es2 = s_link**2 + (cv * wire) ** 2
    assert r.value("link_utilisation") == pytest.approx(rho, rel=1e-12)
    assert r.value("link_wait") == pytest.approx(lam * es2 / (2 * (1 - rho)), rel=1e-12)
    tp = _prefill(L70, 4, 2048)
    assert r.value("prefill_wait") == pytest.approx(lam * tp * tp * (1 + cv * cv) / (2 * (1 - lam * tp)), rel=1e-12)


def test_tpot_by_littles_law(disagg):
    r = _path(disagg, "disagg/ndr")
    c = 2048 + 128
    t0 = L70["M"] * 2 / (4 * HBM * MU) + OVERHEAD
    k1 = (L70["d"] * 2 + (c + 1) * L70["k"]) / (4 * HBM * MU)
    tpot = (t0 + k1) / (1 - 4 * 255 * k1)  # a sequence sees itself and the mean batch of the others
    assert r.value("decode_batch") == pytest.approx(4 * 255 * tpot, rel=1e-12)
    assert r.value("tpot") == pytest.approx(tpot, rel=1e-12)
    # the sister's simulation at 4 req/s (results.md section 4): a mean decode batch of 13.9; inter-token
    # latency p50 14.4 ms and TPOT p99 15.2 ms bracket the mean
    assert 13 < r.value("decode_batch") < 16 and 14.4 <= r.value("tpot") * 1e3 <= 15.2


def test_ttft_and_its_percentile(disagg):
    r = _path(disagg, "disagg/e25")
    v = r.value
    assert v("ttft") == pytest.approx(v("prefill_wait") + v("prefill") + v("link_wait") + v("handoff_exposed"), rel=1e-12)
    q = lambda w, rho: w / rho * math.log(max(1.0, rho / 0.01))  # noqa: E731
    tail = q(v("prefill_wait"), v("prefill_utilisation")) + q(v("link_wait"), v("link_utilisation"))
    assert v("ttft_p") == pytest.approx(v("prefill") + v("handoff_exposed") + tail, rel=1e-12)
    assert v("e2e") == pytest.approx(v("ttft") + 255 * v("tpot"), rel=1e-12)


def test_goodput_is_where_the_ttft_target_is_met(disagg):
    r = _path(disagg, "disagg/ndr")
    assert r.goodput_binding == "ttft" and 0 < r.goodput.value < r.sustainable.value
    at = load(DISAGG, overrides={"rate": f"{r.goodput.value!r} req/s"}).solve()
    assert _path(at, "disagg/ndr").value("ttft_p") == pytest.approx(1.0, rel=1e-9)


def test_over_capacity_is_said_not_a_negative_wait():
    sol = load(DISAGG, overrides={"rate": "6 req/s"}).solve()
    r = _path(sol, "disagg/e25")  # 25 GbE plain sustains 4.66 req/s
    assert r.over_capacity and math.isinf(r.value("ttft"))
    assert r.value("throughput") == pytest.approx(r.sustainable.value)


# ---- outputs ---------------------------------------------------------------------------------------


def test_json_csv_and_markdown_carry_the_paths(disagg):
    data = disagg.to_json()
    paths = [p["path"] for p in data["serving"]]
    assert paths[0] == "disagg/ndr" and "coloc/both" in paths
    ndr = data["serving"][0]
    assert ndr["capacities"]["link"]["unit"] == "1/s" and ndr["binding"] == "prefill"
    assert ndr["terms"]["tpot"]["closed_form"] == "approximation" and ndr["terms"]["prefill"]["closed_form"] == "exact"
    json.dumps(data, sort_keys=True)  # every value serialises
    csv_text = serving_csv(disagg)
    assert csv_text.splitlines()[0].startswith("path,workload,entry,handoff,decode,prefill_s,")
    assert len(csv_text.splitlines()) == 1 + len(disagg.serving)
    md = render_markdown(disagg)
    assert "## Serving: capacity and goodput" in md and "| disagg: prefill -> IB NDR, plain -> decode |" in md


def test_outputs_are_deterministic():
    a, b = load(DISAGG).solve(), load(DISAGG).solve()
    assert render_markdown(a) == render_markdown(b)
    assert json.dumps(a.to_json(), sort_keys=True) == json.dumps(b.to_json(), sort_keys=True)


def test_a_training_spec_has_no_serving_key():
    sol = load(ROOT / "examples" / "fig_kv_handoff.ct").solve()
    assert sol.serving == () and "serving" not in sol.to_json()


# ---- presets: hand counts from the released configs -----------------------------------------------


@pytest.mark.parametrize(
    "name, params",
    [
        ("mistral_7b", 32 * (2 * 4096**2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 32000 * 4096),
        ("yi_34b", 60 * (2 * 7168**2 + 2 * 7168 * 1024 + 3 * 7168 * 20480) + 2 * 64000 * 7168),
        ("opt_13b", 40 * (4 * 5120**2 + 2 * 5120 * 20480) + 50272 * 5120),
        ("llama3_2_1b", 16 * (2 * 2048**2 + 2 * 2048 * 512 + 3 * 2048 * 8192) + 128256 * 2048),
    ],
)
def test_serving_model_presets(tmp_path, name, params):
    spec = tmp_path / "m.ct"
    spec.write_text(f"import std.models\nmodel x : {name} {{}}\n", encoding="utf-8")
    model = load(spec).spec.models["x"]
    assert evaluate(model.params, {}) == params
    assert {"mistral_7b": 7_241_465_856, "yi_34b": 34_388_049_920, "opt_13b": 12_840_304_640, "llama3_2_1b": 1_235_746_816}[name] == params


def test_serving_link_presets(tmp_path):
    spec = tmp_path / "l.ct"
    spec.write_text("import std.links\nlink a : pcie4 {}\nlink b : cpo_optical {}\n", encoding="utf-8")
    links = load(spec).spec.links
    assert evaluate(links["a"].bandwidth, {}) == 32e9 and evaluate(links["b"].bandwidth, {}) == 200e9
    assert evaluate(links["b"].latency, {}) == pytest.approx(5e-6) and evaluate(links["b"].energy_per_byte, {}) == pytest.approx(24e-12)


def test_one_spec_holds_training_and_serving_on_the_same_presets(tmp_path):
    spec = tmp_path / "both.ct"
    spec.write_text(
        "import std.devices\nimport std.links\nimport std.models\n"
        "model m8b : llama3_8b { tokens = 4096 }\n"
        "device accel : h100 { efficiency = 0.4 }\n"
        "switch plain {}\n"
        "dc pair { workers = 2; device = accel; link = nvlink4; switch = plain }\n"
        "scheme update { payload = dense; collective = allgather }\n"
        "instance node { device = accel; model = m8b }\n"
        "pool colo { role = colocated; instance = node }\n"
        "workload chat { pool = colo; rate = 1 req/s; prompt = 1024 tokens; output = 128 tokens }\n",
        encoding="utf-8",
    )
    sol = load(spec).solve()
    assert list(sol.schemes) == ["update"] and [r.name for r in sol.serving] == ["chat/colo"]
    # the instance reads the device the dc trains on: 0.4 of 989 TFLOP/s, all of 3.35 TB/s
    flops = 2 * L8["M"] * 1024 + 2 * 32 * 4096 * 1024 * 1025
    nbytes = L8["M"] * 2 + 1024 * (4096 * 2 + L8["k"])
    assert sol.serving[0].value("prefill") == pytest.approx(max(flops / (PEAK * 0.4), nbytes / HBM), rel=1e-12)
    md = render_markdown(sol)
    assert "## Step time at the defaults" in md and "## Serving: capacity and goodput" in md


def test_moe_steps_multiply_by_active_weights_and_read_the_experts_touched(tmp_path):
    spec = tmp_path / "moe.ct"
    spec.write_text(
        "import std.devices\nimport std.links\nimport std.models\nmodel mx : mixtral_8x7b {}\n"
        "device accel : h100 { efficiency = 0.55 }\n"
        "instance a { device = accel; model = mx; tp = 4; ep = 4; scaleup_link = nvlink4; mem_efficiency = 0.8 }\n",
        encoding="utf-8",
    )
    forms, env = _forms(spec, "a")
    # Mixtral 8x7B (arXiv:2401.04088): 32 layers, d 4,096, 8 KV heads, 8 experts of 14,336, top 2, V 32,000, norms counted
    d, L, V, E, k, fe = 4096, 32, 32000, 8, 2, 14336
    attn, expert, router = 2 * d * d + 2 * d * 1024, 3 * d * fe, d * E
    P = L * (attn + E * expert + router + 2 * d) + d + 2 * V * d
    assert P == 46_702_792_704  # the preset's own comment: the released checkpoint's count
    fixed = P - V * d - L * E * expert
    b, c = 4, 1000
    touched = E * (1 - (1 - k / E) ** b)
    nbytes = 2 * (fixed + L * touched * expert) + b * d * 2 + b * (c + 1) * (2 * L * 8 * 128 * 2)
    assert value(forms.decode_bytes(_n(b), _n(c)).e, env) == pytest.approx(nbytes, rel=1e-12)
    flops = 2 * (P - V * d - L * (E - k) * expert) * b + 4 * L * d * b * (c + 1)
    assert value(forms.decode_flops(_n(b), _n(c)).e, env) == pytest.approx(flops, rel=1e-12)
    # on NVLink 4 (450 GB/s, 5 us): two ring all-reduces a layer over tp 4, and an all-to-all out and back over ep 4
    act = b * d * 2
    comm = 2 * L * (2 * 3 / 4 * act / 450e9 + 2 * 3 * 5e-6) + 2 * L * (k * act * 3 / 4 / 450e9 + 3 * 5e-6)
    assert value(forms.comm(_n(b)).e, env) == pytest.approx(comm, rel=1e-12)


def test_energy_per_token_by_hand(disagg):
    r = _path(disagg, "disagg/ndr")
    # H100 preset: 100 W static, 1 pJ/FLOP, 60 pJ/B (the sister's power model); IB NDR 15 pJ/bit
    s, o, lam = 2048, 256, 4.0
    pre = (2 * L70["M"] * s + 2 * 80 * 8192 * s * (s + 1)) * 1e-12 + (L70["M"] * 2 + s * (8192 * 2 + L70["k"])) * 60e-12
    hand = s * L70["k"] * 15e-12 * 8  # 15 pJ a bit, 8 bits a byte
    b = r.value("decode_batch") + 1
    c = s + o / 2
    step = (2 * L70["M"] * b + 4 * 80 * 8192 * b * (c + 1)) * 1e-12 + (L70["M"] * 2 + b * 8192 * 2 + b * (c + 1) * L70["k"]) * 60e-12
    static = 100 * 8 / (lam * o)
    assert r.value("energy_per_token") == pytest.approx((pre + hand) / o + step / b * (o - 1) / o + static, rel=1e-12)
    # the sister's simulation at 4 req/s (results.md section 3): 2.77 J/token disaggregated, 3.09 colocated
    assert abs(r.value("energy_per_token") / 2.77 - 1) < 0.05
    assert abs(_path(disagg, "coloc/both").value("energy_per_token") / 3.09 - 1) < 0.07
