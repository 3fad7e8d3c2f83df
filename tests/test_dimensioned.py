"""Units through the back end: every cost term carries its dimension, and a formula
that adds, compares or maxes two different dimensions fails when it is built."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

import ctdsl
from ctdsl import units as U
from ctdsl.symbolic import dimensioned as D
from ctdsl.symbolic import transform as TR
from ctdsl.symbolic.dimensioned import DimensionError, DimExpr

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(ROOT.glob("specs/*.ct")) + sorted(ROOT.glob("examples/*.ct"))

b = sp.Symbol("b", positive=True)
T = DimExpr(sp.Integer(3), U.TIME)
BYTES = DimExpr(sp.Integer(8), U.DATA)
RATE = DimExpr(b, U.RATE)


def test_products_and_quotients_combine_dimensions():
    assert (BYTES / RATE).dim == U.TIME
    assert (BYTES / T).dim == U.RATE
    assert (RATE * T).dim == U.DATA
    assert (2 * T).dim == U.TIME and (T / 2).dim == U.TIME
    assert (BYTES / RATE).e == 8 / b


@pytest.mark.parametrize(
    "make",
    [
        lambda: T + BYTES,
        lambda: BYTES - T,
        lambda: D.emax(T, BYTES / T),
        lambda: D.emin(RATE, T),
        lambda: D.total([T, BYTES], U.TIME),
        lambda: T + 1,  # a plain non-zero number is dimensionless
        lambda: D.ceiling(T),
    ],
)
def test_mixing_dimensions_fails_loudly(make):
    with pytest.raises(DimensionError):
        make()


def test_a_plain_zero_is_the_empty_sum():
    assert (T + 0) is T and (0 + T) is T
    assert sum([T, T]).e == 6 and sum([T, T]).dim == U.TIME


# what each output of a scheme is, by definition (docs/solve-json.md), not read from the code
EXPECTED = {
    "dense": U.DATA,
    "payload": U.DATA,
    "up": U.DATA,
    "wire": U.DATA,
    "wan": U.DATA,
    "step_time": U.TIME,
    "time_to_target": U.TIME,
    "energy_per_step": U.ENERGY,
    "energy_to_target": U.ENERGY,
    "transform": U.TIME,
}


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_every_output_has_its_dimension(path):
    sol = ctdsl.load(path).solve()
    for r in sol.schemes.values():
        for name, dim in EXPECTED.items():
            q = getattr(r, name)
            if q is not None:
                assert q.dim == dim, (r.name, name)
        assert all(q.dim == U.TIME for q in r.components.values())
        assert all(q.dim == U.ENERGY for q in r.energy_parts.values())
        for ph in r.phases:
            assert ph.time.dim == ph.step_time.dim == ph.latency.dim == U.TIME
            for lu in ph.links:
                assert (lu.nbytes.dim, lu.bandwidth.dim, lu.time.dim) == (U.DATA, U.RATE, U.TIME)
        if r.module is not None:
            assert all(st.rate.dim == U.RATE and st.time.dim == U.TIME for st in r.module.stages)
            assert r.module.stream.dim == U.DATA
            if r.module.budget_per_byte is not None:
                assert r.module.budget_per_byte.dim == U.OPS_PER_DATA


def test_a_dimensionally_wrong_cost_formula_fails(monkeypatch):
    """Drop the peak FLOP/s from the GPU roofline: the 'time' is then FLOPs, and the
    step time's sum refuses it."""

    def wrong(ctx, scheme, dense, labels):
        return ctx.field(scheme, "cost") * dense  # FLOP/B x B = FLOP, not seconds

    monkeypatch.setattr(TR, "_on_gpu", wrong)
    with pytest.raises(DimensionError):
        ctdsl.load(ROOT / "specs/llama70b_wan.ct").solve()


def test_the_model_formulas_are_dimension_checked_too(monkeypatch):
    """The payload formulas run in the dimensioned algebra: bytes per value plus a
    parameter count is refused."""
    from ctdsl.model import payload as PL

    def wrong(model, A=PL.Exprs):
        return A.get(model, "bytes_per_value") + A.get(model, "params")

    monkeypatch.setattr(PL, "dense_bytes", wrong)
    with pytest.raises(DimensionError):
        ctdsl.load(ROOT / "specs/llama70b_wan.ct").solve()


def test_the_kv_cache_per_token_is_bytes_by_its_formula():
    sol = ctdsl.load(ROOT / "examples/fig_kv_handoff.ct").solve()
    m = next(iter(sol.models.values()))
    assert m.kv_per_token.dim == U.DATA and m.kv_handoff.dim == U.DATA
    assert m.flops_per_step is None or m.flops_per_step.dim == U.OPS


@pytest.mark.parametrize(
    "other",
    [
        sp.Max(b, 2 * b + 1) / (1 - b) + 7,  # finite or unknown: sympy's 0 * x is 0
        b + sp.oo,  # holds an infinity: sympy's 0 * x is NaN
        sp.zoo * b,
        sp.nan,
    ],
)
def test_a_zero_factor_gives_what_sympy_gives(other):
    """The zero short-cut of DimExpr.__mul__ agrees with sympy's own Mul, both ways round."""
    zero, x = DimExpr(sp.Integer(0), U.POWER), DimExpr(other, U.TIME)
    assert (zero * x).e == sp.Mul(sp.Integer(0), other) and (x * zero).e == sp.Mul(other, sp.Integer(0))
    assert (zero * x).dim == U.ENERGY


def test_a_zero_factor_times_a_plain_number():
    """A count a caller gives as a Python int (queueing's burst of n transfers) multiplies as before
    the zero short-cut: it crashed with AttributeError ('int' has no 'has') when the other factor
    was zero."""
    assert (DimExpr(sp.Integer(0), U.TIME) * 4).e == 0
    assert (DimExpr(4, U.TIME) * DimExpr(sp.Integer(0), U.ONE)).e == 0
