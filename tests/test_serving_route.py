"""A hand-off over a route of several links (`route = [a, b, ...]`): each segment's latency once, or
the route-counted link's alone, and the bytes at the narrowest segment (docs/cost-model.md's
convention for training's routes), derived by hand from the links' presets; the checker's
diagnostics for a route written wrong.

Llama-3-8B's 2,048-token KV cache is 2,048 x 131,072 B = 268,435,456 B (inference.md).
"""

from __future__ import annotations

import pytest

from ctdsl.api import check, load
from ctdsl.lint.catalogue import RULES
from ctdsl.lint.runner import lint_one

KV = 2048 * 131072
HEAD = """
import std.devices
import std.links
import std.models
model m : llama3_8b {}
device accel : h100 { efficiency = 0.55 }
link wan { bandwidth = 12.5 GB/s; latency = 20 us; energy_per_bit = 8 pJ/bit; counted = route }
instance node { device = accel; model = m; mem_efficiency = 0.8 }
pool prefill { role = prefill; instance = node }
pool decode { role = decode; instance = node }
workload w { pool = prefill; rate = 2 req/s; prompt = 2048 tokens; output = 128 tokens }
"""
SPEC = HEAD + """
handoff one { from = prefill; to = decode; link = ib_ndr }
handoff two { from = prefill; to = decode; route = [ib_ndr, eth25g] }
handoff wide { from = prefill; to = decode; route = [ib_ndr, wan, ib_ndr] }
"""


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    path = tmp_path_factory.mktemp("route") / "route.ct"
    path.write_text(SPEC, encoding="utf-8")
    return {r.handoff: r for r in load(path).solve().serving}


def test_segments_each_pay_their_latency_and_the_narrowest_bandwidth(rows):
    # IB NDR then 25 GbE: 10 us + 20 us, the bytes at 3.125 GB/s
    assert rows["two"].value("handoff") == pytest.approx(10e-6 + 20e-6 + KV / 3.125e9, rel=1e-12)
    assert rows["two"].capacities["link"].value == pytest.approx(1 / (30e-6 + KV / 3.125e9), rel=1e-12)
    # one link is a route of one segment: as before
    assert rows["one"].value("handoff") == pytest.approx(10e-6 + KV / 50e9, rel=1e-12)


def test_a_route_counted_link_pays_for_the_whole_route(rows):
    # NDR, a route-counted WAN, NDR: the WAN's 20 us alone (not 10 + 20 + 10), the bytes at its 12.5 GB/s
    assert rows["wide"].value("handoff") == pytest.approx(20e-6 + KV / 12.5e9, rel=1e-12)
    # its energy per bit in place of the NDR segments' 15 pJ/bit, on each request's KV bytes
    one, wide = rows["one"].value("energy_per_token"), rows["wide"].value("energy_per_token")
    assert (wide - one) * 128 == pytest.approx(KV * (8e-12 - 15e-12) * 8, rel=1e-9)  # J/bit x 8 bits a byte


@pytest.mark.parametrize(
    "handoff, code",
    [
        ("handoff h { from = prefill; to = decode; link = ib_ndr; route = [ib_ndr] }", "CT474"),
        ("handoff h { from = prefill; to = decode }", "CT105"),
        ("handoff h { from = prefill; to = decode; route = [ib_ndr, decode] }", "CT102"),
        ("handoff h { from = prefill; to = decode; route = [ib_ndr, ib_nope] }", "CT101"),
        ("handoff h { from = prefill; to = decode; route = [] }", "CT206"),
        ("handoff h { from = prefill; to = decode; route = ib_ndr }", "CT206"),
    ],
)
def test_a_route_written_wrong_is_a_diagnostic(tmp_path, handoff, code):
    path = tmp_path / "bad.ct"
    path.write_text(HEAD + handoff + "\n", encoding="utf-8")
    res = check(path)
    assert code in {d.code for d in res.diagnostics}


def test_lint_names_the_route(rows, tmp_path):
    path = tmp_path / "slow.ct"
    path.write_text(HEAD + "handoff two { from = prefill; to = decode; route = [ib_ndr, eth25g] }\n", encoding="utf-8")
    res = lint_one(str(path), [RULES["CTL014"]])
    msgs = [d.message for d in res.diagnostics]
    drain = rows["two"].capacities["decode"].value  # solve's, 59.7 req/s
    assert msgs == [f"hand-off 'two': route 'ib_ndr' -> 'eth25g' carries at most 11.6 req/s of workload 'w' (268.4 MB a request), below the {drain:.3g} req/s decode pool 'decode' drains"]
