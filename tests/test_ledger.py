"""The ledger of terms (ctdsl/symbolic/ledger.py) and the keys of its components
(ctdsl/language/components.py): the composition rule against hand-composed steps, what a
term may not be, and, over every shipped spec, that the evaluated terms fold back to the
step the solver gives by the documented rule alone."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

import ctdsl
from ctdsl import units as U
from ctdsl.language.components import Charge, ComponentId, ComponentKey, Group, Place, Side, binding
from ctdsl.symbolic.dimensioned import DimExpr, DimensionError
from ctdsl.symbolic.ledger import Ledger, Term, Where

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(p.relative_to(ROOT).as_posix() for p in [*ROOT.glob("specs/*.ct"), *ROOT.glob("examples/*.ct")])
K = ComponentKey


def s(x) -> DimExpr:
    return DimExpr(sp.nsimplify(x), U.TIME)


H = DimExpr(sp.Integer(4), U.ONE)
HERE = Where(Place.GPU)


def terms() -> list[Term]:
    """compute 10 s; stragglers 0.25 s; transform 4 s per sync; a WAN phase of 6 s per sync whose
    1 s is the queueing on `wan`; overhead 2 s per sync; an inner sync's exposed 0.5 s a step."""
    return [
        Term(K.COMPUTE, s(10), Charge.STEP, HERE),
        Term(K.TRANSFORM, s(4) / H, Charge.PERIOD, HERE, amount=s(4)),
        Term(K.SYNC_ACROSS_SITES, s(5) / H, Charge.PERIOD, Where(Place.PHASE, ("wan",)), "exchange", amount=s(6)),
        Term(K.EXPOSED_SYNC, s("1/2"), Charge.STEP, Where(Place.SYNC), "inner sync"),
        Term(K.QUEUEING, s(1) / H, Charge.WITHIN, Where(Place.LINK, ("wan",)), "wan"),
        Term(K.OVERHEAD, s(2) / H, Charge.PERIOD, Where(Place.SCHEME), amount=s(2)),
        Term(K.STRAGGLERS, s("1/4"), Charge.STEP, Where(Place.BARRIER)),
    ]


def test_the_step_is_composed_by_the_rule():
    ledger = Ledger(tuple(terms()), H, overlap=False)
    # by hand: W = 10 + 0.25; C = (4 + 6 + 2) / 4 + 0.5; step = W + C = 13.75
    assert ledger.worked.e == sp.Rational(41, 4)
    assert ledger.synced.e == sp.Rational(7, 2)
    assert ledger.step().e == sp.Rational(55, 4)
    assert ledger.inner.e == 10  # the inner step leaves the stragglers out
    # the values sum to the step too: the queueing is shown apart, and not added twice
    assert sum((t.value.e for t in ledger), sp.Integer(0)) == sp.Rational(55, 4)


def test_with_overlap_the_step_is_the_larger_side():
    labels: dict = {}
    ledger = Ledger(tuple(terms()), H, overlap=True)
    step = ledger.step(labels)
    assert step.e == sp.Rational(41, 4)  # max(10.25, 3.5)
    assert labels[sp.Rational(41, 4)] == "compute" and labels[sp.Rational(7, 2)] == "transform and sync"


def test_the_per_period_terms_share_one_quotient():
    b = sp.Symbol("b", positive=True)
    wan = DimExpr(1000 / b, U.TIME)
    h = DimExpr(sp.Symbol("H", positive=True), U.ONE)
    ledger = Ledger(
        (
            Term(K.COMPUTE, s(1), Charge.STEP, HERE),
            Term(K.TRANSFORM, s(3) / h, Charge.PERIOD, HERE, amount=s(3)),
            Term(K.SYNC_ACROSS_SITES, wan / h, Charge.PERIOD, HERE, "exchange", amount=wan),
        ),
        h,
        overlap=False,
    )
    H_, = [x for x in ledger.step().e.free_symbols if x.name == "H"]
    assert ledger.step().e == 1 + (3 + 1000 / b) / H_  # (transform + sync) / H, as one quotient


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: Term(K.COMPUTE, DimExpr(sp.Integer(3), U.DATA), Charge.STEP, HERE), DimensionError),  # not a time
        (lambda: Term(K.TRANSFORM, s(1), Charge.PERIOD, HERE), ValueError),  # per period without its amount
        (lambda: Term(K.QUEUEING, s(1), Charge.WITHIN, HERE, "wan", amount=s(1)), ValueError),  # within, with an amount
        (lambda: Term(K.STRAGGLERS, s(1), Charge.PERIOD, HERE, amount=s(4)), ValueError),  # per period on the compute side
        (lambda: Term(K.QUEUEING, s(1), Charge.WITHIN, HERE), ValueError),  # a qualified key without its qualifier
        (lambda: Term(K.COMPUTE, s(1), Charge.STEP, HERE, "dc east"), ValueError),  # a plain key with one
        (lambda: Ledger((Term(K.COMPUTE, s(1), Charge.STEP, HERE),) * 2, H, False), ValueError),  # a component twice
    ],
)
def test_what_a_term_may_not_be(make, error):
    with pytest.raises(error):
        make()


def test_component_ids_and_labels():
    c = ComponentId(K.QUEUEING, "lan, wan")
    assert c.id == "queueing:lan, wan" and ComponentId.parse(c.id) == c and c.label == "queueing on lan, wan"
    p = ComponentId.parse("sync_in_site:reduce-scatter in each dc")
    assert p.key is K.SYNC_IN_SITE and p.label == "reduce-scatter in each dc" and p.group is Group.SYNC_IN_SITE
    assert ComponentId(K.EXPOSED_SYNC, "outer sync").label == "outer sync (exposed)"
    assert ComponentId(K.TENSOR_PARALLEL).id == "tensor_parallel" and ComponentId(K.TENSOR_PARALLEL).label == "tensor parallel"
    assert ComponentId(K.STRAGGLERS).side is Side.COMPUTE and ComponentId(K.OVERHEAD).side is Side.SYNC


def test_the_binding_rule():
    C = ComponentId.parse
    plain = {C("compute"): 3.0, C("sync_in_site:a"): 5.0, C("stragglers"): 1.0}
    assert binding(plain, overlap=False) == C("sync_in_site:a")  # the largest
    over = {C("compute"): 3.0, C("stragglers"): 2.5, C("sync_in_site:a"): 4.0, C("transform"): 0.5}
    assert binding(over, overlap=True) == C("compute")  # compute side 5.5 >= sync side 4.5: its largest
    assert binding({C("compute"): 0.0, C("transform"): 0.0}, overlap=False) == C("compute")  # all zero: compute
    assert binding({C("compute"): 1.0, C("sync_in_site:a"): 1.0}, overlap=False) == C("compute")  # a tie: the first


@pytest.fixture(scope="module")
def solutions():
    return {spec: ctdsl.load(ROOT / spec).solve() for spec in SPECS}


def _fold(r) -> float:
    """The step from the scheme's evaluated terms by the documented rule alone (architecture.md)."""
    added = lambda t: (t.amount if t.amount is not None else t.value).value  # noqa: E731
    worked = sum(added(t) for t in r.terms if t.side is Side.COMPUTE and t.charge is Charge.STEP)
    synced = sum(added(t) for t in r.terms if t.charge is Charge.PERIOD) / r.period
    synced += sum(added(t) for t in r.terms if t.side is Side.SYNC and t.charge is Charge.STEP)
    return max(worked, synced) if r.overlap else worked + synced


@pytest.mark.parametrize("spec", SPECS)
def test_every_reader_can_fold_the_terms_back_to_the_step(solutions, spec):
    for r in solutions[spec].schemes.values():
        assert _fold(r) == pytest.approx(r.step_time.value, rel=1e-9), (spec, r.name)
        # and without overlap the values alone sum to the step, each wait shown once
        if not r.overlap:
            assert sum(t.value.value for t in r.terms) == pytest.approx(r.step_time.value, rel=1e-9), (spec, r.name)
        assert r.binding in r.components and r.binding == binding({t.id: t.value.value for t in r.terms}, r.overlap)
