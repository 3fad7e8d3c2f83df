"""Label placement: the bounds that let it try fewer offsets never change the offset it picks.

The independent method is the exhaustive one, the placer as it was: make the
annotation at every offset, measure it as matplotlib does (text, bbox and arrow),
and take the first of those that cover least. For every label of the flagship's
sweep figure and of the examples', each offset's bound must be no more than that
measured cost, and the offset `Placer.place` picks must be the exhaustive choice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ctdsl
from ctdsl.numeric import CompiledForms
from ctdsl.numeric.crossings import sweep_curves
from ctdsl.report.plots import placement as P
from ctdsl.report.plots.figure import sweep_figure

ROOT = Path(__file__).resolve().parents[1]
SPECS = ["specs/llama70b_wan.ct", "examples/14_breakeven.ct", "examples/12_diloco.ct", "examples/09_three_dcs.ct"]


def _exhaustive(placer, x, y, text, offsets, kw):
    """(cost of each offset, measured on the annotation itself; the first offset of least cost)."""
    frame = placer.ax.get_window_extent(placer.renderer)
    costs = []
    for dx, dy in offsets:
        ha, va = P._align(dx, dy)
        t = placer.ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, **kw)
        costs.append(placer._cost(t.get_window_extent(placer.renderer).padded(2), frame))
        t.remove()
    return costs, costs.index(min(costs))


@pytest.fixture(scope="module")
def labels():
    """For each label drawn: (spec, text, bounds, exhaustive costs, exhaustive pick, offset picked)."""
    seen = []
    place = P.Placer.place

    def checked(self, x, y, text, offsets=P.OFFSETS, **kw):
        frame = self.ax.get_window_extent(self.renderer)
        bounds = self._bounds(x, y, text, offsets, kw, frame)
        costs, pick = _exhaustive(self, x, y, text, offsets, kw)
        t = place(self, x, y, text, offsets, **kw)
        seen.append((spec, text, bounds, costs, pick, offsets.index(tuple(t.xyann))))
        return t

    P.Placer.place = checked
    try:
        for spec in SPECS:
            sol = ctdsl.load(str(ROOT / spec)).solve()
            sweep_figure(sol, sweep_curves(sol, CompiledForms(sol)))
    finally:
        P.Placer.place = place
    return seen


def test_there_are_labels_to_place(labels):
    assert len(labels) >= 10  # the flagship alone has break-evens and numbered regime changes
    assert any(costs[pick] > 0 for *_, costs, pick, _ in labels)  # and some cannot help covering a little


def test_no_bound_is_over_the_measured_cost(labels):
    for spec, text, bounds, costs, *_ in labels:
        over = [(i, b, c) for i, (b, c) in enumerate(zip(bounds, costs)) if b > c]
        assert not over, f"{spec} {text!r}: offsets whose bound is over their cost: {over}"


def test_the_offset_picked_is_the_exhaustive_choice(labels):
    for spec, text, _, costs, pick, picked in labels:
        assert picked == pick, f"{spec} {text!r}: picked offset {picked}, exhaustive {pick} (costs {costs})"


def test_the_bounds_spare_most_measurements(labels):
    """What the bounds are for: fewer offsets measured than all of them (the old placer measured all 22).

    A label's arrow ends on its own mark, a heavy obstacle, so the slack of the
    bound at the arrow's tip weighs: with 0.2 px of it about half the offsets were
    still measured, with TIP_SLACK (0.02 px, twice matplotlib's bisection
    tolerance) a few per label.
    """
    tried = 0
    for *_, bounds, costs, pick, _ in labels:
        best = costs[pick]
        tried += sum(1 for b in bounds if b <= best)  # an offset whose bound is over the least cost is skipped
    assert tried < 0.25 * sum(len(b) for _, _, b, *_ in labels)
