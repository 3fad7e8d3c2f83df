"""`ctdsl sweep` (and `Study.sweep`) on a serving spec: each path's sustainable rate, TTFT p99,
TPOT, end-to-end p99 and energy per token over the grid, the same numbers solve gives at each
point (an independent path: solve evaluates the forms at one point with its own evaluator, the
sweep compiles them to numpy), inf where the path is over capacity.
"""

from __future__ import annotations

import math
import numpy as np
import pytest

from ctdsl.api import load

SPEC = """
import std.devices
import std.links
import std.models
param rate = 4 req/s in 1 req/s .. 12 req/s lin 3
model m : llama3_8b {}
device accel : h100 { efficiency = 0.55 }
instance node { device = accel; model = m; mem_efficiency = 0.8; overhead = 0.5 ms }
pool prefill { role = prefill; instance = node }
pool decode { role = decode; instance = node }
pool both { role = colocated; instance = node }
slo s { ttft = 1 s; tpot = 25 ms }
workload w { pool = prefill; rate = rate; prompt = 2048 tokens; output = 128 tokens; prompt_cv = 0.5; slo = s }
workload c : w { pool = both }
handoff ndr { from = prefill; to = decode; link = ib_ndr }
handoff e25 { from = prefill; to = decode; link = eth25g }
"""


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("svs") / "sweep.ct"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def swept(spec):
    return load(spec).sweep({"rate": ("2 req/s", "12 req/s", 3)})


def test_sweep_carries_each_paths_terms_as_solve_gives_them(spec, swept):
    rates = swept["rate_1_per_s"]
    assert list(rates) == [2.0, 7.0, 12.0]
    at7 = {r.name: r for r in load(spec, {"rate": "7 req/s"}).solve().serving}
    assert len(at7) == 3
    for name, r in at7.items():
        assert swept[f"{name}.sustainable_per_s"][1] == pytest.approx(r.sustainable.value, rel=1e-12)
        for key, col in (("ttft_p", "ttft_p_s"), ("tpot", "tpot_s"), ("e2e_p", "e2e_p_s"), ("energy_per_token", "energy_per_token_J")):
            assert swept[f"{name}.{col}"][1] == pytest.approx(r.value(key), rel=1e-9), (name, key)


def test_over_capacity_is_inf_not_a_negative_wait(spec, swept):
    # 25 GbE carries Llama-3-8B's 268 MB at 11.64 req/s (inference.md): at 12 its queue never settles;
    # IB NDR's path is bound by the prefill, 16.9 req/s, and still settles
    assert swept["w/e25.sustainable_per_s"][2] == pytest.approx(1 / (20e-6 + 2048 * 131072 / 3.125e9), rel=1e-12)
    assert math.isinf(swept["w/e25.ttft_p_s"][2]) and math.isinf(swept["w/e25.tpot_s"][2])
    assert np.all(np.isfinite(swept["w/ndr.ttft_p_s"]))
    twelve = {r.name: r for r in load(spec, {"rate": "12 req/s"}).solve().serving}
    assert twelve["w/e25"].over_capacity and math.isinf(twelve["w/e25"].value("ttft_p"))
    assert swept["w/ndr.ttft_p_s"][2] == pytest.approx(twelve["w/ndr"].value("ttft_p"), rel=1e-9)
