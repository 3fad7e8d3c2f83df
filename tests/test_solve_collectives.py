"""Each collective on a 2-worker and a 2-DC x 2-worker topology, against hand-derived times.

The numbers below are worked out by hand from domain.md section 4 and the routing
rules in docs/cost-model.md, not by the code:

  D = v P = 2 B x 1e9 = 2 GB. Intra-DC link 10 GB/s, 1 us; WAN 1 GB/s, 10 us.
  A worker reaches another worker of its DC through the switch: two link
  crossings, 2 us (the links are `counted = hop`: every edge pays its latency;
  tests/test_cost_conventions.py has the per-transfer default). Across the WAN: worker -> switch -> switch -> worker, 12 us.
  Compute: 6 P x 1000 tokens / 100 TFLOP/s = 0.06 s.
"""

from __future__ import annotations

import pytest

from solvekit import C, solve_text

US = 1e-6

HEAD = """
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link fast { bandwidth = 10 GB/s; latency = 1 us; counted = hop }
link slow { bandwidth = 1 GB/s; latency = 10 us; counted = hop }
switch s { sum = true; loopback = true }
"""
ONE_DC = HEAD + "dc a { workers = 2; device = d; link = fast; switch = s }\n"
TWO_DC = HEAD + (
    "dc a { workers = 2; device = d; link = fast; switch = s }\n"
    "dc b { workers = 2; device = d; link = fast; switch = s }\n"
    "wan a <-> b = slow\n"
)


def sync_time(tmp_path, topology: str, collective: str, extra: str = "") -> tuple[float, object]:
    text = topology + f"scheme x {{ payload = dense; collective = {collective}; steps = 10 {extra} }}\n"
    result = solve_text(tmp_path, text).schemes["x"]
    return sum(p.time.value for p in result.phases), result


# expected sync time per sync, in seconds
TWO_WORKERS = {
    # 2(N-1) = 2 steps of D/2 = 1 GB at 10 GB/s, 2 us each
    "ring_allreduce": 2 * (0.1 + 2 * US),
    # reduce-scatter 1 step of D/2, no WAN phase, all-gather 1 step of D/2
    "hier_allreduce": 2 * (0.1 + 2 * US),
    # N-1 = 1 step of D = 2 GB
    "allgather": 0.2 + 2 * US,
    # gather in the DC: 1 step of D; nothing to exchange or distribute with one DC
    "hier_allgather": 0.2 + 2 * US,
    # up: D to the switch (1 crossing); down: D back
    "innet_sum": (0.2 + US) + (0.2 + US),
}

TWO_BY_TWO = {
    # ring of 4: 6 steps of D/4 = 0.5 GB; the WAN hop is slowest: 0.5 s + 12 us
    "ring_allreduce": 6 * (0.5 + 12 * US),
    # reduce-scatter (1 step, 1 GB, 0.1 s + 2 us); shards across: 2 steps, the WAN
    # carries both workers' 0.5 GB = 1 GB -> 1 s + 12 us; all-gather as the first
    "hier_allreduce": (0.1 + 2 * US) + 2 * (1.0 + 12 * US) + (0.1 + 2 * US),
    # ring of 4: 3 steps of D = 2 GB; WAN hop 2 s + 12 us
    "allgather": 3 * (2.0 + 12 * US),
    # gather (1 step of 2 GB: 0.2 s + 2 us); exchange (1 step, WAN carries 2 x 2 GB:
    # 4 s + 12 us); distribute (1 step of (N_dc - 1) D = 2 GB: 0.2 s + 2 us)
    "hier_allgather": (0.2 + 2 * US) + (4.0 + 12 * US) + (0.2 + 2 * US),
    # up 2 GB (0.2 s + 1 us); switches all-reduce: 2 steps of D/2 = 1 GB over the
    # WAN (1 s + 10 us); down 2 GB (0.2 s + 1 us)
    "innet_sum": (0.2 + US) + 2 * (1.0 + 10 * US) + (0.2 + US),
}


@pytest.mark.parametrize("collective", sorted(TWO_WORKERS))
def test_two_workers(tmp_path, collective):
    got, _ = sync_time(tmp_path, ONE_DC, collective)
    assert got == pytest.approx(TWO_WORKERS[collective], rel=1e-12)


@pytest.mark.parametrize("collective", sorted(TWO_BY_TWO))
def test_two_dcs_of_two_workers(tmp_path, collective):
    got, _ = sync_time(tmp_path, TWO_DC, collective)
    assert got == pytest.approx(TWO_BY_TWO[collective], rel=1e-12)


def test_loopback_doubles_what_comes_down(tmp_path):
    got, _ = sync_time(tmp_path, TWO_DC, "innet_sum", "; loopback = true")
    # down carries 2 D = 4 GB at 10 GB/s
    assert got == pytest.approx((0.2 + US) + 2 * (1.0 + 10 * US) + (0.4 + US), rel=1e-12)


def test_wire_bytes_per_worker(tmp_path):
    # ring all-reduce of D over 4 workers: 2 (N-1)/N D = 3 GB
    _, r = sync_time(tmp_path, TWO_DC, "ring_allreduce")
    assert r.wire.value == pytest.approx(3e9, rel=1e-12)
    # hierarchical all-reduce: D/2 + 2 x D/4 + D/2 = 2 GB; the WAN carries D each way
    _, r = sync_time(tmp_path, TWO_DC, "hier_allreduce")
    assert r.wire.value == pytest.approx(3e9, rel=1e-12)
    assert r.wan.value == pytest.approx(2e9, rel=1e-12)
    # hierarchical all-gather: (N - 1) D = 6 GB per worker; the WAN carries L D = 4 GB
    _, r = sync_time(tmp_path, TWO_DC, "hier_allgather")
    assert r.wire.value == pytest.approx(6e9, rel=1e-12)
    assert r.wan.value == pytest.approx(4e9, rel=1e-12)


def test_step_time_adds_compute(tmp_path):
    got, r = sync_time(tmp_path, ONE_DC, "allgather")
    assert r.components[C("compute")].value == pytest.approx(0.06, rel=1e-12)
    assert r.step_time.value == pytest.approx(0.06 + got, rel=1e-12)
    assert r.time_to_target.value == pytest.approx(10 * (0.06 + got), rel=1e-12)


def test_overlap_takes_the_larger_side(tmp_path):
    got, r = sync_time(tmp_path, ONE_DC, "allgather", "; overlap = true")
    assert r.step_time.value == pytest.approx(max(0.06, got), rel=1e-12)
    assert r.binding != C("compute")


def test_asymmetric_wan_takes_the_slow_direction(tmp_path):
    text = HEAD + (
        "link slower { bandwidth = 0.5 GB/s; latency = 10 us }\n"
        "dc a { workers = 2; device = d; link = fast; switch = s }\n"
        "dc b { workers = 2; device = d; link = fast; switch = s }\n"
        "wan a -> b = slow\nwan b -> a = slower\n"
        "scheme x { payload = dense; collective = hier_allreduce; steps = 10 }\n"
    )
    r = solve_text(tmp_path, text).schemes["x"]
    across = [p for p in r.phases if "across" in p.name][0]
    # each step: 1 GB over the 0.5 GB/s direction = 2 s
    assert across.time.value == pytest.approx(2 * (2.0 + 12 * US), rel=1e-12)


def test_three_dcs_route_over_the_graph(tmp_path):
    # a ring a -> b -> c -> a of one-way links: every transfer from c to a or a to c
    # must follow the links that exist
    text = HEAD + (
        "dc a { workers = 1; device = d; link = fast; switch = s }\n"
        "dc b { workers = 1; device = d; link = fast; switch = s }\n"
        "dc c { workers = 1; device = d; link = fast; switch = s }\n"
        "wan a -> b = slow\nwan b -> c = slow\nwan c -> a = slow\n"
        "scheme x { payload = dense; collective = allgather; steps = 10 }\n"
    )
    r = solve_text(tmp_path, text).schemes["x"]
    (phase,) = r.phases
    # ring a -> b -> c -> a matches the links: 2 steps of D over 1 GB/s, 12 us each
    assert phase.time.value == pytest.approx(2 * (2.0 + 12 * US), rel=1e-12)
    kinds = {(l.source, l.target) for l in phase.links if l.kind == "wan"}
    assert kinds == {("a.s", "b.s"), ("b.s", "c.s"), ("c.s", "a.s")}


def test_overlap_sets_compute_and_stragglers_against_sync(tmp_path):
    # exponential jitter of 100 ms on 2 workers: the slowest adds 0.1 x H_2 = 0.15 s to
    # compute (0.06 s); that side, 0.21 s, beats the all-gather's 0.2 s + 2 us
    text = ONE_DC.replace("switch = s }", "switch = s; jitter = 100 ms }") + (
        "scheme x { payload = dense; collective = allgather; overlap = true; steps = 10 }\n"
    )
    r = solve_text(tmp_path, text).schemes["x"]
    assert r.components[C("stragglers")].value == pytest.approx(0.15, rel=1e-12)
    assert r.step_time.value == pytest.approx(0.21, rel=1e-12)
    assert r.binding == C("stragglers")
    # the sweep names the same binding component
    from ctdsl.numeric import CompiledForms, evaluate

    sol = solve_text(tmp_path, text)
    forms = CompiledForms(sol)
    assert evaluate(forms, {}).binding_names("x", forms)[0] == C("stragglers")
