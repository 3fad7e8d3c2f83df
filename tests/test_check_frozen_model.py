"""The checked model is frozen and typed, and its topology is built once.

- every entity of a checked spec rejects assignment (FrozenInstanceError), and
  its tables, spans, stages and shapes reject item assignment;
- the closed sets are the enums of ctdsl.language.enums, not strings;
- the fields say their units: a link's energy is held per byte, a quantised
  value's width in bytes (numbers worked by hand below);
- the checker fills each default once (6P FLOPs per token, H = 1, the only
  model, the DCT cost of 10 FLOP/B);
- the graph is built once per check: `Spec.topology` is one object, and
  loading, solving, simulating and printing the graph call `build_graph` once.
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from enum import Enum
from pathlib import Path

import networkx as nx
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.api import check
from ctdsl.language.enums import Collective, JitterKind, LinkKind, Operation, Payload, PlacementKind, Spacing
from ctdsl.model import entities as M
from ctdsl.model import graph as G
from ctdsl.model.topology import Edge, NodeKind, Topology

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = "tests/data/llama70b_workers.ct"  # the study with single-GPU workers, unrolled into nodes
SPECS = sorted(str(p.relative_to(ROOT)) for p in [*ROOT.glob("specs/*.ct"), *ROOT.glob("examples/*.ct")])


@pytest.fixture(autouse=True)
def _from_repo_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _spec(path: str = FLAGSHIP) -> M.Spec:
    result = check(path)
    assert result.ok, [d.message for d in result.diagnostics]
    return result.spec


def _entities(spec: M.Spec):
    """Every entity of a spec, the spec itself included."""
    yield spec
    yield from spec.params.values()
    for table in (spec.models, spec.devices, spec.links, spec.pluggables, spec.switches, spec.dcs, spec.schemes):
        yield from table.values()
    for plug in spec.pluggables.values():
        yield from plug.stages.values()
    for scheme in spec.schemes.values():
        yield scheme.at
    yield from spec.wans
    yield from spec.breakevens
    if spec.simulation is not None:
        yield spec.simulation


# ---- frozen -------------------------------------------------------------------------


def test_every_entity_rejects_assignment():
    spec = _spec()
    seen = set()
    for entity in _entities(spec):
        seen.add(type(entity).__name__)
        first = dataclasses.fields(entity)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(entity, first, getattr(entity, first))
    # the flagship has one of each kind of entity but a simulation block
    assert seen >= {"Spec", "Param", "Model", "Device", "Link", "Pluggable", "PluggableStage", "Switch",
                    "DataCentre", "Scheme", "Placement", "WanLink", "Breakeven"}


def test_slots_leave_no_room_for_new_attributes():
    scheme = _spec().schemes["band_module"]
    with pytest.raises((AttributeError, TypeError)):
        object.__setattr__(scheme, "not_a_field", 1)


def test_tables_and_containers_are_read_only():
    spec = _spec()
    with pytest.raises(TypeError):
        spec.schemes["extra"] = spec.schemes["adamw"]  # type: ignore[index]
    with pytest.raises(TypeError):
        del spec.links["wan"]  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        spec.dcs["east"].spans["workers"] = spec.dcs["east"].span  # type: ignore[index]
    with pytest.raises(TypeError):
        spec.pluggables["qsfp"].stages["port"] = None  # type: ignore[index]
    assert isinstance(spec.wans, tuple) and isinstance(spec.breakevens, tuple) and isinstance(spec.files, tuple)
    assert isinstance(spec.pluggables["qsfp"].ops, tuple)
    shaped = _spec("examples/04_model_shape.ct").models["llama8b"]
    with pytest.raises(TypeError):
        shaped.shape["layers"] = shaped.shape["width"]  # type: ignore[index]


def test_the_topology_cannot_be_changed():
    topology = _spec().topology
    with pytest.raises(nx.NetworkXError):
        topology.graph.add_node("intruder")
    with pytest.raises(nx.NetworkXError):
        topology.graph.remove_edge("east.tor", "west.tor")
    edge = topology.edge("east.tor", "west.tor")
    with pytest.raises(dataclasses.FrozenInstanceError):
        edge.bandwidth = edge.latency  # type: ignore[misc]


def test_a_variant_is_built_with_replace_and_is_frozen_too():
    spec = _spec()
    links = {k: dataclasses.replace(v, load=None, transfer=None) for k, v in spec.links.items()}
    variant = dataclasses.replace(spec, links=links)
    assert variant.links is not spec.links and variant.links["wan"].load is None
    with pytest.raises(TypeError):
        variant.links["other"] = variant.links["wan"]  # type: ignore[index]
    # the variant keeps the topology: its links' bandwidths and latencies did not change
    assert variant.topology is spec.topology
    # an enum given as a word becomes the enum
    dc = dataclasses.replace(spec.dcs["east"], jitter=spec.links["wan"].latency, jitter_kind="uniform")
    assert dc.jitter_kind is JitterKind.UNIFORM
    with pytest.raises(ValueError):
        dataclasses.replace(spec.schemes["adamw"], payload="densest")


# ---- typed --------------------------------------------------------------------------


def _enum_of(hint) -> type[Enum] | None:
    """The enum type a field's annotation names (`Payload`, `JitterKind | None`, `tuple[Operation, ...]`)."""
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint
    for arg in typing.get_args(hint):
        found = _enum_of(arg)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("path", SPECS)
def test_every_closed_set_holds_enum_members(path):
    spec = _spec(path)
    checked = 0
    for entity in _entities(spec):
        hints = typing.get_type_hints(type(entity))
        for f in dataclasses.fields(entity):
            enum = _enum_of(hints[f.name])
            value = getattr(entity, f.name)
            if enum is None or value is None:
                continue
            for v in value if isinstance(value, tuple) else (value,):
                assert type(v) is enum, f"{type(entity).__name__}.{f.name} holds {v!r}, not a {enum.__name__}"
                checked += 1
    assert checked >= 2 * len(spec.schemes)  # at least payload and collective


def test_the_flagship_enums_by_name():
    spec = _spec()
    band = spec.schemes["band_module"]
    assert band.payload is Payload.BAND and band.collective is Collective.HIER_ALLGATHER
    assert band.at == M.Placement(PlacementKind.PLUGGABLE, "qsfp")
    assert spec.schemes["band_switch"].at.kind is PlacementKind.SWITCH
    assert spec.schemes["adamw"].at.kind is PlacementKind.GPU and spec.schemes["adamw"].at.name is None
    assert all(type(op) is Operation for op in spec.pluggables["qsfp"].ops)
    assert spec.params["wan_bw"].spacing is Spacing.LOG and spec.params["wan_bw"].count == 41
    dc = _spec("examples/15_contention.ct").dcs
    kinds = {d.jitter_kind for d in dc.values() if d.jitter is not None}
    assert kinds == {JitterKind.EXPONENTIAL}


def test_fields_say_their_units():
    # 20 pJ per bit is 8 x 20 = 160 pJ per byte
    link = _spec("examples/06_links.ct").links
    energies = {name: l.energy_per_byte for name, l in link.items() if "energy_per_bit" in l.spans}
    assert energies, "examples/06_links.ct writes an energy_per_bit"
    values = {name: ctdsl.model.expr.evaluate(e, {}) for name, e in energies.items()}
    assert any(v == pytest.approx(160e-12) for v in values.values()), values
    # bits = 2 b is a quarter of a byte per value
    schemes = _spec("examples/10_payloads.ct").schemes
    two_bit = ctdsl.model.expr.evaluate(schemes["two_bit"].value_bytes, {})
    assert two_bit == 0.25
    assert not hasattr(M.Link, "energy_per_bit") and not hasattr(M.Scheme, "bits")


def test_defaults_are_filled_by_the_checker():
    text = """
    param bw = 10 GB/s
    model m { params = 1e9; bytes_per_value = 2 B; tokens = 1000 }
    device g { peak = 100 TFLOP/s; efficiency = 0.5 }
    link l { bandwidth = bw; latency = 1 us }
    switch s { }
    dc d { workers = 2; device = g; link = l; switch = s }
    scheme band { payload = band; fraction = 1/8; collective = allgather }
    """
    result = check("inline.ct", text=text)
    assert result.ok, [d.message for d in result.diagnostics]
    spec = result.spec
    evaluate = ctdsl.model.expr.evaluate
    band = spec.schemes["band"]
    assert band.model == "m"  # the spec's only model
    assert evaluate(band.period, {}) == 1  # H = 1
    assert evaluate(band.cost, {}) == 10  # the DCT: 10 FLOP per input byte
    assert band.at == M.Placement(PlacementKind.GPU, None)
    assert band.loopback is False and band.overlap is False and band.sum_at is None
    assert evaluate(spec.models["m"].flops_per_token, {}) == 6e9  # 6P
    assert evaluate(spec.links["l"].energy_per_byte, {}) == 0
    s = spec.switches["s"]
    assert s.sum is False and s.ops == () and evaluate(s.latency, {}) == 0
    assert spec.dcs["d"].jitter is None and spec.dcs["d"].jitter_kind is None
    assert spec.simulation is None


# ---- the graph, built once ------------------------------------------------------------


def test_the_topology_is_one_object():
    spec = _spec()
    assert isinstance(spec.topology, Topology)
    assert spec.topology is spec.topology
    study = ctdsl.load(FLAGSHIP)
    assert study.graph() is study.spec.topology is study.graph()


def test_build_graph_runs_once_per_check(monkeypatch):
    calls = []
    real = G.build_graph

    def counting(tables):
        calls.append(tables)
        return real(tables)

    monkeypatch.setattr(G, "build_graph", counting)
    study = ctdsl.load(FLAGSHIP)
    assert len(calls) == 1
    study.solve()
    study.graph()
    from ctdsl.simulate.plan import build_plans, loaded_edges

    build_plans(study.spec, ["adamw"])
    loaded_edges(study.spec)
    from ctdsl.cli.app import app

    out = CliRunner().invoke(app, ["graph", FLAGSHIP])
    assert out.exit_code == 0, out.output
    # the CLI checked the spec a second time: one more build, and nothing else built one
    assert len(calls) == 2


def test_a_spec_with_errors_builds_no_graph(monkeypatch):
    calls = []
    monkeypatch.setattr(G, "build_graph", lambda tables: calls.append(tables))
    result = check("bad.ct", text="link l { bandwidth = 1 s; latency = 1 us }\n")
    assert not result.ok and result.spec is None and calls == []


def test_no_consumer_builds_the_graph():
    """Only the checker's topology pass names build_graph (graph.py defines it, by a `def`)."""
    callers = []
    for path in sorted((ROOT / "ctdsl").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
            if isinstance(node, ast.alias):
                name = node.name
            if name == "build_graph":
                callers.append(rel)
    assert sorted(set(callers)) == ["ctdsl/check/topology.py"]


def test_typed_edges_and_nodes_match_the_graph():
    topology = _spec().topology
    g = topology.graph
    assert [e.key for e in topology.edges()] == list(g.edges)
    assert [n.id for n in topology.nodes()] == list(g.nodes)
    for e in topology.edges():
        assert isinstance(e, Edge) and type(e.kind) is LinkKind
        assert g.edges[e.key]["link"] == e.link and g.edges[e.key]["bandwidth"] is e.bandwidth
    kinds = [n.kind for n in topology.nodes()]
    # 2 dcs of 4 workers, each with a module in its port, and a switch per dc
    assert kinds.count(NodeKind.WORKER) == 8 and kinds.count(NodeKind.MODULE) == 8 and kinds.count(NodeKind.SWITCH) == 2
    assert topology.node("east.w2").index == 2 and topology.node("east.w2").dc == "east"
    assert topology.node("east.tor").sum is True and topology.node("east.w0").sum is None
    # worker -> its module -> the switch -> the WAN -> the other switch -> module -> worker
    route = topology.route("east.w0", "west.w1")
    assert route == ("east.w0", "east.w0.qsfp", "east.tor", "west.tor", "west.w1.qsfp", "west.w1")
    assert route == tuple(nx.shortest_path(g, "east.w0", "west.w1"))
    kinds_on_route = [topology.edge(a, b).kind for a, b in zip(route, route[1:])]
    assert kinds_on_route == [LinkKind.PORT, LinkKind.INTRA, LinkKind.WAN, LinkKind.INTRA, LinkKind.PORT]
    assert topology.workers("west") == [f"west.w{i}" for i in range(4)]
