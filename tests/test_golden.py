"""Golden files per stage: syntax tree, checked model and graph, for a few specs.

    tests/golden/<name>/ast.json     ctdsl.syntax.ast.to_json of the root file
    tests/golden/<name>/model.json   ctdsl.model.serialize.spec_to_json
    tests/golden/<name>/graph.json   ctdsl.model.graph.to_json at the defaults

By default they are compared; `CTDSL_UPDATE_GOLDEN=1 pytest tests/test_golden.py`
rewrites them (then read the diff before committing it). The tests after the
golden ones check a few numbers in them against published figures
(docs: /work/shared/reference/domain.md, sections 2 and 8), so a golden file
cannot quietly drift to a wrong value.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctdsl.api import check
from ctdsl.model.graph import to_json as graph_to_json
from ctdsl.model.serialize import spec_to_json
from ctdsl.syntax.ast import to_json as ast_to_json

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
UPDATE = os.environ.get("CTDSL_UPDATE_GOLDEN") == "1"

SPECS = {
    "llama70b_wan": "specs/llama70b_wan.ct",
    "04_model_shape": "examples/04_model_shape.ct",
    "07_pluggable": "examples/07_pluggable.ct",
    "09_three_dcs": "examples/09_three_dcs.ct",
    "10_payloads": "examples/10_payloads.ct",
    "13_imports": "examples/13_imports.ct",
}
STAGES = ("ast", "model", "graph")


def _dump(data) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _stages(rel: str) -> dict[str, object]:
    result = check(rel)
    assert result.ok, "\n".join(d.message for d in result.diagnostics)
    spec = result.spec
    root_ast = result.loaded.files[0]
    return {
        "ast": ast_to_json(root_ast),
        "model": spec_to_json(spec),
        "graph": graph_to_json(spec.topology, spec.defaults()),
    }


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # paths in the golden files are relative to the repository


@pytest.mark.parametrize("name", sorted(SPECS))
def test_golden(name):
    produced = {stage: _dump(data) for stage, data in _stages(SPECS[name]).items()}
    folder = GOLDEN / name
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for stage, text in produced.items():
            (folder / f"{stage}.json").write_text(text, encoding="utf-8")
        return
    for stage in STAGES:
        path = folder / f"{stage}.json"
        assert path.is_file(), f"{path} is missing: run CTDSL_UPDATE_GOLDEN=1 pytest tests/test_golden.py"
        expected = path.read_text(encoding="utf-8")
        assert produced[stage] == expected, f"{name}/{stage}.json differs; rerun with CTDSL_UPDATE_GOLDEN=1 to see the diff"


def test_output_is_deterministic():
    first = {s: _dump(d) for s, d in _stages(SPECS["llama70b_wan"]).items()}
    second = {s: _dump(d) for s, d in _stages(SPECS["llama70b_wan"]).items()}
    assert first == second


def _golden(name: str, stage: str) -> dict:
    return json.loads((GOLDEN / name / f"{stage}.json").read_text(encoding="utf-8"))


# ---- the golden content, against figures from outside the code ------------------


def test_llama70b_parameter_count_and_update_size():
    model = _golden("llama70b_wan", "model")["models"]["llama70b"]
    # domain.md section 2: Llama-3-70B has P = 70,552,387,584
    assert model["params"]["value"] == 70_552_387_584
    # section 8: a BF16 update is 141.10 GB
    assert round(model["params"]["value"] * model["bytes_per_value"]["value"] / 1e9, 2) == 141.10
    assert model["tokens"]["value"] == 16 * 8192  # 16 sequences of 8,192 tokens per replica
    # with seq given, parallelism.md 2.3 at c = 1: 6 [L h d_h (2a + 2g) + 3 L h f + h V] + 6 L s a d_h
    L, h, a, g, dh, f, V, s = 80, 8192, 64, 8, 128, 28672, 128256, 8192
    assert model["flops_per_token"]["value"] == 6 * (L * h * dh * (2 * a + 2 * g) + 3 * L * h * f + h * V) + 6 * L * s * a * dh


def test_llama8b_parameter_count_from_its_shape():
    model = _golden("04_model_shape", "model")["models"]["llama8b"]
    # domain.md section 2: Llama-3-8B has P = 8,029,995,008; a BF16 update is 16.06 GB
    assert model["params"]["value"] == 8_029_995_008
    assert round(model["params"]["value"] * 2 / 1e9, 2) == 16.06


def test_llama70b_graph_shape():
    graph = _golden("llama70b_wan", "graph")
    # 2 dcs of replicas: each dc's GPUs one group node, their NICs' modules another, a switch
    kinds = [n["kind"] for n in graph["nodes"]]
    assert sorted(kinds) == ["module", "module", "switch", "switch", "worker", "worker"]
    gpus = next(n for n in graph["nodes"] if n["id"] == "east.gpu")
    assert gpus["count_value"] == 4 * 8 * 2  # 4 replicas of tp 8 x pp 2
    # per dc: the port both ways and module <-> switch both ways, each a group of 64 (one per NIC); the WAN both ways
    assert len(graph["edges"]) == 2 * 4 + 2
    assert all(e["count_value"] == 64 for e in graph["edges"] if e["kind"] != "wan")
    wan = [e for e in graph["edges"] if e["kind"] == "wan"]
    assert {(e["source"], e["target"]) for e in wan} == {("east.tor", "west.tor"), ("west.tor", "east.tor")}
    assert all(e["bandwidth"] == "wan_bw" and e["bandwidth_value"] == 12.5e9 for e in wan)
    port = next(e for e in graph["edges"] if e["kind"] == "port")
    # the module's line rate is its port rate capped by the host port: min(25, 50) GB/s
    assert port["bandwidth_value"] == 25e9 and port["latency_value"] == 1e-6


def test_llama70b_model_values_in_base_units():
    model = _golden("llama70b_wan", "model")
    assert model["params"]["wan_bw"]["default"] == 12.5e9  # 12.5 GB/s in B/s
    assert model["params"]["wan_bw"]["lo"] == 0.1e9 and model["params"]["wan_bw"]["hi"] == 1000e9
    assert model["params"]["budget"]["default"] == 50e9  # FLOP/s
    assert model["links"]["wan"]["bandwidth"] == {"expr": "wan_bw", "value": 12.5e9}
    assert model["links"]["wan"]["latency"]["value"] == 20e-6  # eth100g: 20 us
    # 15 pJ/bit is 120 pJ per byte
    assert model["links"]["wan"]["energy_per_byte"]["value"] == pytest.approx(120e-12)
    assert model["schemes"]["topk"]["fraction"] == {"expr": "1 / 16", "value": 0.0625}
    assert model["schemes"]["band_switch"]["at"] == {"kind": "switch", "name": "tor"}
    assert model["baseline"] == "adamw"
    assert [(b["x"], b["y"], b["over"]) for b in model["breakevens"]] == [
        ("band_switch", "adamw", "wan_bw"),
        ("band_module", "adamw", "wan_bw"),
        ("band_ring", "adamw", "wan_bw"),
    ]


def test_three_dc_wan_is_asymmetric():
    graph = _golden("09_three_dcs", "graph")
    wan = {(e["source"], e["target"]): e["bandwidth_value"] for e in graph["edges"] if e["kind"] == "wan"}
    assert wan == {
        ("north.tor", "hub.tor"): 25e9,
        ("hub.tor", "north.tor"): 5e9,
        ("south.tor", "hub.tor"): 25e9,
        ("hub.tor", "south.tor"): 5e9,
    }


def test_quantise_bits_in_bytes():
    schemes = _golden("10_payloads", "model")["schemes"]
    assert schemes["two_bit"]["value_bytes"]["value"] == 0.25  # bits = 2 b: 1/4 byte per value
    assert schemes["topk_int64"]["index"]["value"] == 8


def test_ast_keeps_what_was_written():
    ast = _golden("llama70b_wan", "ast")
    param = next(s for s in ast["statements"] if s["node"] == "Param")
    assert param["name"]["text"] == "wan_bw"
    assert param["default"] == {
        "node": "Number",
        "value": "25/2",
        "text": "12.5",
        "unit": "GB/s",
        "unit_span": "18:21-18:25",
        "span": "18:16-18:25",
    }
    assert param["range"]["spacing"] == "log" and param["range"]["count"] == 41


def test_the_json_view_needs_neither_sympy_nor_numpy():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ctdsl.api import check\n"
        "from ctdsl.model.serialize import spec_to_json\n"
        "spec_to_json(check('specs/llama70b_wan.ct').spec)\n"
        "print(sorted(m for m in ('sympy', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_json_view_of_a_small_spec_by_hand():
    result = check(
        "small.ct",
        text="param bw = 2 GB/s in 1 GB/s .. 4 GB/s lin 3\n"
        "link l { bandwidth = 2 * bw; latency = 10 us }\n",
    )
    data = spec_to_json(result.spec)
    assert data["params"]["bw"] == {
        "where": "small.ct:1:7",
        "dim": "B/s",
        "default": 2e9,
        "unit": "GB/s",
        "unit_scale": 1e9,
        "lo": 1e9,
        "hi": 4e9,
        "spacing": "lin",
        "count": 3,
        "display": None,
    }
    link = data["links"]["l"]
    assert link["bandwidth"] == {"expr": "2 * bw", "value": 4e9}
    assert link["latency"] == {"expr": "1e-05", "value": 1e-05}
    assert link["energy_per_byte"] == {"expr": "0", "value": 0.0}  # the schema's default
    assert link["distance"] is None and link["where"] == "small.ct:2:6" and link["from_std"] is False
    assert data["dcs"] == {} and data["schemes"] == {} and data["wans"] == [] and data["baseline"] is None
    assert data["files"] == ["small.ct"] and data["version"] == 1
