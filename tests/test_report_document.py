"""`ctdsl report`: one self-contained HTML or Markdown file, the same bytes each run."""

from __future__ import annotations

import base64
import html as htmlmod
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = str(ROOT / "tests" / "data" / "llama70b_workers.ct")  # the single-GPU study: its figures are quoted below
runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args), env={"NO_COLOR": "1"})


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    d = tmp_path_factory.mktemp("report")
    out = {}
    for ext in ("html", "md"):
        p = d / f"report.{ext}"
        r = run("report", FLAGSHIP, "-o", str(p))
        assert r.exit_code == 0, r.stderr
        out[ext] = p.read_text(encoding="utf-8")
    return out


def _images(text: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", text)]


@pytest.mark.parametrize("ext", ["html", "md"])
def test_every_section_is_there(reports, ext):
    text = reports[ext]
    for heading in ("Summary", "Topology", "Solve tables", "Plots", "Break-even"):
        assert heading in text
    # the spec's own summary, the tables, each break-even with its LaTeX source
    assert "Llama-3-70B, data-parallel across two data centres" in text
    assert "Time and energy to target" in text and "Module stages" in text
    assert "band_switch vs adamw over wan_bw" in text
    assert text.count(r"b_{\mathrm{WAN}}^{*} =") >= 2
    assert "89.36 GB/s" in text and "3.461 GB/s" in text
    # topology and sweep figure; the two break-evens typeset: MathML in HTML, GitHub's $$ math in Markdown
    images = _images(text)
    assert len(images) == 2
    assert all(i.startswith(b"\x89PNG") for i in images)
    if ext == "html":
        assert text.count('<math display="block">') == 2


@pytest.mark.parametrize("ext", ["html", "md"])
def test_self_contained(reports, ext):
    text = reports[ext]
    assert "http://" not in text and "https://" not in text
    assert "<script" not in text and "<link" not in text
    srcs = re.findall(r'src="([^"]*)"', text) + re.findall(r"\]\(([^)]*)\)", text)
    assert srcs and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_html_is_well_formed_enough(reports):
    html = reports["html"]
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for tag in ("section", "table", "thead", "tbody", "pre", "code"):
        assert html.count(f"<{tag}") == html.count(f"</{tag}>"), tag
    # table cells are escaped text: the break-even arrows stay as text
    assert "east.tor -&gt; west.tor" in html


def test_html_break_evens_are_mathml_text(reports):
    import xml.etree.ElementTree as ET

    html = reports["html"]
    maths = re.findall(r'<math display="block">.*?</math>', html, flags=re.S)
    assert len(maths) == 2
    for m in maths:
        root = ET.fromstring(m)  # well-formed markup
        text = "".join(root.itertext())
        assert "wan_bw" in text or "wan" in text  # the break-even's param, as text a reader can select
    # the flagship's summing-switch break-even: 89.36 GB/s, its unit as text
    assert "GB/s" in "".join(ET.fromstring(maths[0]).itertext())


@pytest.mark.parametrize("ext", ["html", "md"])
def test_the_figures_notes_are_text_under_it(reports, ext):
    """What the sweep figure notes under its curves, the report gives as text after the picture, in words."""
    text = reports[ext]
    plots = text[text.index("Plots") : text.index("<h2>Break-even</h2>" if ext == "html" else "\n## Break-even")]
    # the regime change docs/sweeps.md quotes, and the two break-evens the tables give (89.36, 3.461 GB/s)
    assert "adamw: all-reduce of each shard across dcs binds below 8.049 GB/s, compute above" in plots
    assert "band_switch and adamw tie at 89.36 GB/s" in plots and "band_module and adamw tie at 3.461 GB/s" in plots
    if ext == "md":  # a numbered line is text in a bullet, not an ordered list in it
        assert "- 1\\. adamw: all-reduce" in plots


def test_the_reports_figure_is_the_sweep_figure_without_its_notes(reports):
    """The figure `ctdsl sweep --plot` draws over one param, shorter by the notes the report gives as text."""
    import ctdsl
    from ctdsl.numeric import CompiledForms
    from ctdsl.numeric.crossings import sweep_curves
    from ctdsl.report.plots import sweep_figure

    sol = ctdsl.load(FLAGSHIP).solve()
    w_plot, h_plot = sweep_figure(sol, sweep_curves(sol, CompiledForms(sol))).get_size_inches()
    png = _images(reports["md"])[1]
    w_report, h_report = int.from_bytes(png[16:20], "big") / 110, int.from_bytes(png[20:24], "big") / 110  # at 110 dpi
    assert w_report == pytest.approx(w_plot, abs=0.01)  # 11 inches wide, both
    assert h_plot - h_report > 2.0  # the notes are 14 lines under the curves


def test_markdown_tables(reports):
    md = reports["md"]
    assert "| scheme | steps | step | time to target | energy to target | time vs adamw | bytes to target | across sites | across sites vs adamw |" in md
    assert "| band_ring | 11500 | 18.81 s | **60.08 h** |" in md
    assert "\n$$\nb_{\\mathrm{WAN}}^{*} =" in md  # GitHub math


@pytest.mark.parametrize("ext", ["html", "md"])
def test_same_bytes_each_run(tmp_path, reports, ext):
    p = tmp_path / f"again.{ext}"
    assert run("report", FLAGSHIP, "-o", str(p)).exit_code == 0
    assert p.read_text(encoding="utf-8") == reports[ext]


def test_format_from_the_option(tmp_path):
    p = tmp_path / "report.txt"
    r = run("report", FLAGSHIP, "-o", str(p), "--format", "md")
    assert r.exit_code == 0 and p.read_text().startswith("# llama70b_workers.ct")


@pytest.mark.parametrize(
    "args, code",
    [
        (["-o", "report.pdf"], 2),
        (["-o", "/no/such/dir/report.html"], 2),
    ],
)
def test_report_usage_errors(tmp_path, args, code):
    r = run("report", FLAGSHIP, *args)
    assert r.exit_code == code and "Traceback" not in r.stderr


def test_report_on_a_bad_spec(tmp_path):
    bad = tmp_path / "bad.ct"
    bad.write_text("link l { bandwidth = 5 ms; latency = 1 us }\n")
    r = run("report", str(bad), "-o", str(tmp_path / "r.html"))
    assert r.exit_code == 1 and "CT202" in r.stderr and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("name", ["fig_ring_8.ct", "07_pluggable.ct", "09_three_dcs.ct"])
def test_report_for_small_examples(tmp_path, name):
    p = tmp_path / "r.md"
    r = run("report", str(ROOT / "examples" / name), "-o", str(p))
    assert r.exit_code == 0, r.stderr
    assert "## Topology" in p.read_text()


def test_markdown_math_is_github_display_blocks(tmp_path):
    """examples/18_uncertainty.ct: its three break-evens (hundreds of characters of LaTeX each) are each a `$$`
    block on lines of its own, as GitHub renders math, with the same LaTeX as the HTML report's source; no
    picture of a form (GitHub strips data: images), and every $ of spec text an entity, never math."""
    md, html = tmp_path / "u.md", tmp_path / "u.html"
    for out in (md, html):
        assert run("report", str(ROOT / "examples" / "18_uncertainty.ct"), "-o", str(out)).exit_code == 0
    text = md.read_text(encoding="utf-8")
    blocks = re.findall(r"\n\$\$\n(.*?)\n\$\$\n", text, flags=re.S)
    assert len(blocks) == 3 and all("\n" not in b and "$" not in b for b in blocks)
    sources = [htmlmod.unescape(s) for s in re.findall(r'<code class="language-latex">(.*?)</code>', html.read_text(encoding="utf-8"), flags=re.S)]
    assert blocks == sources
    assert "typeset" not in text and len(_images(text)) == 2  # topology and sweep figure only
