"""Label placement: the bounds that let it try fewer offsets never change the offset it picks.

The independent method is the exhaustive one, the placer without its bounds:
make the annotation at every offset, measure what it covers (its text and box as
matplotlib lays them out, its arrow's line), and take the first of those that
cover least. For every label of the flagship's
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
        costs.append(placer.cost_of(t, tuple(placer.ax.transData.transform((x, y))), frame))
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
        made = []  # the annotations the placer itself makes: the offsets it measures
        annotate = self.ax.annotate
        self.ax.annotate = lambda *a, **k: made.append(annotate(*a, **k)) or made[-1]
        try:
            t = place(self, x, y, text, offsets, **kw)
        finally:
            del self.ax.annotate
        seen.append((spec, text, bounds, costs, pick, offsets.index(tuple(t.xyann)), len(made)))
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
    assert any(costs[pick] > 0 for *_, costs, pick, _, _ in labels)  # and some cannot help covering a little


def test_no_bound_is_over_the_measured_cost(labels):
    for spec, text, bounds, costs, *_ in labels:
        over = [(i, b, c) for i, (b, c) in enumerate(zip(bounds, costs)) if b > c]
        assert not over, f"{spec} {text!r}: offsets whose bound is over their cost: {over}"


def test_the_offset_picked_is_the_exhaustive_choice(labels):
    for spec, text, _, costs, pick, picked, _ in labels:
        assert picked == pick, f"{spec} {text!r}: picked offset {picked}, exhaustive {pick} (costs {costs})"


def test_the_bounds_spare_most_measurements(labels):
    """What the bounds are for: fewer offsets measured than all of them (the old placer measured every one)."""
    measured = sum(made for *_, made in labels)
    assert measured < 0.25 * sum(len(bounds) for _, _, bounds, *_ in labels)
