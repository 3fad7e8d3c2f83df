"""Figures as a paper prints them (issue 30): the step-time legend keeps every entry at column width,
a winner map's edges follow the break-even curve (not the grid's cells), a default --plot whose
second axis changes no winner draws the curves and says why, and three swept params with --plot
are refused with CT490, never drawn over two."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.numeric.winnermap import WinnerMap
from ctdsl.report.plots.canvas import new_figure
from ctdsl.report.plots.panels import panel_figure
from ctdsl.report.plots.winner import winner_panel

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()


def test_step_legend_keeps_every_entry_at_column_width():
    """The flagship's step panel at column width (3.5 in): each legend entry, "sync exposed" among
    them, lies inside the figure (three entries a row at 9.5 pt ran past its right edge)."""
    sol = ctdsl.load(FLAGSHIP).solve()
    fig = panel_figure(sol, "steps", "column")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = fig.axes[0].get_legend().get_texts()
    labels = [t.get_text() for t in texts]
    assert "sync exposed" in labels and "binds the step" in labels
    from matplotlib.text import Text

    (title,) = [c for c in fig.axes[0].get_children() if isinstance(c, Text) and c.get_text().startswith("Step time")]
    for t in [*texts, title]:  # the title too ("by component" was cut at the edge)
        box = t.get_window_extent(renderer)
        assert 0 <= box.x0 and box.x1 <= fig.bbox.width, (t.get_text(), box.x1, fig.bbox.width)


def test_winner_map_edge_follows_the_break_even_line():
    """Two schemes on a 7 x 7 grid, x and y in 0 .. 6: T_a = x + 1, T_b = y / 2 + 2, which tie on the
    line x = y / 2 + 1 (by hand). The drawn edge's points lie on it to a tenth of a cell (measured: 0.05,
    from interpolating ln T linearly between the points); the contour of the winner's codes, the edge
    drawn before, put them up to half a cell off (measured: 0.5), in steps."""
    from ctdsl import units as U

    xs = ys = np.arange(7.0)
    X, Y = np.meshgrid(xs, ys)
    times = np.stack([X + 1.0, Y / 2 + 2.0])
    winner = np.argmin(times, axis=0).astype(np.int16)

    class P:
        def __init__(self, name):
            self.name, self.dim = name, U.Dim()

    wm = WinnerMap(P("x"), P("y"), xs, ys, False, False, winner, ("a", "b"), times)
    fig = new_figure(4.0, 4.0)
    ax = fig.add_axes([0.1, 0.3, 0.8, 0.6])
    winner_panel(ax, wm)
    points = np.concatenate([p.vertices for c in ax.collections if hasattr(c, "levels") for p in c.get_paths() if len(p.vertices)])
    assert len(points) > 10
    off = np.abs(points[:, 0] - (points[:, 1] / 2 + 1))
    assert off.max() < 0.1, off.max()


def _csv(args) -> list[dict]:
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    return list(csv.DictReader(io.StringIO(r.stdout)))


def test_default_plot_draws_a_winner_map_only_where_the_second_axis_changes_the_winner(tmp_path):
    """The README's `ctdsl sweep specs/llama70b_wan.ct --plot out.png` sweeps wan_bw and budget. The sweep's
    own data (its winner column) show budget changes no winner at any wan_bw; the figure is then the
    curves over wan_bw, and the command says why."""
    rows = _csv(["sweep", FLAGSHIP])
    by_bw = defaultdict(set)
    for row in rows:
        by_bw[row["wan_bw_B_per_s"]].add(row["winner"])
    assert len(by_bw) == 41 and all(len(w) == 1 for w in by_bw.values())  # budget never changes the winner
    assert len({w for ws in by_bw.values() for w in ws}) > 1  # wan_bw does
    r = runner.invoke(app, ["sweep", FLAGSHIP, "--plot", str(tmp_path / "out.png")])
    assert r.exit_code == 0, r.output
    assert "note: budget changes no winner over its range (wan_bw alone changes it)" in r.stderr
    assert (tmp_path / "out.png").stat().st_size > 0


def test_three_swept_params_with_plot_are_refused_with_ct490(tmp_path):
    out = tmp_path / "out.png"
    r = runner.invoke(app, ["sweep", FLAGSHIP, "--sweep", "wan_bw=1 GB/s:100 GB/s:3", "--sweep", "eff=0.2:0.6:3",
                            "--sweep", "budget=10 GFLOP/s:90 GFLOP/s:3", "--plot", str(out)])  # fmt: skip
    assert r.exit_code == 1, r.output
    assert "CT490" in r.stderr and "3 are swept: wan_bw, eff, budget" in r.stderr
    assert not out.exists()
