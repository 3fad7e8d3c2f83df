"""The pluggable's stages and break point, and DiLoCo's sync period, by hand.

Module (domain.md section 6): port 25 GB/s in a 50 GB/s host port, optics 14 GB/s,
FPGA 40 GB/s, a DCT charged at 10 FLOP/B against the budget F: the compute stage
runs at F / 10. It binds while F / 10 < 14 GB/s, i.e. below F = 140 GFLOP/s,
where the optics takes over. The dense stream D = 2 GB passes the slowest stage.
"""

from __future__ import annotations

import pytest

from solvekit import C, solve_text

SPEC = """
param budget = 50 GFLOP/s in 10 GFLOP/s .. 400 GFLOP/s
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device d {{ peak = 100 TFLOP/s; efficiency = 1 }}
link fast {{ bandwidth = 100 GB/s; latency = 0 us }}
pluggable p {{
  port {{ rate = 25 GB/s; host = 50 GB/s }}
  optics {{ rate = 14 GB/s{performs} }}
  compute {{ budget = budget }}
  fpga {{ rate = 40 GB/s }}
  latency = 1 us
  ops = [dct, mac, add]
}}
switch s {{}}
dc a {{ workers = 2; device = d; link = fast; switch = s; pluggable = p }}
scheme band {{ payload = band; fraction = 1/16; cost = 10 FLOP/B; at = p; collective = allgather; steps = 10 }}
"""


def module(tmp_path, budget: str, performs: str = ""):
    sol = solve_text(tmp_path, SPEC.format(performs=performs), overrides={"budget": budget})
    return sol.schemes["band"]


def test_compute_binds_below_the_break_point(tmp_path):
    r = module(tmp_path, "50 GFLOP/s")
    m = r.module
    assert m.binding == "compute" and m.runner_up == "optics"
    rates = {s.name: s.rate.value for s in m.stages}
    assert rates == pytest.approx({"port": 25e9, "optics": 14e9, "compute": 5e9, "fpga": 40e9})
    # D / 5 GB/s + 1 us
    assert m.time.value == pytest.approx(2e9 / 5e9 + 1e-6, rel=1e-12)
    assert r.components[C("transform")].value == pytest.approx(0.4 + 1e-6, rel=1e-12)
    (brk,) = m.breaks
    assert brk.param == "budget" and brk.then == "optics"
    assert brk.value == pytest.approx(140e9, rel=1e-12)


def test_optics_binds_above_the_break_point(tmp_path):
    m = module(tmp_path, "200 GFLOP/s").module
    assert m.binding == "optics"
    assert m.time.value == pytest.approx(2e9 / 14e9 + 1e-6, rel=1e-12)
    # the budget no longer binds: no param moves the optics
    assert m.breaks == ()


def test_budget_per_byte_is_budget_over_line_rate(tmp_path):
    m = module(tmp_path, "50 GFLOP/s").module
    assert m.budget_per_byte.value == pytest.approx(50e9 / 25e9)


def test_a_dct_done_by_the_optics_costs_the_budget_nothing(tmp_path):
    m = module(tmp_path, "10 GFLOP/s", performs="; performs = [dct]").module
    assert m.charged_cost == 0
    assert "compute" not in {s.name for s in m.stages}
    assert m.binding == "optics"


def test_the_port_caps_everything_the_worker_sends(tmp_path):
    r = module(tmp_path, "50 GFLOP/s")
    (phase,) = r.phases
    # the payload c = D / 16 = 125 MB leaves through the 25 GB/s port: 5 ms; the module's 1 us
    # latency is counted once, in its own time (counted = once, the default), not at its ports
    assert phase.time.value == pytest.approx(0.125e9 / 25e9, rel=1e-12)


DILOCO = """
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link fast { bandwidth = 10 GB/s; counted = hop; latency = 1 us }
switch s {}
dc a { workers = 2; device = d; link = fast; switch = s }
scheme every { payload = dense; collective = ring_allreduce; steps = 1000 }
scheme diloco { payload = dense; collective = ring_allreduce; period = 100; steps = 1200 }
"""


def test_diloco_divides_the_sync_by_h(tmp_path):
    sol = solve_text(tmp_path, DILOCO)
    sync = 2 * (0.1 + 2e-6)  # ring of 2: 2 steps of 1 GB at 10 GB/s
    compute = 6e9 * 1000 / 100e12
    every, diloco = sol.schemes["every"], sol.schemes["diloco"]
    assert every.step_time.value == pytest.approx(compute + sync, rel=1e-12)
    assert diloco.step_time.value == pytest.approx(compute + sync / 100, rel=1e-12)
    assert diloco.time_to_target.value == pytest.approx(1200 * (compute + sync / 100), rel=1e-12)
    # the bytes per sync do not change, only how often they are sent
    assert diloco.wire.value == every.wire.value


def test_energy_to_target_by_hand(tmp_path):
    text = DILOCO.replace(
        "device d { peak = 100 TFLOP/s; efficiency = 1 }",
        "device d { peak = 100 TFLOP/s; efficiency = 1; static_power = 100 W; energy_per_flop = 1 pJ/FLOP }",
    ).replace("latency = 1 us }", "latency = 1 us; energy_per_bit = 10 pJ/bit }")
    r = solve_text(tmp_path, text).schemes["every"]
    step = 6e9 * 1000 / 100e12 + 2 * (0.1 + 2e-6)
    static = 2 * 100 * step
    flops = 2 * 1e-12 * 6e9 * 1000
    # each of 4 directed edges carries 2 GB per sync: 2 GB x 8 bit x 10 pJ
    links = 4 * 2e9 * 8 * 10e-12
    assert r.energy_to_target.value == pytest.approx(1000 * (static + flops + links), rel=1e-12)
