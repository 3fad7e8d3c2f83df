"""The sweep figure draws each break-even once, and at most MAX_MARKED of them.

A spec that states the same break-even 300 times (found by the fuzz campaign:
the report's figure then had 300 labels and 300 lines of notes, and took over 10 s)
draws what the spec stating it once draws: the expected figure is the original
example's, not a number worked out by the code under test.
"""

from __future__ import annotations

from pathlib import Path

import ctdsl
from ctdsl.numeric import CompiledForms
from ctdsl.numeric.crossings import sweep_curves
from ctdsl.report.plots.curves import MAX_MARKED, CurveView

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "16_variants.ct"
LINE = "breakeven band_switch vs band_gpu over wan_bw\n"


def _view(path: Path) -> CurveView:
    sol = ctdsl.load(str(path)).solve()
    return CurveView(sol, sweep_curves(sol, CompiledForms(sol)))


def test_a_break_even_stated_many_times_is_drawn_once(tmp_path):
    original = EXAMPLE.read_text(encoding="utf-8")
    assert LINE.strip() in original  # the example states it once
    (tmp_path / "many.ct").write_text(original + LINE * 300, encoding="utf-8")
    (tmp_path / "once.ct").write_text(original, encoding="utf-8")
    once, many = _view(tmp_path / "once.ct"), _view(tmp_path / "many.ct")
    assert len(many.c.breaks) > 300  # the solver answers each statement
    assert len(once.breaks) >= 1
    assert [(b.breakeven.x, b.breakeven.y, b.x) for b in many.breaks] == [
        (b.breakeven.x, b.breakeven.y, b.x) for b in once.breaks
    ]
    assert many.notes == once.notes and many.more == 0


def test_at_most_max_marked_break_evens_are_drawn(tmp_path):
    """Distinct break-evens past MAX_MARKED are counted in one line under the plot, not drawn."""
    from ctdsl.report.plots.curves import _shown

    items = list(range(MAX_MARKED + 5)) + [0, 1]  # two repeated
    shown, more = _shown(items, lambda i: i)
    assert shown == list(range(MAX_MARKED)) and more == 5
