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


LONG_NAMES = ROOT / "tests" / "fuzz" / "crashes" / "valueerror_report_plots_figure_box_long_names.ct"


def _wide_names(tmp_path) -> Path:
    """The long-names case with its two scheme names made of the widest letter (W, 1 em against
    the 0.5-0.6 em of a and b): 63 characters each."""
    text = LONG_NAMES.read_text(encoding="utf-8")
    for name in ("a" * 50, "b" * 50):
        text = text.replace(name, "W" * 60 + name[:3])
    path = tmp_path / "wide.ct"
    path.write_text(text, encoding="utf-8")
    return path


def _tick_boxes(fig, ax, dpi: float = 110.0) -> list[tuple[str, float, float]]:
    """Each y tick label of `ax` as drawn (Agg, at the report's dpi): (text, left, right) in inches."""
    fig.set_dpi(dpi)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    out = []
    for t in ax.get_yticklabels():
        if t.get_text():
            box = t.get_window_extent(renderer)
            out.append((t.get_text(), box.x0 / dpi, box.x1 / dpi))
    return out


def test_label_columns_share_a_row_in_inches():
    """Beside the stages panel the two label columns may take 11 - 0.3 - 3.2 - 0.5 - 2.0 - 0.6 = 4.4 in
    (the figure's width less its margins, the stages panel and the bars' 2 in): both whole when they
    fit, else the narrower whole where it takes at most half, the rest to the other (by hand)."""
    from ctdsl.report.plots.figure import label_share

    assert label_share(1.0, 2.0, 4.4) == (1.0, 2.0)  # both fit: untouched
    assert label_share(3.0, 3.0, 4.4) == (2.2, 2.2)
    assert label_share(1.0, 4.0, 4.4) == pytest.approx((1.0, 3.4))  # the narrower whole, the rest to the other
    assert label_share(4.0, 1.0, 4.4) == pytest.approx((3.4, 1.0))


@pytest.mark.parametrize("wide", [False, True], ids=["a-and-b", "W"])
def test_long_names_beside_the_module_stages_stay_inside_the_figure(tmp_path, wide):
    """Two module schemes of long names (the campaign's crash, tests/fuzz/crashes/
    valueerror_report_plots_figure_box_long_names.ct, and the same with names of W). The label columns
    were sized at 0.085 in a character, which is low for any but narrow letters: the names' tick labels,
    as Agg draws them, started 0.22 in left of the figure's edge (1.42 in with W). Now each column is
    as wide as its widest label measured, the labels clipped to what the column may take: every label
    lies inside the figure, the stage labels right of the bars, and the bars keep their 2 in."""
    _, fig = figure_of(_wide_names(tmp_path) if wide else LONG_NAMES)
    curve, notes, bars, stages = fig.axes
    names, labels = _tick_boxes(fig, bars), _tick_boxes(fig, stages)
    bars_right = bars.get_window_extent(fig.canvas.get_renderer()).x1 / fig.dpi
    assert min(left for _, left, _ in names) >= 0.0, names
    assert min(left for _, left, _ in labels) >= bars_right, (labels, bars_right)
    assert bars.get_position().width * fig.get_size_inches()[0] >= 2.0 - 1e-9
    assert all(t.endswith("\u2026") and len(t) >= 10 for t, _, _ in names + labels)  # clipped, not to nothing


@pytest.mark.parametrize("panel", ["steps", "stages"])
@pytest.mark.parametrize("wide", [False, True], ids=["a-and-b", "W"])
def test_long_names_fit_a_column_wide_panel(tmp_path, panel, wide):
    """`sweep --plot f.png --figure steps --size column` of the long-names case stopped with an internal
    error: the labels' column, 0.6 em a character of the unclipped names, was wider than the 3.5 in
    figure. The column now takes at most half the figure, the labels clipped to it, each inside it."""
    from ctdsl.report.plots.panels import panel_figure

    sol = ctdsl.load(_wide_names(tmp_path) if wide else LONG_NAMES).solve()
    fig = panel_figure(sol, panel, "column")
    (ax,) = fig.axes
    boxes = _tick_boxes(fig, ax)
    assert len(boxes) == (2 if panel == "steps" else 6)
    assert min(left for _, left, _ in boxes) >= 0.0, boxes
    assert max(right for _, _, right in boxes) <= ax.get_window_extent(fig.canvas.get_renderer()).x0 / fig.dpi
