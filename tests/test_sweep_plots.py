"""`ctdsl sweep --plot`: the figure is written, byte for byte the same each run, with no date in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctdsl import units as U
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from ctdsl.numeric import CompiledForms
from ctdsl.numeric.crossings import sweep_curves
from ctdsl.report.plots import save, sweep_figure

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "specs" / "llama70b_wan.ct")
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), env={"NO_COLOR": "1"})


@pytest.fixture(scope="module")
def figures(tmp_path_factory):
    """Each format drawn twice by the CLI."""
    d = tmp_path_factory.mktemp("plots")
    out = {}
    for ext in ("png", "svg", "pdf"):
        pair = []
        for name in ("a", "b"):
            p = d / f"{name}.{ext}"
            r = run("sweep", FLAGSHIP, "--plot", str(p))
            assert r.exit_code == 0, r.stderr
            assert r.stdout == ""  # --plot without -o writes only the figure
            pair.append(p.read_bytes())
        out[ext] = pair
    return out


@pytest.mark.parametrize("ext, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_plot_formats_are_deterministic(figures, ext, magic):
    a, b = figures[ext]
    assert a.startswith(magic)
    assert a == b


@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_no_dates_or_versions_in_the_files(figures, ext):
    import matplotlib

    data = figures[ext][0]
    assert matplotlib.__version__.encode() not in data
    assert b"CreationDate" not in data and b"<dc:date>" not in data


def test_plot_is_identical_in_a_fresh_process(tmp_path, figures):
    there = tmp_path / "there.png"
    p = subprocess.run(
        [sys.executable, "-c", "from ctdsl.cli import main; main()", "sweep", FLAGSHIP, "--plot", str(there)],
        capture_output=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert there.read_bytes() == figures["png"][0]


def test_plot_and_data_together(tmp_path):
    r = run("sweep", FLAGSHIP, "--plot", str(tmp_path / "f.png"), "-o", "-", "--sweep", "wan_bw=1 GB/s:2 GB/s:2")
    assert r.exit_code == 0
    assert r.stdout.startswith("wan_bw_B_per_s,") and len(r.stdout.splitlines()) == 3


def figure_of(path):
    sol = ctdsl.load(path).solve()
    return sol, sweep_figure(sol, sweep_curves(sol, CompiledForms(sol)))


def test_figure_panels_and_labels():
    sol, fig = figure_of(FLAGSHIP)
    fig.canvas.draw()
    texts = [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for ax in fig.axes for t in ax.get_children() if hasattr(t, "get_text")]
    joined = "\n".join(texts)
    # the break-evens, labelled with their values (solve's table: 79.23 GB/s and 29.63 GB/s)
    for b in sol.breakevens:
        (root,) = b.roots
        assert f"{b.x} = {b.y}\n{U.format_quantity(root.value, b.dim)}" in joined
    assert "band_switch = adamw\n79.23 GB/s" in joined and "band_module = adamw\n29.63 GB/s" in joined
    curve, notes, bars, stages = fig.axes
    assert curve.get_xscale() == "log" and curve.get_yscale() == "log"
    assert "GB/s" in curve.get_xlabel() and "(h)" in curve.get_ylabel()
    assert "(s)" in bars.get_xlabel() and "(ms)" in stages.get_xlabel()  # the module stages take 220 ms to 1.8 s
    assert [t.get_text() for t in bars.get_yticklabels()] == list(sol.schemes)
    assert [t.get_text() for t in stages.get_yticklabels()] == ["port", "optics", "compute", "fpga"]
    assert any("bottleneck" in t.get_text() for t in stages.texts)
    legend = notes.get_legend()
    assert [t.get_text().split(":")[0] for t in legend.get_texts()] == list(sol.schemes)


WORKERS = str(ROOT / "tests" / "data" / "llama70b_workers.ct")  # the single-GPU study, its figure's texts quoted below


def test_labels_in_the_flagships_curve_panel_do_not_overlap():
    # three break-evens (30, 82 and 89 GB/s) where the curves meet at the bottom right
    test_labels_in_the_curve_panel_do_not_overlap(FLAGSHIP)


def _drawn_labels(ax, renderer):
    """Each text of the panel as drawn: its box (text and its rounded box) and its arrow's path, in display px."""
    from matplotlib.text import Text
    from matplotlib.transforms import Bbox

    out = []
    for t in ax.texts:
        box = Text.get_window_extent(t, renderer)
        if t.get_bbox_patch() is not None:
            box = Bbox.union([box, t.get_bbox_patch().get_window_extent(renderer)])
        arrow = getattr(t, "arrow_patch", None)
        path = arrow.get_path().transformed(arrow.get_transform()) if arrow is not None and arrow.get_visible() else None
        out.append((t.get_text(), box, path))
    return out


def test_labels_in_the_curve_panel_do_not_overlap(spec=WORKERS):
    # what is drawn, after drawing: no two labels' boxes overlap, no arrow crosses another label's box
    # (the rectangle around a long diagonal arrow is not ink: it may hold another label)
    _, fig = figure_of(spec)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    curve = fig.axes[0]
    frame = curve.get_window_extent(r)
    labels = _drawn_labels(curve, r)
    assert len(labels) >= 2 + 7  # the default marker, two break-evens, seven regime numbers
    for i, (text, box, arrow) in enumerate(labels):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, text
        for other, obox, _ in labels[i + 1 :]:
            assert not box.overlaps(obox), (text, other)
        for j, (other, obox, _) in enumerate(labels):
            assert j == i or arrow is None or not arrow.intersects_bbox(obox, filled=False), (text, other)


def test_a_spec_without_a_module_or_ranges_still_plots(tmp_path):
    _, fig = figure_of(ROOT / "examples" / "fig_ring_8.ct")
    save(fig, str(tmp_path / "x.png"))
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")


def test_long_names_beside_the_module_stages_leave_the_bars_their_width():
    """Two module schemes of 50-character names (the campaign's crash, tests/fuzz/crashes/
    valueerror_report_plots_figure_box_long_names.ct): names and "scheme: stage" labels clip at 40
    characters, 0.085 in each, which took 2 x (0.3 + 3.4) in of a row of 11 - 0.3 - 3.2 - 0.5 in and
    left the bars -0.4 in. The two columns now share (11 - 0.3 - 3.2 - 0.5 - 2.0 - 0.6) / 0.085 =
    51 characters: 25 for the names (half of it, rounded down), 26 for the labels, and the bars
    keep 11 - 0.3 - (0.3 + 25 x 0.085) - 3.2 - (0.3 + 26 x 0.085) - 0.5 = 2.065 in."""
    from ctdsl.report.plots.figure import label_share

    assert label_share(14, 20, 51) == (14, 20)  # both fit: untouched
    assert label_share(40, 40, 51) == (25, 26)
    assert label_share(10, 48, 51) == (10, 41)  # the shorter kept whole, the rest to the other
    assert label_share(48, 10, 51) == (41, 10)
    path = ROOT / "tests" / "fuzz" / "crashes" / "valueerror_report_plots_figure_box_long_names.ct"
    _, fig = figure_of(path)
    curve, notes, bars, stages = fig.axes
    width = fig.get_size_inches()[0]
    assert bars.get_position().width * width == pytest.approx(2.065, abs=1e-9)
    assert max(len(t.get_text()) for t in bars.get_yticklabels()) == 25
    assert max(len(t.get_text()) for t in stages.get_yticklabels()) == 26
