"""A transform on the GPU: both sides of its roofline by hand, and `transform_charge = flops`.

An H100-like device: peak 989 TFLOP/s at efficiency 0.4 (3.956e14 FLOP/s achieved),
mem_bw 3.35 TB/s. A 1e9-parameter model at 2 B per value: D = 2e9 B. A DCT costs
10 FLOP/B (the default for band), so per sync

    arithmetic  10 x 2e9 / 3.956e14 = 2e10 / 3.956e14 = 5.0556117290192113e-05 s
    memory      2e9 / 3.35e12                       = 5.9701492537313433e-04 s

and the memory side binds: the intensity 10 FLOP/B is below the ridge point
3.956e14 / 3.35e12 = 118.08955223880597 FLOP/B. With `transform_charge = flops`
the transform is charged the arithmetic alone.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ctdsl.api import check
from ctdsl.cli.app import app
from solvekit import C, solve_text

ARITH = 2e10 / 3.956e14
MEMORY = 2e9 / 3.35e12
RIDGE = 3.956e14 / 3.35e12
assert ARITH == pytest.approx(5.0556117290192113e-05, rel=1e-15)
assert MEMORY == pytest.approx(5.9701492537313433e-04, rel=1e-15)
assert RIDGE == pytest.approx(118.08955223880597, rel=1e-15)

SPEC = """
model m {{ params = 1e9; bytes_per_value = 2 B; tokens = 1000 }}
device h100 {{ peak = 989 TFLOP/s; efficiency = 0.4; mem_bw = 3.35 TB/s{device} }}
link fast {{ bandwidth = 100 GB/s; latency = 0 us }}
switch s {{}}
dc a {{ workers = 2; device = h100; link = fast; switch = s }}
scheme band {{ payload = band; fraction = 1/16; collective = allgather; steps = 10{scheme} }}
"""


def solved(tmp_path, device: str = "", scheme: str = ""):
    return solve_text(tmp_path, SPEC.format(device=device, scheme=scheme)).schemes["band"]


def test_memory_binds_a_dct_on_an_h100(tmp_path):
    r = solved(tmp_path)
    (x,) = r.roofline
    assert (x.device, x.dcs, x.charge, x.binds) == ("h100", ("a",), "roofline", "memory")
    assert x.compute.value == pytest.approx(ARITH, rel=1e-12)
    assert x.memory.value == pytest.approx(MEMORY, rel=1e-12)
    assert x.intensity.value == pytest.approx(10, rel=1e-12)
    assert x.ridge.value == pytest.approx(RIDGE, rel=1e-12)
    assert x.time.value == pytest.approx(MEMORY, rel=1e-12)
    assert r.transform.value == pytest.approx(MEMORY, rel=1e-12)
    assert r.components[C("transform")].value == pytest.approx(MEMORY, rel=1e-12)  # H = 1


def test_compute_binds_above_the_ridge_point(tmp_path):
    # cost 200 FLOP/B > 118.09: arithmetic 200 x 2e9 / 3.956e14 = 1.0111223458038423e-03 s > memory
    r = solved(tmp_path, scheme="; cost = 200 FLOP/B")
    (x,) = r.roofline
    assert x.binds == "compute"
    assert x.compute.value == pytest.approx(4e11 / 3.956e14, rel=1e-12)
    assert r.transform.value == pytest.approx(1.0111223458038423e-03, rel=1e-12)


@pytest.mark.parametrize("where", ["scheme", "device"])
def test_flops_alone(tmp_path, where):
    field = "; transform_charge = flops"
    r = solved(tmp_path, **{where: field})
    (x,) = r.roofline
    assert (x.charge, x.binds) == ("flops", "memory")  # memory is still the larger side; not charged
    assert x.memory.value == pytest.approx(MEMORY, rel=1e-12)
    assert r.transform.value == pytest.approx(ARITH, rel=1e-12)
    assert r.components[C("transform")].value == pytest.approx(ARITH, rel=1e-12)


def test_the_schemes_word_wins_over_the_devices(tmp_path):
    r = solved(tmp_path, device="; transform_charge = flops", scheme="; transform_charge = roofline")
    assert r.roofline[0].charge == "roofline"
    assert r.transform.value == pytest.approx(MEMORY, rel=1e-12)


def test_no_mem_bw_is_compute_alone(tmp_path):
    text = SPEC.replace("; mem_bw = 3.35 TB/s", "")
    r = solve_text(tmp_path, text.format(device="", scheme="")).schemes["band"]
    (x,) = r.roofline
    assert (x.memory, x.ridge, x.binds) == (None, None, "compute")
    assert r.transform.value == pytest.approx(ARITH, rel=1e-12)


def test_a_wrong_word_is_an_error(tmp_path):
    path = tmp_path / "bad.ct"
    path.write_text(SPEC.format(device="", scheme="; transform_charge = memory"), encoding="utf-8")
    res = check(path)
    assert not res.ok
    assert [(d.code, d.message) for d in res.diagnostics] == [("CT108", "unknown transform_charge 'memory'")]


def test_explain_and_json_say_which_side_binds(tmp_path):
    path = tmp_path / "spec.ct"
    path.write_text(SPEC.format(device="", scheme=""), encoding="utf-8")
    out = CliRunner().invoke(app, ["solve", str(path), "--explain", "band"])
    assert out.exit_code == 0, out.output
    assert "on h100 (dc a): roofline, memory-bound" in out.stdout
    assert "cost D / (peak x efficiency) =   50.56 us" in out.stdout
    assert "D / mem_bw                   =     597 us  <- binds" in out.stdout
    assert "intensity 10 FLOP/B (the cost) is below the ridge point peak x efficiency / mem_bw = 118.1 FLOP/B" in out.stdout
    res = CliRunner().invoke(app, ["solve", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    (x,) = json.loads(res.stdout)["schemes"][0]["roofline"]
    assert x["binds"] == "memory" and x["charge"] == "roofline"
    assert x["memory_seconds"] == pytest.approx(MEMORY, rel=1e-12)
    assert x["compute_seconds"] == pytest.approx(ARITH, rel=1e-12)
    assert x["ridge"] == pytest.approx(RIDGE, rel=1e-12)


def test_a_flops_charge_is_explained(tmp_path):
    path = tmp_path / "spec.ct"
    path.write_text(SPEC.format(device="", scheme="; transform_charge = flops"), encoding="utf-8")
    out = CliRunner().invoke(app, ["solve", str(path), "--explain", "band"])
    assert out.exit_code == 0, out.output
    assert "charged by its FLOPs alone (transform_charge = flops); the roofline would be memory-bound" in out.stdout
    assert "=   50.56 us  <- charged" in out.stdout
