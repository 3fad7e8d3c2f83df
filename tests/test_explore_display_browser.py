"""What the explorer draws, in a real browser (Chromium through Playwright, offline; see explorekit):
curves inside their frame, ticked axes on every chart, a layout that holds at 400 px, colours that
stay distinct for any number of schemes and components, display names as math.

The checks read what the browser drew (the canvases' pixels, the elements' boxes, the rendered
MathML) and compare it with facts derived here: a flat curve's colour must show inside the frame,
tick marks must stand where the axis' labels are, no box may stick out of a 400 px window, the
colours' CIELAB distances are computed here from the colours the page shows. Skips, with the
reason, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import base64
import itertools
import math
from pathlib import Path

import pytest

import ctdsl
from explorekit import launch, open_page, why_no_browser, wide_spec

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"

_why = why_no_browser()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")


@pytest.fixture(scope="module")
def browser():
    pw, b = launch()
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def flagship_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore-display") / "explorer.html"
    ctdsl.load(FLAGSHIP).explore(out)
    return out


@pytest.fixture(scope="module")
def sim_page(tmp_path_factory):
    """The flagship at wan_load = 0.5 with a recorded run (3 measured steps: its length does not matter here)."""
    from ctdsl.simulate import trace

    path = tmp_path_factory.mktemp("explore-sim") / "sim.html"
    mp = pytest.MonkeyPatch()
    mp.setattr(trace, "MAX_STEPS", 3)
    try:
        ctdsl.load(FLAGSHIP, {"wan_load": "0.5"}).explore(path, simulate=True)
    finally:
        mp.undo()
    return path


@pytest.fixture(scope="module")
def wide_page(tmp_path_factory):
    """The flagship widened to 20 params and 30 schemes (explorekit.wide_spec)."""
    d = tmp_path_factory.mktemp("explore-wide")
    (d / "wide.ct").write_text(wide_spec(20, 30), encoding="utf-8")
    ctdsl.load(d / "wide.ct").explore(d / "wide.html")
    return d / "wide.html"


# ---- the canvas' pixels -------------------------------------------------------------------

# the pixels as base64 (a JSON array of millions of numbers took seconds a canvas to pass)
PIXELS = """(id) => { const c = document.getElementById(id), r = c.getBoundingClientRect();
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const plot = c.dataset.plot ? c.dataset.plot.split(',').map(Number) : [0, 0, r.width, r.height];
  let bin = '';
  for (let k = 0; k < d.length; k += 0x8000) bin += String.fromCharCode.apply(null, d.subarray(k, k + 0x8000));
  return { w: c.width, h: c.height, scale: c.width / r.width, plot, data: btoa(bin) }; }"""


class Canvas:
    def __init__(self, page, cid: str) -> None:
        got = page.evaluate(PIXELS, cid)
        self.w, self.h, self.scale, self.data = got["w"], got["h"], got["scale"], base64.b64decode(got["data"])
        L, T, w, h = got["plot"]  # CSS pixels
        self.plot = (L * self.scale, T * self.scale, (L + w) * self.scale, (T + h) * self.scale)  # device pixels

    def rgb(self, x: int, y: int) -> tuple[int, int, int]:
        o = 4 * (y * self.w + x)
        return self.data[o], self.data[o + 1], self.data[o + 2]

    def dark(self, x: int, y: int) -> bool:
        return 0 <= x < self.w and 0 <= y < self.h and max(self.rgb(x, y)) < 110


def hex_rgb(c: str) -> tuple[int, int, int]:
    return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)


def flat_spec(tmp_path: Path) -> Path:
    """examples/14_breakeven.ct with band's steps a param s: against s, band's time to target rises,
    and AdamW's (slower) and DeMo's (faster) are flat, the top and the bottom of the chart."""
    text = (ROOT / "examples" / "14_breakeven.ct").read_text(encoding="utf-8")
    text = text.replace("param wan_bw", "param s = 12000 in 11000 .. 17000\nparam wan_bw", 1)
    text = text.replace("fraction = 1/16\n  collective = hier_allreduce\n  steps = 10800", "fraction = 1/16\n  collective = hier_allreduce\n  steps = s", 1)
    assert "steps = s" in text
    path = tmp_path / "flat.ct"
    path.write_text(text, encoding="utf-8")
    ctdsl.load(path).explore(tmp_path / "flat.html")
    return tmp_path / "flat.html"


def test_a_flat_curve_at_the_top_or_the_bottom_is_drawn_inside_the_frame(browser, tmp_path):
    """The top and the bottom curve are flat: in the middle of the plot, each must show its colour,
    on every row where it shows at least 2 px inside the frame (a line on the frame is under it)."""
    page_path = flat_spec(tmp_path)
    ends = [ctdsl.load(tmp_path / "flat.ct", {"s": v}).solve() for v in ("11000", "17000")]
    t = {n: [e.schemes[n].time_to_target.value for e in ends] for n in ("adamw", "band", "demo")}
    assert t["adamw"][0] == t["adamw"][1] > max(t["band"]) and t["demo"][0] == t["demo"][1] < min(t["band"])  # the solver says so
    o = open_page(browser, page_path, "x=s")
    page = o.page
    flat_top, flat_bottom = [0], [2]  # adamw and demo, in the spec's order
    colours = page.evaluate("() => Array.from(document.querySelectorAll('#legend .swatch')).map((s) => getComputedStyle(s).backgroundColor)")
    cv = Canvas(page, "curve")
    x0, y0, x1, y1 = cv.plot
    for j in (flat_top[0], flat_bottom[0]):
        want = tuple(int(v) for v in colours[j][colours[j].index("(") + 1 : -1].split(","))
        x = int((x0 + x1) / 2)
        rows = [y for y in range(cv.h) if sum(abs(a - b) for a, b in zip(cv.rgb(x, y), want)) < 40]
        assert rows, j
        assert all(y0 + 2 <= y <= y1 - 2 for y in rows), (j, rows, (y0, y1))
    assert o.problems == []
    page.close()


def marks_below(cv: Canvas) -> list[int]:
    """Columns where a tick mark stands under the plot: dark pixels 2 to 4 px (device, scaled) below it."""
    x0, y0, x1, y1 = (round(v) for v in cv.plot)
    s = cv.scale
    return [x for x in range(max(0, x0 - 1), min(cv.w, x1 + 2)) if all(cv.dark(x, y1 + round(k * s)) for k in (2, 3, 4))]


def marks_left(cv: Canvas) -> list[int]:
    x0, y0, x1, y1 = (round(v) for v in cv.plot)
    s = cv.scale
    return [y for y in range(max(0, y0 - 1), min(cv.h, y1 + 2)) if all(cv.dark(x0 - round(k * s), y) for k in (2, 3, 4))]


def runs(xs: list[int]) -> int:
    """How many separate runs a sorted list of pixel positions makes (one mark is a run of 1 or 2)."""
    return sum(1 for k, x in enumerate(xs) if k == 0 or x > xs[k - 1] + 1)


def labels_under(cv: Canvas, xs: list[int]) -> bool:
    """Dark pixels (a label's text) under each mark, 8 to 22 px (CSS) below the plot."""
    x0, y0, x1, y1 = cv.plot
    s = cv.scale
    return all(any(cv.dark(x + dx, int(y1 + k * s)) for k in range(8, 22) for dx in range(-12, 13)) for x in xs)


def test_every_chart_has_ticked_axes(browser, sim_page):
    """The curves, the winner map and the recorded run's rounds: at least three tick marks below the
    plot and three left of it, each mark with its label under it, and the plot inside the canvas
    with room for them; the recorded run's timeline (its rows are queues, not a scale): its time axis."""
    o = open_page(browser, sim_page)
    for cid, y_axis in (("winner", True), ("curve", True), ("sim-rounds", True), ("sim-canvas", False)):
        cv = Canvas(o.page, cid)
        x0, y0, x1, y1 = cv.plot
        assert y1 <= cv.h - 20 * cv.scale and (x0 >= 20 * cv.scale or not y_axis), (cid, cv.plot, cv.w, cv.h)
        below, left = marks_below(cv), marks_left(cv)
        assert runs(below) >= 3 and (runs(left) >= 3 or not y_axis), (cid, below, left)
        firsts = [x for k, x in enumerate(below) if k == 0 or x > below[k - 1] + 1]
        assert labels_under(cv, firsts), cid
    assert o.problems == []
    o.page.close()


CANVAS_FONT = """() => Array.from(document.querySelectorAll('canvas')).map((c) => {
  const g = c.getContext('2d'), px = parseFloat(g.font.match(/([0-9.]+)px/)[1]);
  return [c.id, px * g.getTransform().a * c.getBoundingClientRect().width / c.width]; })"""

# Every <details> opened first. An element inside a box that scrolls sideways (an equation too long
# for the window) is the scroller's to hold: the scroller's own box is checked.
OVERFLOW = """(width) => {
  for (const d of document.querySelectorAll('details')) d.open = true;
  const out = [];
  if (document.documentElement.scrollWidth > width) out.push(['page', document.documentElement.scrollWidth]);
  const scrolls = (e) => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  for (const e of document.querySelectorAll('body *')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;  // not rendered (a hidden list)
    let up = e.parentElement;
    while (up && !scrolls(up)) up = up.parentElement;
    if (up) continue;
    if (r.left < -0.5 || r.right > width + 0.5) out.push([e.tagName, e.id || e.className || e.textContent.slice(0, 30), r.left, r.right]);
    const cs = getComputedStyle(e);
    const control = ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName);  // a control scrolls its own text
    if (!control && cs.display !== 'inline' && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 && !['auto', 'scroll'].includes(cs.overflowX))
      out.push([e.tagName, e.id || e.className || e.textContent.slice(0, 30), 'content', e.scrollWidth, e.clientWidth]);
  }
  return out;
}"""


@pytest.mark.parametrize("which", ["flagship", "simulate", "wide"])
def test_at_400_px_nothing_sticks_out_and_canvas_text_stays_readable(browser, flagship_page, wide_page, sim_page, which):
    """A 400 px wide window: no element's box reaches past either edge, no element's content is
    wider than its box (a table's cells running together, a clipped column), and every canvas
    draws its text at 11 CSS px or more."""
    path = {"flagship": flagship_page, "simulate": sim_page, "wide": wide_page}[which]
    o = open_page(browser, path, viewport=(400, 900))
    page = o.page
    assert page.evaluate(OVERFLOW, 400) == []
    fonts = page.evaluate(CANVAS_FONT)
    assert len(fonts) >= (3 if which == "simulate" else 2)
    assert all(px >= 11 for _, px in fonts), fonts
    assert o.problems == []
    page.close()


# ---- colours ------------------------------------------------------------------------------


def lab(rgb: tuple[int, int, int]) -> tuple[float, float, float]:
    """CIELAB (D65) of an sRGB colour (the CIE formulas, written out here)."""

    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in rgb)
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b, 0.2126 * r + 0.7152 * g + 0.0722 * b, 0.0193 * r + 0.1192 * g + 0.9505 * b)
    white = (0.95047, 1.0, 1.08883)
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in (v / w for v, w in zip(xyz, white))]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


SWATCHES = """(sel) => Array.from(document.querySelectorAll(sel + ' .swatch')).map((s) => {
  const m = getComputedStyle(s).backgroundColor.match(/\\d+/g).map(Number); return [m[0], m[1], m[2]]; })"""

MIN_DELTA_E = 20  # CIE76: about 2.3 is a just noticeable difference; 20 apart reads as another colour at a glance


def distinct(colours: list) -> float:
    return min(math.dist(lab(a), lab(b)) for a, b in itertools.combinations(colours, 2))


def test_thirty_schemes_thirty_colours_far_apart(browser, wide_page):
    """A page of 30 schemes: the curves' legend, the table and the winner map's legend give each
    scheme its own colour, every two at least MIN_DELTA_E apart; the step components too."""
    o = open_page(browser, wide_page)
    page = o.page
    curves = [tuple(c) for c in page.evaluate(SWATCHES, "#legend")]
    table = [tuple(c) for c in page.evaluate(SWATCHES, "#solve-body")]
    comps = [tuple(c) for c in page.evaluate(SWATCHES, "#bars-legend")]
    assert len(curves) == 30 and table == curves
    assert len(set(curves)) == 30 and distinct(curves) >= MIN_DELTA_E
    assert len(comps) >= 13 and len(set(comps)) == len(comps) and distinct(comps) >= MIN_DELTA_E
    # the curves are drawn in those colours: each shows on the canvas
    cv = Canvas(page, "curve")
    drawn = {cv.rgb(x, y) for x in range(0, cv.w, 2) for y in range(0, cv.h, 2)}
    assert sum(1 for c in curves if c in drawn) >= 25  # a few may lie under others along the whole range
    assert o.problems == []
    page.close()


def test_the_flagships_thirteen_components_have_thirteen_colours(browser, flagship_page):
    o = open_page(browser, flagship_page)
    comps = [tuple(c) for c in o.page.evaluate(SWATCHES, "#bars-legend")]
    assert len(comps) == 13 and len(set(comps)) == 13 and distinct(comps) >= MIN_DELTA_E
    o.page.close()


# ---- display names as math --------------------------------------------------------------------


def test_display_names_are_rendered_as_math(browser, flagship_page):
    """b_{\\mathrm{WAN}}: an upright WAN set as a subscript of an italic b (lower and smaller than
    it, as a browser lays out MathML); \\eta: the letter eta. No LaTeX source is shown."""
    o = open_page(browser, flagship_page)
    page = o.page
    label = page.locator("#label-0")
    assert "\\" not in label.inner_text() and "{" not in label.inner_text() and "_" not in label.inner_text().replace("wan_bw", "")
    sub = page.evaluate(
        """() => { const m = document.querySelector('#label-0 math msub'); const [b, s] = m.children;
        const rb = b.getBoundingClientRect(), rs = s.getBoundingClientRect();
        return { base: b.textContent, sub: s.textContent, baseTag: b.tagName, subTag: s.tagName,
                 lower: rs.bottom > rb.bottom, smaller: rs.height < rb.height, right: rs.left >= rb.right - 1,
                 upright: getComputedStyle(s).fontStyle !== 'italic' }; }"""
    )
    assert sub == {"base": "b", "sub": "WAN", "baseTag": "mi", "subTag": "mi", "lower": True, "smaller": True, "right": True, "upright": True}
    assert page.evaluate("() => document.querySelector('#label-2 math mi').textContent") == "\u03b7"
    assert page.evaluate("() => document.querySelector('#label-3 math msub mi').textContent") == "\u03c1"
    # the equations print a param with a display name as that name
    assert page.locator("#equations .ct-sym msub").count() > 0
    assert o.problems == []
    page.close()
