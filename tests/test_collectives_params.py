"""The node layout of a group and NCCL's algorithm choice follow the params over their ranges
(docs/cost-model.md, "Collectives over nodes": the rule for what is a number and what a form).

One solve at the defaults gives forms; evaluated at another point they must give what the
layout there gives. The expected values are derived by hand (the same case as
tests/test_collectives.py: vTrain's 3.6B GPT on nodes of 8, NVLink 150 GB/s a GPU, NICs 12.5 GB/s
a GPU, latencies 0 unless set), or come from an independent method: a separate solve of the spec
checked again at that point (`--set`), or written with that value as its default.
"""

from __future__ import annotations

import math

import pytest
import sympy as sp

import ctdsl
from ctdsl import units as U
from ctdsl.symbolic import collectives as CO
from ctdsl.symbolic.convert import value
from ctdsl.symbolic.dimensioned import DimExpr
from solvekit import C
from test_collectives import GLOBAL, HEAD, NIC, NV, P, L, beta, h, s, solve, tp16_bytes_per_step

PARAMS = """
param ntp = 8 in 1 .. 16
param ndp = 8 in 1 .. 64
param nmb = 4 in 1 .. 64
"""


def _spec(tmp, name, **kw):
    args = dict(tp="ntp", dp="ndp", mb="nmb", nv_lat="0 s", nic_lat="0 s", nv="", nic="", replica="", nic_bw="100 Gb/s")
    args.update(kw)
    path = tmp / name
    path.write_text(PARAMS + HEAD.format(**args), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return _spec(tmp_path_factory.mktemp("layout"), "layout.ct")


@pytest.fixture(scope="module")
def solved(spec):
    return ctdsl.load(spec).solve()


def _at(solution, expr, **point):
    """A form of the solution at a point: the params named, the others at their defaults."""
    env = solution.symbols.defaults()
    env.update({solution.symbols[k]: float(v) for k, v in point.items()})
    return value(expr, env)


def close(a, b, rel=1e-12):
    return math.isclose(a, b, rel_tol=rel)


def test_tp_group_of_16_across_two_nodes_and_of_8_in_one_from_one_solve(solved):
    """From the defaults' forms (tp 8: one node): at tp 16, dp 4 the ring crosses the node boundary
    over the node's 8 NICs at min(150, 8 x 12.5) = 100 GB/s: 543.6 GB a step, 5.436 s (the form of
    the defaults' layout alone would give NVLink's 150 GB/s); at tp 8 it runs on NVLink, 2 x 7/8 S a
    call, S = b s h beta, 30 layers x 6 all-reduces x 16 micro-batches."""
    r = solved.schemes["dp"]
    form = r.components[C("tensor_parallel")].expr
    assert close(_at(solved, form, ntp=16, ndp=4), tp16_bytes_per_step(4) / 100e9)
    assert _at(solved, form, ntp=16, ndp=4) == pytest.approx(5.436, rel=1e-3)
    S = 4 * s * h * beta
    assert close(_at(solved, form), L * 6 * (GLOBAL / 8 / 4) * 2 * 7 / 8 * S / NV)
    assert close(r.components[C("tensor_parallel")].value, L * 6 * (GLOBAL / 8 / 4) * 2 * 7 / 8 * S / NV)
    # tp 1: no tensor-parallel traffic at all (a tree's 2 S / W would not be 0 by itself)
    assert _at(solved, form, ntp=1, ndp=64) == 0


def test_dp_ring_members_a_node_follow_tp_and_dp(solved):
    """The data-parallel group (dp members, tp ranks apart) has min(dp, floor(8 / tp)) members a node:
    at tp 1, dp 64, 8 (the boundary over 8 NICs: 100 GB/s), 63 steps of (2P / 64); at tp 4, dp 16, 2
    (25 GB/s), 15 steps of (2P / 4) / 16; at the defaults, 1 (a GPU's own 12.5 GB/s), 7 steps of (2P / 8) / 8."""
    phase = {p.name: p.time.expr for p in solved.schemes["dp"].phases}["reduce-scatter in each dc"]
    assert close(_at(solved, phase, ntp=1, ndp=64), 63 * (2 * P / 64) / 100e9)
    assert close(_at(solved, phase, ntp=4, ndp=16), 15 * (2 * P / 4) / 16 / (2 * NIC))
    assert close(_at(solved, phase), 7 * (2 * P / 8) / 8 / NIC)


def test_auto_takes_the_ring_in_a_node_and_the_tree_across_nodes(tmp_path):
    """Latencies 5 us (NVLink) and 10 us (NIC), micro-batch 2. At tp 8 (one node) the ring,
    2 x 7 x 5 us + 2 x 7/8 S / 150 GB/s, beats the tree, 2 x 7 x 5 us + 2 S / 150 GB/s; at tp 16 the
    tree, 2 (7 x 5 us + 1 x 10 us) + 2 S / 100 GB/s, beats the ring, 2 x 15 x 10 us + 2 x 15/16 S /
    100 GB/s (tests/test_collectives.py): the defaults' solve says so at both points."""
    path = _spec(tmp_path, "lat.ct", nv_lat="5 us", nic_lat="10 us")
    sol = ctdsl.load(path, {"nmb": "2"}).solve()
    form = sol.schemes["dp"].components[C("tensor_parallel")].expr
    S = 2 * s * h * beta
    ring8 = 2 * 7 * 5e-6 + 2 * 7 / 8 * S / NV
    assert ring8 < 2 * 7 * 5e-6 + 2 * S / NV
    assert close(_at(sol, form), L * 6 * (GLOBAL / 8 / 2) * ring8)
    tree16 = 2 * (7 * 5e-6 + 1 * 10e-6) + 2 * S / 100e9
    assert tree16 < 2 * 15 * 10e-6 + 2 * 15 / 16 * S / 100e9
    assert close(_at(sol, form, ntp=16, ndp=4), L * 6 * (GLOBAL / 4 / 2) * tree16)
    # the note names the defaults' choice
    assert any(n.startswith("tp all-reduce (in one node): ring") for n in sol.schemes["dp"].timeline.notes)


def test_set_tp_1_is_the_spec_written_with_tp_1_and_the_defaults_form_there(spec, solved, tmp_path):
    """`--set tp=1` checks the spec again: its step is that of the spec written with tp = 1 (8 replicas of
    one GPU in a node), and the defaults' form at tp = 1 gives it too."""
    given = ctdsl.load(spec, {"ntp": "1"}).solve().schemes["dp"].step_time.value
    written = solve(tp=1, dp=8).step_time.value
    assert close(given, written)
    assert close(_at(solved, solved.schemes["dp"].step_time.expr, ntp=1), written)


def test_a_sweep_over_tp_agrees_with_a_solve_at_each_point(spec):
    """The numpy sweep of the defaults' forms at tp = 1, 4, 16 (dp 8: 1, 4 and 8 replicas a node; TP
    in one node, then over two) against a separate solve with `--set tp=...` at each point."""
    study = ctdsl.load(spec)
    sweep = study.sweep({"ntp": ("1", "16", 3, "log")}).to_pandas().reset_index()
    assert [round(t) for t in sweep["ntp"]] == [1, 4, 16]
    for tp, got in zip(sweep["ntp"], sweep["dp.step_s"]):
        want = ctdsl.load(spec, {"ntp": str(round(tp))}).solve().schemes["dp"].step_time.value
        assert close(got, want, rel=1e-9), (tp, got, want)


# ---- the rule: numbers where no param's range moves the layout, forms elsewhere -----------------


def test_layout_is_a_number_where_the_ranges_cannot_move_it():
    tp, dp = sp.Symbol("tp", positive=True), sp.Symbol("dp", positive=True)
    one = lambda x: DimExpr(sp.sympify(x), U.ONE)  # noqa: E731
    at = lambda x: float(x.e.subs({tp: 8, dp: 8}))  # noqa: E731
    # tp in 1..8 on nodes of 8: always one node, k = tp, no span flag
    lay = CO.layout(one(tp), one(1), one(8), at, {tp: (1, 8)})
    assert (lay.k.e, lay.span.e) == (tp, 0)
    # tp in 1..16: k = min(8, tp), spans where tp > 8
    lay = CO.layout(one(tp), one(1), one(8), at, {tp: (1, 16)})
    assert lay.k.e == sp.Min(8, tp) and not lay.span.e.is_Number
    assert [value(lay.k.e, {tp: v}) for v in (1, 8, 16)] == [1, 8, 8]
    assert [value(lay.span.e, {tp: v}) for v in (1, 8, 16)] == [0, 0, 1]
    # a data-parallel group tp = 8 ranks apart: one member a node whatever dp
    lay = CO.layout(one(dp), one(8), one(8), at, {dp: (1, 64)})
    assert lay.k.e == 1
    # ... and tp ranks apart with tp in 1..8: min(dp, floor(8 / tp))
    lay = CO.layout(one(dp), one(tp), one(8), at, {tp: (1, 8), dp: (1, 64)})
    assert [value(lay.k.e, {tp: a, dp: b}) for a, b in ((1, 64), (2, 32), (4, 16), (8, 8), (1, 4))] == [8, 4, 2, 1, 4]
    # no range: the whole form, max(1, min(n, floor(domain / stride)))
    lay = CO.layout(one(tp), one(1), one(8), at, {})
    assert [value(lay.k.e, {tp: v}) for v in (1, 4, 16)] == [1, 4, 8]


def test_gpus_per_node_moves_the_tp_group_over_nodes(tmp_path):
    """tp 8, dp 8, gpus_per_node a param (8 in 4 .. 8): at 8 the ring runs on NVLink (150 GB/s); at 4 it
    spans two nodes of 4 and crosses the boundary over the 4 members' NICs, min(150, 4 x 12.5) = 50 GB/s
    (no `nics`: each GPU's NIC share is the link's 12.5 GB/s). 2 x 7/8 S a call, S = b s h beta."""
    path = _spec(tmp_path, "gpn.ct", tp="8", dp="8", mb="4").read_text(encoding="utf-8")
    path = path.replace("gpus_per_node = 8", "gpus_per_node = gpn")
    spec = tmp_path / "gpn2.ct"
    spec.write_text("param gpn = 8 in 4 .. 8\n" + path, encoding="utf-8")
    sol = ctdsl.load(spec).solve()
    form = sol.schemes["dp"].components[C("tensor_parallel")].expr
    one = L * 6 * (GLOBAL / 8 / 4) * 2 * 7 / 8 * (4 * s * h * beta)
    assert close(_at(sol, form), one / NV)
    assert close(_at(sol, form, gpn=4), one / 50e9)
