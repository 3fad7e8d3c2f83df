"""The simulation's latency modes (`simulation { latency = propagate | hold }`), a scheme's fixed
overhead and a switch's rates in the simulation, against values worked out by hand below.

The background load in these tests is 1e-12: with S = 1 s its mean gap is 1e12 s, so no
background transfer arrives in a run of seconds (each test asserts it), and every wait is the
sync's own, which is deterministic.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from ctdsl.api import load
from ctdsl.language.enums import SimLatency
from ctdsl.simulate import engine
from ctdsl.simulate.plan import QueuePlan, build_plans
from ctdsl.simulate.runner import settings

US = 1e-6
REL = 1e-12

SPEC = """
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device d {{ peak = 100 TFLOP/s; efficiency = 1 }}
link fast {{ bandwidth = 10 GB/s; latency = 1 us }}
link slow {{ bandwidth = 1 GB/s; latency = 10 us; load = 1e-12; transfer = 1 GB }}
switch s {{ sum = true; ops = [dct, add] {switch} }}
dc a {{ workers = {workers}; device = d; link = fast; switch = s }}
dc b {{ workers = {workers}; device = d; link = fast; switch = s }}
wan a <-> b = slow
scheme x {{ {scheme} }}
{sim}
"""


def spec(tmp_path, scheme="payload = dense; collective = allgather; steps = 10", workers=1, switch="", sim=""):
    path = tmp_path / "spec.ct"
    path.write_text(textwrap.dedent(SPEC.format(scheme=scheme, workers=workers, switch=switch, sim=sim)), encoding="utf-8")
    return load(path).spec


def _queue(hold: bool):
    import simpy

    env = simpy.Environment()
    plan = QueuePlan(("u", "v"), "l", rho=1e-12, service=1.0, md1_wait=0.0, latency=0.5)
    lq = engine.LinkQueue(env, plan, np.random.default_rng(0), hold)
    return env, lq


@pytest.mark.parametrize("hold, second_wait", [(False, 2.0), (True, 2.0 + 0.5)])
def test_a_job_waits_for_the_one_holding_the_link(hold, second_wait):
    # two sync jobs of 2 s of bytes reach an idle link at t = 0. The first starts at once.
    # propagate: it holds the link for its bytes, 2 s, so the second waits 2 s.
    # hold: it holds the link for latency + bytes, 0.5 + 2 = 2.5 s, so the second waits 2.5 s.
    env, lq = _queue(hold)
    first = env.process(lq.sync_job(2.0))
    second = env.process(lq.sync_job(2.0))
    env.run(until=second)
    assert first.value == 0.0
    assert second.value == pytest.approx(second_wait, rel=REL)
    # and the link is busy until 2 x (2 + held): 4 s, or 5 s with hold
    assert env.now == pytest.approx(2 * (2.0 + (0.5 if hold else 0.0)), rel=REL)
    assert lq.starts == 0  # no background transfer arrived


def test_background_keeps_its_busy_fraction_under_hold():
    # hold: each background transfer takes S + latency = 1.5 s; arrivals come every
    # (S + latency) / rho on average, so the busy fraction stays rho
    _, lq = _queue(True)
    assert lq.service == 1.5
    assert lq.mean_gap == pytest.approx(1.5 / 1e-12, rel=REL)
    _, lq = _queue(False)
    assert (lq.service, lq.mean_gap) == (1.0, pytest.approx(1.0 / 1e-12, rel=REL))


@pytest.mark.parametrize("hold, busy", [(False, 2.0), (True, 2.0 + 10 * US)])
def test_wan_utilisation_by_mode(tmp_path, hold, busy):
    # Two dcs of one worker, a ring all-gather: one step, each worker sends D = 2 GB to the
    # other. Each WAN direction carries 2 GB at 1 GB/s = 2 s; route latency 1 + 10 + 1 us
    # (three segments, one per network). Compute 6e12 / 1e14 = 0.06 s. A round (H = 1):
    #   0.06 + 2 + 12e-6 = 2.060012 s, in both modes (no other job waits behind the sync).
    # Each WAN edge is busy 2 s per round (propagate) or 2 + 10e-6 s (hold: its latency too),
    # so its utilisation is busy / 2.060012.
    plan = build_plans(spec(tmp_path))["x"]
    r = engine.run(plan, 7, 0, steps=4, warmup=1, hold=hold)
    assert r.background == 0
    assert r.step == pytest.approx(0.06 + 2 + 12 * US, rel=REL)
    assert len(r.links) == 2
    for link in r.links:
        assert link.utilisation == pytest.approx(busy / (0.06 + 2 + 12 * US), rel=REL)
        assert link.sync_wait == 0.0


def test_latency_mode_from_the_simulation_block(tmp_path):
    assert settings(spec(tmp_path)).latency is SimLatency.PROPAGATE
    assert settings(spec(tmp_path, sim="simulation run { latency = hold }")).latency is SimLatency.HOLD


def test_overhead_in_the_simulation(tmp_path):
    # period H = 2 and overhead 3 ms per sync: step = 0.06 + (2 + 12e-6 + 0.003) / 2
    #   = 0.06 + 1.001506 = 1.061506 s, simulated and closed form alike, in both modes
    plan = build_plans(spec(tmp_path, "payload = dense; collective = allgather; period = 2; overhead = 3 ms; steps = 10"))["x"]
    assert plan.overhead == pytest.approx(0.003, rel=REL)
    assert plan.step == pytest.approx(0.06 + (2 + 12 * US + 0.003) / 2, rel=REL)
    for hold in (False, True):
        r = engine.run(plan, 7, 0, steps=4, warmup=2, hold=hold)
        assert r.step == pytest.approx(0.06 + (2 + 12 * US + 0.003) / 2, rel=REL)


@pytest.mark.parametrize(
    "rates, seconds",
    [
        ("; total_rate = 8 GB/s", 2 * 2 / 8),  # two streams of 2 GB sharing 8 GB/s: 0.5 s
        ("; stream_rate = 8 GB/s", 2 / 8),  # each stream at 8 GB/s, side by side: 0.25 s
    ],
)
def test_switch_rate_in_the_simulation(tmp_path, rates, seconds):
    # two workers per dc: each dc's switch takes in two dense streams of D = 2 GB
    sp = spec(tmp_path, "payload = band; fraction = 1/16; at = s; collective = innet_sum; steps = 10", workers=2, switch=rates)
    plan = build_plans(sp)["x"]
    assert plan.transform == pytest.approx(seconds, rel=REL)
    r = engine.run(plan, 7, 0, steps=2, warmup=1)
    assert r.step == pytest.approx(plan.free_step, rel=REL)
    assert r.step - plan.compute - sum(ph.time for ph in plan.phases) == pytest.approx(seconds, rel=1e-9)
