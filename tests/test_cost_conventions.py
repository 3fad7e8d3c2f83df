"""How latency, energy per bit, a switch's and a module's latency, a scheme's fixed overhead
and a switch's rates are charged (docs/cost-model.md, "Latency and energy along a route"),
each against a time or energy worked out by hand below, not by the code.

The small topology of every test (numbers chosen to be exact in binary where it helps):

  P = 1e9 parameters at v = 2 B: D = v P = 2 GB (2e9 B).
  Device: 100 TFLOP/s at efficiency 1; 1000 tokens; 6 P FLOP per token:
    compute = 6 x 1e9 x 1000 / 1e14 = 0.06 s.
  link fast: 10 GB/s, 1 us, 1 pJ/bit (the link inside each dc).
  link slow: 1 GB/s, 10 us, 2 pJ/bit (the WAN).
  A transfer of B bytes costs 8 B bits x (pJ/bit) in energy per time the link charges it.
"""

from __future__ import annotations

import pytest

from ctdsl.api import check
from ctdsl import units as U
from ctdsl.report.explain import explain
from ctdsl.report.latex import scheme_align
from solvekit import C, solve_text

US = 1e-6
PJ = 1e-12
REL = 1e-12

HEAD = """
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device d {{ peak = 100 TFLOP/s; efficiency = 1 }}
link fast {{ bandwidth = 10 GB/s; latency = 1 us; energy_per_bit = 1 pJ/bit; counted = {counted} }}
link slow {{ bandwidth = 1 GB/s; latency = 10 us; energy_per_bit = 2 pJ/bit; counted = {counted} }}
switch s {{ sum = true; loopback = true; ops = [dct, add] {switch} }}
"""


def head(counted: str = "transfer", switch: str = "") -> str:
    return HEAD.format(counted=counted, switch=switch)


ONE_DC = "dc a {{ workers = 2; device = d; link = fast; switch = s {dc} }}\n"
TWO_DC = (
    "dc a {{ workers = 1; device = d; link = fast; switch = s }}\n"
    "dc b {{ workers = 1; device = d; link = fast; switch = s }}\n"
    "wan a <-> b = {wan}\n"
)


def solve(tmp_path, text: str, scheme: str = "payload = dense; collective = allgather; steps = 10"):
    sol = solve_text(tmp_path, text + f"scheme x {{ {scheme} }}\n")
    return sol, sol.schemes["x"]


# ---- latency and energy inside a dc: one transfer through the switch ----------------------------


@pytest.mark.parametrize(
    "counted, latency, edges_charged",
    [
        # w0 -> s -> w1: two edges of `fast`, one segment: one latency of 1 us per transfer
        ("transfer", 1 * US, 1),
        # per hop: both edges pay, 2 x 1 us
        ("hop", 2 * US, 2),
    ],
)
def test_in_dc_transfer_through_the_switch(tmp_path, counted, latency, edges_charged):
    # allgather over N = 2 workers: N - 1 = 1 step; each worker sends D = 2 GB to the other.
    # Each directed edge carries one transfer's 2 GB: 2e9 / 10e9 = 0.2 s.
    _, r = solve(tmp_path, head(counted) + ONE_DC.format(dc=""))
    (ph,) = r.phases
    assert ph.latency.value == pytest.approx(latency, rel=REL)
    assert ph.time.value == pytest.approx(0.2 + latency, rel=REL)
    # energy per step (H = 1): 2 transfers x 8 x 2e9 bits x 1 pJ/bit x the edges charged
    #   per transfer: 2 x 16e9 x 1e-12 x 1 = 0.032 J; per hop: 0.064 J
    assert r.energy_parts["links"].value == pytest.approx(2 * 8 * 2e9 * 1 * PJ * edges_charged, rel=REL)
    # the bytes on each edge are the same either way: 2 GB on each of the four directed edges
    assert sorted(l.nbytes.value for l in r.links) == [2e9] * 4


@pytest.mark.parametrize("counted", ["transfer", "hop"])
def test_across_dcs_one_latency_per_network(tmp_path, counted):
    # a.w0 -> a.s -> b.s -> b.w0: fast, slow, fast. Per transfer the route has three segments
    # (the switch between the dc link and the WAN ends one and starts the next): 1 + 10 + 1 =
    # 12 us; per hop the same, each segment being one edge. Time: the WAN edge carries the 2 GB
    # at 1 GB/s = 2 s (the slowest share): one step of 2 s + 12 us.
    _, r = solve(tmp_path, head(counted) + TWO_DC.format(wan="slow"))
    (ph,) = r.phases
    assert ph.time.value == pytest.approx(2.0 + 12 * US, rel=REL)
    # energy: 2 transfers x 16e9 bits x (1 + 2 + 1) pJ/bit = 0.128 J per step
    assert r.energy_parts["links"].value == pytest.approx(2 * 16e9 * (1 + 2 + 1) * PJ, rel=REL)


def test_one_link_inside_and_across_is_three_segments(tmp_path):
    # `fast` is the dc link and the WAN: a.w0 -> a.s (fast, in the dc) -> b.s (fast, WAN) ->
    # b.w0 (fast, in the dc). Segments are runs of one link in one role: three, so 3 x 1 us
    # even per transfer. Each edge carries 2 GB at 10 GB/s = 0.2 s.
    _, r = solve(tmp_path, head("transfer") + TWO_DC.format(wan="fast"))
    (ph,) = r.phases
    assert ph.time.value == pytest.approx(0.2 + 3 * US, rel=REL)


def test_mixed_counting(tmp_path):
    # fast per hop inside the dc and slow per transfer: a transfer inside a dc of two pays
    # fast twice (2 us), whatever slow says.
    text = head("hop").replace("latency = 10 us; energy_per_bit = 2 pJ/bit; counted = hop", "latency = 10 us; energy_per_bit = 2 pJ/bit; counted = transfer")
    _, r = solve(tmp_path, text + ONE_DC.format(dc=""))
    assert r.phases[0].time.value == pytest.approx(0.2 + 2 * US, rel=REL)


# ---- a switch's latency, a module's latency -----------------------------------------------------


def test_switch_latency_on_an_in_network_sum(tmp_path):
    # innet_sum in one dc of 2, switch latency 5 us, no loopback:
    #   up:   w -> s, 2 GB at 10 GB/s = 0.2 s, + fast 1 us + the sum at s 5 us = 0.200006 s
    #   (no all-reduce across dcs: 2 (N_dc - 1) = 0 steps)
    #   down: s -> w, 2 GB, 0.2 s + 1 us (leaving the switch does not pay it again)
    _, r = solve(tmp_path, head(switch="; latency = 5 us") + ONE_DC.format(dc=""), "payload = dense; collective = innet_sum; steps = 10")
    up, down = r.phases
    assert up.time.value == pytest.approx(0.2 + 1 * US + 5 * US, rel=REL)
    assert down.time.value == pytest.approx(0.2 + 1 * US, rel=REL)


def test_switch_latency_on_a_pass_through(tmp_path):
    # allgather w0 -> s -> w1: fast once (1 us) + the switch once (5 us) + 0.2 s
    _, r = solve(tmp_path, head(switch="; latency = 5 us") + ONE_DC.format(dc=""))
    assert r.phases[0].time.value == pytest.approx(0.2 + 6 * US, rel=REL)


def test_switch_latency_in_the_ring_of_switches(tmp_path):
    # innet_sum over two dcs of one worker, switch latency 5 us:
    #   up: a.w0 -> a.s: 0.2 s + 1 us + 5 us (the sum)
    #   all-reduce of the sums: 2 (N_dc - 1) = 2 steps of D / N_dc = 1 GB over the WAN:
    #     1 s + 10 us + 5 us (entering the other switch, which adds the shard), each
    #   down: 0.2 s + 1 us
    _, r = solve(tmp_path, head(switch="; latency = 5 us") + TWO_DC.format(wan="slow"), "payload = dense; collective = innet_sum; steps = 10")
    up, ring, down = r.phases
    assert up.time.value == pytest.approx(0.2 + 6 * US, rel=REL)
    assert ring.steps == 2
    assert ring.time.value == pytest.approx(2 * (1.0 + 15 * US), rel=REL)
    assert down.time.value == pytest.approx(0.2 + 1 * US, rel=REL)


MODULE = "pluggable p { port { rate = 5 GB/s }; latency = 3 us; ops = [dct] }\n"


@pytest.mark.parametrize("counted, latency", [("transfer", 3 + 1 + 3), ("hop", 3 + 1 + 1 + 3)])
def test_module_latency_per_crossing(tmp_path, counted, latency):
    # w0 -> w0.p (port: 5 GB/s, 3 us) -> s (fast) -> w1.p (fast) -> w1 (port, 3 us).
    # Two modules crossed: 2 x 3 us; fast once per transfer (1 us) or per hop (2 us).
    # Bandwidth: the port edge carries 2 GB at 5 GB/s = 0.4 s, the slowest share.
    _, r = solve(tmp_path, head(counted) + MODULE + ONE_DC.format(dc="; pluggable = p"))
    (ph,) = r.phases
    assert ph.latency.value == pytest.approx(latency * US, rel=REL)
    assert ph.time.value == pytest.approx(0.4 + latency * US, rel=REL)


# ---- a scheme's fixed overhead per sync ----------------------------------------------------------


def test_overhead_with_a_diloco_period(tmp_path):
    # allgather in one dc of 2, period H = 10, overhead 2 ms per sync:
    #   sync = 0.2 s + 1 us; step = 0.06 + (0.2 + 1e-6 + 0.002) / 10 = 0.0802001 s
    #   component overhead = 0.002 / 10 = 0.0002 s; time to target = 100 x step
    sol, r = solve(tmp_path, head() + ONE_DC.format(dc=""), "payload = dense; collective = allgather; period = 10; overhead = 2 ms; steps = 100")
    assert r.components[C("overhead")].value == pytest.approx(0.0002, rel=REL)
    assert r.components[C("overhead")].dim == U.TIME
    assert r.overhead.value == pytest.approx(0.002, rel=REL)
    assert r.step_time.value == pytest.approx(0.06 + (0.2 + 1e-6 + 0.002) / 10, rel=REL)
    assert r.time_to_target.value == pytest.approx(100 * (0.06 + (0.2 + 1e-6 + 0.002) / 10), rel=REL)
    # static power 0: the energy is the links' alone, unchanged by the overhead:
    #   2 transfers x 16e9 bits x 1 pJ / 10 = 0.0032 J per step
    assert r.energy_parts["links"].value == pytest.approx(0.0032, rel=REL)
    data = sol.to_json()
    (js,) = [s for s in data["schemes"] if s["name"] == "x"]
    assert js["overhead_per_sync"] == pytest.approx(0.002, rel=REL)
    assert js["step"]["components"]["overhead"]["seconds"] == pytest.approx(0.0002, rel=REL)


def test_overhead_with_overlap(tmp_path):
    # overlap: step = max(0.06, (0.2 + 1e-6 + 0.05) / 1) = 0.250001 s
    _, r = solve(tmp_path, head() + ONE_DC.format(dc=""), "payload = dense; collective = allgather; overlap = true; overhead = 50 ms; steps = 10")
    assert r.step_time.value == pytest.approx(0.250001, rel=REL)


BREAKEVEN = """
param bw = 10 GB/s in 1 GB/s .. 100 GB/s log 21
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link fast { bandwidth = bw; latency = 1 us }
switch s {}
dc a { workers = 2; device = d; link = fast; switch = s }
scheme x { payload = dense; collective = allgather; steps = 100 }
scheme y { payload = band; fraction = 1/4; collective = allgather; overhead = 29.8 ms; steps = 100 }
breakeven x vs y over bw
"""


def test_overhead_moves_the_breakeven(tmp_path):
    # x: T_x = 0.06 + 1e-6 + 2e9 / b
    # y: a band of 1/4: c = 1e9 x 1/4 x 2 B = 5e8 B; its DCT on the GPU costs 10 FLOP/B x 2e9 B /
    #    1e14 FLOP/s = 2e-4 s; T_y = 0.06 + 2e-4 + 0.0298 + 1e-6 + 5e8 / b
    # equal steps: 2e9 / b = 0.03 + 5e8 / b -> b* = 1.5e9 / 0.03 = 5e10 B/s = 50 GB/s;
    # y (less slope) is faster below it
    sol = solve_text(tmp_path, BREAKEVEN)
    (be,) = sol.breakevens
    (root,) = be.roots
    assert root.value == pytest.approx(5e10, rel=REL)
    assert (root.below, root.above) == ("y", "x")


def test_overhead_in_explain_and_latex(tmp_path):
    sol, r = solve(tmp_path, head() + ONE_DC.format(dc=""), "payload = dense; collective = allgather; period = 10; overhead = 2 ms; steps = 100")
    text = explain(sol, "x")
    assert "overhead: 2 ms per sync" in text
    assert "compute + (transform + sync + overhead) / H" in text
    assert r"t_{\mathrm{overhead}}" in scheme_align(r, sol.symbols)
    from ctdsl.report.paper import paper_latex

    paper = paper_latex(sol)
    assert r"t_{\mathrm{overhead}} &= \qty{2}{\milli\second}" in paper and r"\label{eq:ctdsl:x:overhead}" in paper
    assert r"T &= t_{\mathrm{compute}} + \frac{t_{\mathrm{overhead}} + t_{1}}{10} = \qty{80.2}{\milli\second}" in paper  # 60 ms + (2 ms + 200 ms) / 10


# ---- a switch's rates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rates, seconds",
    [
        # two streams of u = D = 2 GB (the switch transforms the dense buffer)
        ("; total_rate = 8 GB/s", 2 * 2 / 8),  # shared: 2 x 2 GB / 8 GB/s = 0.5 s
        ("; stream_rate = 8 GB/s", 2 / 8),  # each its own: 2 GB / 8 GB/s = 0.25 s
        ("; total_rate = 8 GB/s; stream_rate = 5 GB/s", max(4 / 8, 2 / 5)),  # 0.5 s: the total binds
        ("; total_rate = 20 GB/s; stream_rate = 5 GB/s", max(4 / 20, 2 / 5)),  # 0.4 s: the stream binds
    ],
)
def test_switch_rates_with_two_streams(tmp_path, rates, seconds):
    _, r = solve(
        tmp_path,
        head(switch=rates) + ONE_DC.format(dc=""),
        "payload = band; fraction = 1/16; at = s; collective = innet_sum; steps = 10",
    )
    assert r.transform.value == pytest.approx(seconds, rel=REL)
    assert r.transform_at == "switch s"


def test_switch_rate_is_renamed(tmp_path):
    path = tmp_path / "old.ct"
    path.write_text(head(switch="; rate = 8 GB/s") + ONE_DC.format(dc="") + "scheme x { payload = dense; collective = innet_sum; steps = 1 }\n")
    (d,) = [d for d in check(path).diagnostics if d.code == "CT104"]
    assert "no field 'rate'" in d.message
    assert "total_rate" in d.help and "stream_rate" in d.help


OVERHEAD = """
param bw = 10 GB/s in 1 GB/s .. 100 GB/s log 3
model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
device d { peak = 100 TFLOP/s; efficiency = 1 }
link fast { bandwidth = bw; latency = 1 us }
switch s {}
dc a { workers = 2; device = d; link = fast; switch = s }
scheme x { payload = dense; collective = allgather; period = 10; overhead = 2 ms; steps = 100 }
"""


def test_overhead_in_the_tables_csv_and_sweep(tmp_path):
    # per step: overhead / H = 2 ms / 10 = 0.2 ms. The sweep over bw at 1, 10 and 100 GB/s:
    #   step = 0.06 + (1e-6 + 2e9 / bw + 0.002) / 10 = 0.2602001, 0.0802001, 0.0622001 s
    from typer.testing import CliRunner

    from ctdsl.cli import app
    from ctdsl.report.tables import render_csv, step_table

    sol = solve_text(tmp_path, OVERHEAD)
    t = step_table(sol)
    col = t.header.index("overhead")
    assert t.rows[0][col].startswith("200 us")
    rows = render_csv(sol).splitlines()
    header, row = rows[0].split(","), rows[1].split(",")
    assert float(row[header.index("overhead_s")]) == pytest.approx(0.0002, rel=REL)
    path = tmp_path / "ov.ct"
    path.write_text(OVERHEAD, encoding="utf-8")
    out = CliRunner().invoke(app, ["sweep", str(path), "--components"], env={"NO_COLOR": "1"})
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    head = lines[0].split(",")
    steps = [float(line.split(",")[head.index("x.step_s")]) for line in lines[1:4]]
    assert steps == [pytest.approx(0.06 + (1e-6 + 2e9 / b + 0.002) / 10, rel=REL) for b in (1e9, 1e10, 1e11)]
    assert [float(line.split(",")[head.index("x.overhead_s")]) for line in lines[1:4]] == [pytest.approx(0.0002, rel=REL)] * 3
