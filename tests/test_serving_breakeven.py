"""`breakeven h1 vs h2 over p on ttft|ttft_p|e2e|e2e_p|energy`: two hand-offs compared on one workload's paths.

The expected crossing is derived by hand: with prompts of one length (prompt_cv = 0)
a hand-off's service is deterministic, so the link's M/G/1 wait, its tail and the
TTFT are each increasing functions of the service alone (the prefill queue and the
decode are the same on both paths). Plain over a link of bandwidth b takes
lat + K / b; FP8 in a module of rate r (its compute budget over the transform's
cost) takes lat + t_mod + max(K / r, K / (2 b)). They tie where K / b = K / r + t_mod:
b* = K / (K / r + t_mod), with K the KV cache of one prompt,
2 x 80 layers x 8 KV heads x 128 x 2 B x 2,048 tokens = 671,088,640 B (Llama-3-70B).
"""

from __future__ import annotations

import textwrap

import pytest

import ctdsl

K = 2 * 80 * 8 * 128 * 2 * 2048  # bytes of the KV cache of a 2,048-token prompt
RATE_MOD = 10e9  # 10 GFLOP/s budget / 1 FLOP/B
T_MOD = 1e-6  # the module's latency
B_STAR = K / (K / RATE_MOD + T_MOD)  # 9.99985 GB/s

SPEC = """\
import std.devices
import std.links
import std.models
param link_bw = 3.125 GB/s in 1 GB/s .. 50 GB/s log 24
param rate = 4 req/s in 0.5 req/s .. 12 req/s log 24
model llama70b : llama3_70b {}
device accel : h100 { efficiency = 0.55 }
pluggable transit {
  port { rate = 200 GB/s }
  compute { budget = 10 GFLOP/s }
  latency = 1 us
  ops = [mac, add]
}
instance node { device = accel; model = llama70b; tp = 4; mem_efficiency = 0.8; overhead = 0.5 ms; kv_memory = 0.9; prefill_tokens = 8192 }
pool prefill { role = prefill; instance = node }
pool decode { role = decode; instance = node }
slo chat { ttft = 1 s; tpot = 25 ms; percentile = 0.99 }
workload w { pool = prefill; rate = rate; prompt = 2048 tokens; output = 256 tokens; prompt_cv = 0; slo = chat }
link e25g : eth25g { bandwidth = link_bw }
handoff plain { from = prefill; to = decode; link = e25g }
handoff fp8_mod { from = prefill; to = decode; link = e25g; payload = fp8; cost = 1 FLOP/B; at = transit }
handoff fp8_gpu { from = prefill; to = decode; link = e25g; payload = fp8 }
"""


def _load(tmp_path, extra: str, name: str = "spec.ct"):
    path = tmp_path / name
    path.write_text(SPEC + textwrap.dedent(extra), encoding="utf-8")
    return ctdsl.load(path)


@pytest.fixture(scope="module")
def sol(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sbe")
    return _load(
        tmp,
        """\
        breakeven plain vs fp8_mod over link_bw
        breakeven plain vs fp8_mod over link_bw on ttft_p
        breakeven plain vs fp8_mod over link_bw on e2e_p
        breakeven plain vs fp8_gpu over link_bw on ttft_p
        """,
    ).solve()


def test_ttft_crossing_is_the_hand_derived_bandwidth(sol):
    b = sol.breakevens[0]
    assert (b.x, b.y, b.over, b.on, b.workload) == ("plain", "fp8_mod", "link_bw", "ttft", "w")
    [root] = b.roots
    assert root.value == pytest.approx(B_STAR, rel=1e-9)
    # below b*, the module's 10 GB/s is faster than the link: FP8 in transit wins
    assert (root.below, root.above) == ("fp8_mod", "plain")


def test_percentile_and_end_to_end_cross_at_the_same_bandwidth(sol):
    for b in sol.breakevens[1:3]:
        [root] = b.roots
        assert root.value == pytest.approx(B_STAR, rel=1e-9)
        assert (root.below, root.above) == ("fp8_mod", "plain")


def test_never_in_range_says_where_the_queues_settle(sol):
    # FP8 on the GPU costs a ~0.1 ms roofline and halves the wire: it wins below K / 0.1 ms, far above 50 GB/s;
    # plain saturates the link below 4 req/s x K = 2.68 GB/s, so the range is narrowed to where both settle
    b = sol.breakevens[3]
    assert not b.roots and b.result.faster_at_lo == b.result.faster_at_hi == "fp8_gpu"
    assert b.result.lo == pytest.approx(4 * K, rel=1e-3)  # rho = rate x K / b < 1 (latency is 1 us)
    assert "settle only for link_bw from" in b.describe()


def test_json_and_table_carry_the_workload_and_measure(sol):
    from ctdsl.report.jsonout import solution_json
    from ctdsl.report.tables import render_markdown

    data = solution_json(sol)
    row = data["breakevens"][1]
    assert row["on"] == "ttft_p" and row["workload"] == "w"
    assert row["roots"][0]["value"] == pytest.approx(B_STAR, rel=1e-9)
    assert "plain vs fp8_mod on ttft_p" in render_markdown(sol)
