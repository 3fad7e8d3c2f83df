"""The crossings the sweep figure marks (ctdsl.numeric.crossings), against what defines them.

A regime change is where two components of a scheme's step are equal; the end
of a lead is where two schemes' times to target are equal. Both are found by
bisection on the binding and winner codes, which never look at those
differences, so checking the equalities is an independent test. The bisection
itself is checked on functions whose answer is known by hand.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ctdsl
from ctdsl.numeric import CompiledForms, evaluate
from ctdsl.numeric.crossings import bisect, bisect_batched, sweep_curves, x_param, x_range

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "tests" / "data" / "llama70b_workers.ct"  # the study with single-GPU workers


@pytest.fixture(scope="module")
def flagship():
    sol = ctdsl.load(FLAGSHIP).solve()
    forms = CompiledForms(sol)
    return sol, forms, sweep_curves(sol, forms)


def test_bisect_finds_a_threshold_known_by_hand():
    # linear: the midpoints of [1, 4] home in on 3 (true below it)
    assert bisect(1.0, 4.0, lambda m: m < 3.0, log=False) == pytest.approx(3.0, rel=1e-15)
    # geometric: sqrt(a b) of [1, 100] is 10 on the first halving, then the bracket closes on 50
    assert bisect(1.0, 100.0, lambda m: m < 50.0, log=True) == pytest.approx(50.0, rel=1e-15)
    # a threshold at an end: the answer stays inside the bracket, next to it
    x = bisect(2.0, 8.0, lambda m: True, log=False)
    assert 2.0 < x <= 8.0 and x == pytest.approx(8.0, rel=1e-15)


@pytest.mark.parametrize("levels", [1, 3, 4, 7])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("a, b, t", [(1.0, 4.0, 3.0), (1.0, 100.0, 50.0), (2.0, 8.0, 9.0), (2.0, 8.0, 1.0),
                                     (1e8, 1.0000001e8, 1.00000005e8), (3.0, 3.0000000000000004, 3.0000000000000002)])
def test_batched_bisection_answers_what_one_halving_at_a_time_does(a, b, t, log, levels):
    """Bit for bit, on thresholds inside, beyond either end and among the last floats of a bracket."""
    asked = []

    def many(ms):
        asked.append(len(ms))
        return ms < t

    assert bisect_batched(a, b, many, log, levels) == bisect(a, b, lambda m: m < t, log)
    assert all(n == 2**levels - 1 for n in asked[:-1])  # each call answers `levels` halvings


def test_the_flagship_curves_run_over_the_wan_bandwidth(flagship):
    sol, forms, c = flagship
    assert c.param.name == "wan_bw" and x_param(sol.spec) is c.param
    assert (c.lo, c.hi) == x_range(c.param, None) == (1e8, 1e12)  # 0.1 .. 1000 GB/s in the spec
    assert c.logx and c.to_target
    assert c.xs[0] == c.lo and c.xs[-1] == pytest.approx(c.hi, rel=1e-15)
    assert list(c.ranked) == [s for s, sf in forms.schemes.items() if sf.has_steps]


def test_each_regime_change_is_where_two_components_are_equal(flagship):
    sol, forms, c = flagship
    assert len(c.changes) == 7  # one per scheme that changes regime in 0.1 .. 1000 GB/s
    for ch in c.changes:
        at = evaluate(forms, {"wan_bw": np.array([ch.x])})
        before = at.values[(ch.scheme, "component:" + ch.before.id)][0]
        after = at.values[(ch.scheme, "component:" + ch.after.id)][0]
        assert before == pytest.approx(after, rel=1e-9), ch
        assert at.values[(ch.scheme, "time_to_target")][0] == ch.y


def test_each_lead_ends_where_the_two_leaders_tie(flagship):
    sol, forms, c = flagship
    assert [l.scheme for l in c.leads] == ["diloco", "band_ring"]
    assert c.leads[0].lo == c.lo and c.leads[-1].hi == pytest.approx(c.hi, rel=1e-15)
    for first, then in zip(c.leads, c.leads[1:]):
        assert first.hi == then.lo
        x = first.hi
        at = evaluate(forms, {"wan_bw": np.array([x * (1 - 1e-6), x, x * (1 + 1e-6)])})
        a, b = at.values[(first.scheme, "time_to_target")], at.values[(then.scheme, "time_to_target")]
        assert a[1] == pytest.approx(b[1], rel=1e-9)
        assert a[0] < b[0] and b[2] < a[2]  # each leads on its own side


def test_a_narrow_axis_gives_a_linear_curve_and_no_roots_outside_it(flagship):
    sol, forms, _ = flagship

    class Narrow:  # what the CLI passes: the --sweep axis of the plotted param
        lo, hi, count = 20e9, 30e9, 5

    c = sweep_curves(sol, forms, Narrow)
    assert (c.lo, c.hi) == (20e9, 30e9) and not c.logx  # 30 / 20 < 20: linear spacing
    assert np.allclose(np.diff(c.xs), (30e9 - 20e9) / 800)
    assert c.breaks == ()  # the roots are at 3.46 and 89.4 GB/s
    assert len(c.leads) == 1 and c.leads[0].scheme == "band_ring"


def test_the_figure_draws_the_data_it_is_given(flagship, tmp_path):
    from ctdsl.report.plots import sweep_figure

    sol, _, c = flagship
    fig = sweep_figure(sol, c)
    fig.canvas.draw()
    full = [t.get_text() for t in fig.axes[0].texts]
    assert sum(t.isdigit() for t in full) == 7  # the numbered regime changes
    bare = sweep_figure(sol, replace(c, breaks=(), changes=()))
    bare.canvas.draw()
    texts = [t.get_text() for t in bare.axes[0].texts]
    assert not any(t.isdigit() for t in texts) and not any(" = " in t for t in texts)
    # the notes lose the 7 changes and their heading, and the 2 roots under their heading; they keep
    # "band_ring and adamw never tie", now under a plain "Break-even" heading: 10 lines of 0.22 in fewer
    assert math.isclose(fig.get_figheight() - bare.get_figheight(), 0.22 * (7 + 1 + 2 + 1 - 1), rel_tol=1e-12)


def test_the_flagships_crossings_are_those_of_one_halving_at_a_time(flagship):
    """Each regime change and each end of a lead, bisected one point at a time on the compiled forms, is the same float."""
    sol, forms, c = flagship

    def at(m):
        return evaluate(forms, {c.param.name: np.array([m])})

    assert c.changes and len(c.leads) > 1
    for ch in c.changes:
        j = int(np.searchsorted(c.xs, ch.x)) - 1
        code = forms.schemes[ch.scheme].components.index(ch.before)
        assert bisect(c.xs[j], c.xs[j + 1], lambda m: int(at(m).binding[ch.scheme][0]) == code, c.logx) == ch.x
    for lead, nxt in zip(c.leads, c.leads[1:]):
        j = int(np.searchsorted(c.xs, lead.hi)) - 1
        code = c.ranked.index(lead.scheme)
        assert bisect(c.xs[j], c.xs[j + 1], lambda m: int(at(m).winner[0]) == code, c.logx) == lead.hi == nxt.lo
