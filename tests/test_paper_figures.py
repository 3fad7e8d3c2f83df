"""Figures for papers: one panel per figure at a size preset, and a winner map over two params.

- The winner map's regions are the `winner` column of `ctdsl sweep` on the same
  grid (read back from the CSV the CLI writes, a separate path through the code).
- A two-axis sweep with --plot draws the map, not the one-axis figure.
- Panels are compared with committed baselines (tests/baselines/, looked at when
  they were made) by matplotlib's image comparison with a tolerance, so that a
  change in layout shows up; `CTDSL_UPDATE_BASELINES=1` rewrites them.
- A PNG is as wide as its size preset at 150 dpi; a PDF embeds its fonts.
"""

from __future__ import annotations

import csv
import io
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.numeric import CompiledForms
from ctdsl.numeric.crossings import sweep_curves
from ctdsl.numeric.grid import Axis
from ctdsl.numeric.winnermap import winner_map
from ctdsl.report.plots import save
from ctdsl.report.plots.panels import SIZES, panel_figure

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
BASELINES = ROOT / "tests" / "baselines"
TOLERANCE = 2.0  # RMS difference in grey levels (0-255) that font rasterising may cause between machines


def run(*args: str):
    r = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


@pytest.fixture(scope="module")
def sol():
    return ctdsl.load(FLAGSHIP).solve()


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    return struct.unpack(">II", head[16:24])


def test_winner_map_regions_are_the_sweeps_winner_column(sol, tmp_path):
    forms = CompiledForms(sol)
    x, y = Axis("wan_bw", 0.1e9, 1000e9, 30, "log"), Axis("wan_load", 0.0, 0.9, 10)
    wm = winner_map(forms, x, y)
    out = tmp_path / "grid.csv"
    run("sweep", FLAGSHIP, "--sweep", "wan_load=0:0.9:10", "--sweep", "wan_bw=0.1 GB/s:1000 GB/s:30:log", "-o", str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 300
    names = [(wm.ranked[c] if c >= 0 else "") for c in wm.winner.reshape(-1).tolist()]
    assert names == [r["winner"] for r in rows]  # wan_load slow, wan_bw fast in both
    assert len(set(names)) >= 2  # the map has regions to tell apart


def test_two_axis_plot_draws_the_map(tmp_path):
    one, two = tmp_path / "one.png", tmp_path / "two.png"
    run("sweep", FLAGSHIP, "--sweep", "wan_bw", "--plot", str(one))
    run("sweep", FLAGSHIP, "--sweep", "wan_bw", "--sweep", "wan_load=0:0.95:40", "--plot", str(two))
    assert one.read_bytes() != two.read_bytes()
    w1, h1 = png_size(one)
    w2, h2 = png_size(two)
    assert (w2, h2) != (w1, h1)  # the map is a figure of its own, not the three panels


def test_several_panels_go_to_several_files_at_the_preset_width(tmp_path):
    run("sweep", FLAGSHIP, "--plot", str(tmp_path / "fig.png"), "--figure", "time", "--figure", "steps", "--size", "column")
    for panel in ("time", "steps"):
        w, _ = png_size(tmp_path / f"fig-{panel}.png")
        assert w == round(SIZES["column"] * 150)  # 3.5 in at 150 dpi
    assert not (tmp_path / "fig.png").exists()


def test_pdf_embeds_its_fonts(tmp_path):
    out = tmp_path / "t.pdf"
    run("sweep", FLAGSHIP, "--plot", str(out), "--figure", "time")
    data = out.read_bytes()
    assert b"/FontFile2" in data  # TrueType fonts embedded (pdf.fonttype 42), not referenced


def test_figure_options_are_checked():
    bad = CliRunner().invoke(app, ["sweep", FLAGSHIP, "--plot", "x.png", "--figure", "winner"])
    assert bad.exit_code == 2 and "--sweep twice" in bad.output
    bad = CliRunner().invoke(app, ["sweep", FLAGSHIP, "--plot", "x.png", "--figure", "time", "--size", "poster"])
    assert bad.exit_code == 2 and "column, page, slide" in bad.output


def _compare(fig, name: str, tmp_path: Path) -> None:
    from matplotlib.testing.compare import compare_images

    actual = tmp_path / name
    save(fig, str(actual), "png")
    expected = BASELINES / name
    if os.environ.get("CTDSL_UPDATE_BASELINES") == "1" or not expected.exists():
        expected.write_bytes(actual.read_bytes())
        if os.environ.get("CTDSL_UPDATE_BASELINES") != "1":
            pytest.fail(f"no baseline {expected.name}: written now, look at it and commit it")
    diff = compare_images(str(expected), str(actual), tol=TOLERANCE)
    assert diff is None, diff


@pytest.mark.parametrize("panel, size", [("time", "column"), ("steps", "page"), ("stages", "page"), ("winner", "column")])
def test_panels_match_their_baselines(sol, tmp_path, panel, size):
    forms = CompiledForms(sol)
    curves = sweep_curves(sol, forms)
    wm = winner_map(forms, Axis("wan_bw", 0.1e9, 1000e9, 80, "log"), Axis("wan_load", 0.0, 0.95, 40))
    fig = panel_figure(sol, panel, size, "paper", curves=curves, wmap=wm)
    _compare(fig, f"{panel}_{size}.png", tmp_path)
    assert np.isfinite(fig.get_size_inches()).all()


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("style", ["paper", "screen"])
def test_the_winner_maps_legend_is_whole_on_the_figure(sol, size, style):
    # the flagship's own default sweep (wan_bw log 41 by budget lin 10): four schemes win somewhere,
    # so the legend has a second row; every entry must lie on the figure, under the x label
    wm = winner_map(CompiledForms(sol), Axis("wan_bw", 0.1e9, 1000e9, 41, "log"), Axis("budget", 10e9, 99e9, 10))
    won = {wm.ranked[c] for c in np.unique(wm.winner) if c >= 0}
    assert len(won) >= 4
    fig = panel_figure(sol, "winner", size, style, wmap=wm)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert sorted(t.get_text() for t in legend.get_texts()) == sorted(won)
    page = fig.bbox
    under = ax.xaxis.label.get_window_extent(r)
    for t in legend.get_texts():
        box = t.get_window_extent(r)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 and page.y0 <= box.y0 and box.y1 <= page.y1, t.get_text()
        assert box.y1 <= under.y0, t.get_text()  # under the x label, not over it
