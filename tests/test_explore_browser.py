"""The explorer in a real browser (Chromium through Playwright), against `ctdsl solve` and `ctdsl sweep`.

The page is loaded from a file URL with every other request aborted and
recorded. The expected numbers come from outside the page: the solver, run in
this process through the API (`ctdsl.load(path, overrides).solve().to_json()`,
what `ctdsl solve --set ... --format json` prints; one point also through the
CLI itself), at random points of the param space (fixed seed), and the sweep
CLI for the winner map. The page computes with JavaScript that ctdsl printed
from the exact forms; the solver evaluates the same forms in sympy. They agree
to 1e-9 relative, or the printer or the page's scan is wrong.

Skips, with the reason, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

import ctdsl
from explorekit import launch, open_page, why_no_browser

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = ROOT / "specs" / "llama70b_wan.ct"
REL = 1e-9
POINTS = 20  # each point is a solve in this process (about 1 CPU-s)

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
    out = tmp_path_factory.mktemp("explore") / "explorer.html"
    ctdsl.load(FLAGSHIP).explore(out)
    return out


def close(a, b) -> bool:
    """Equal to 1e-9 relative; a missing value (JSON null, NaN on the page) only matches a missing one."""
    missing = lambda v: v is None or math.isnan(v)  # noqa: E731
    if missing(a) or missing(b):
        return missing(a) and missing(b)
    return a == b or abs(a - b) <= REL * max(abs(a), abs(b))


# every break-even the page lists, of schemes and of hand-offs (the serving view's), in solve's order (data-k)
BE = """Array.from(document.querySelectorAll('#be-list li[data-x], #sv-be-list li[data-x]')).map((li) => ({
    k: Number(li.dataset.k), x: li.dataset.x, y: li.dataset.y, on: li.dataset.on, roots: JSON.parse(li.dataset.roots || '[]'), text: li.textContent,
    range: li.dataset.range ? JSON.parse(li.dataset.range) : null, lo: li.dataset.lo, hi: li.dataset.hi, settled: li.dataset.settled }))
    .sort((a, b) => a.k - b.k)"""


READ = """() => {
  const num = (s) => (s === undefined ? null : Number(s));
  const rows = {};
  for (const tr of document.querySelectorAll('#solve-body tr')) {
    const r = {};
    for (const td of tr.querySelectorAll('td')) r[td.dataset.key] = td.dataset.key === 'binding' ? td.dataset.value : num(td.dataset.value);
    rows[tr.dataset.scheme] = r;
  }
  for (const row of document.querySelectorAll('#bars .bar-row')) {
    rows[row.dataset.scheme].components = Array.from(row.querySelectorAll('.seg')).map((s) => [s.dataset.key, Number(s.dataset.value)]);
    rows[row.dataset.scheme].bar_binding = row.querySelector('.bar-note').dataset.binding;
  }
  for (const m of document.querySelectorAll('#stages .module')) rows[m.dataset.scheme].module = m.dataset.binding;
  const be = @BE@;
  return { rows, be };
}""".replace("@BE@", BE)

# who is better on each side of a break-even's root, in solve's words (ctdsl.results.solution.BreakevenResult.better)
WORDS = {"time": "faster", "energy": "less energy", "cost": "cheaper", "co2e": "less CO2e", "ttft": "lower TTFT",
         "ttft_p": "lower TTFT at the percentile", "e2e": "lower end to end", "e2e_p": "lower end to end at the percentile"}


def compare_breakevens(got: list[dict], want: list[dict], where: str) -> list[str]:
    """Every break-even solve gives (of schemes, from the page's list, and of hand-offs, from the serving view's), in
    solve's order: its roots to 1e-9 and who is better on each side; with none, "never in range" and who is better over
    all of it. Of hand-offs also the range solved over (where both paths' queues settle) to 1e-9, and solve's note of
    that range (its words and figures as solve prints them)."""
    bad = []
    if [g["k"] for g in got] != list(range(len(want))):
        return [f"{where}: the page shows break-evens {[g['k'] for g in got]} of solve's {len(want)}"]
    for g, w in zip(got, want, strict=True):
        on, what = w.get("on", "time"), f"{where}: break-even {w['x']} vs {w['y']} on {w.get('on')}"
        roots = [r["value"] for r in w["roots"]]
        if (g["x"], g["y"], g["on"]) != (w["x"], w["y"], on) or len(g["roots"]) != len(roots) or not all(close(a, b) for a, b in zip(g["roots"], roots)):
            bad.append(f"{what}: page {g['x']} vs {g['y']} on {g['on']} {g['roots']}, solve {roots}")
            continue
        for r in w["roots"]:
            if f"{r['faster_below']} {WORDS[on]} below, {r['faster_above']} above" not in g["text"]:
                bad.append(f"{what}: {g['text']!r} lacks who is {WORDS[on]}")
        if not roots and "never in range" not in g["text"]:
            bad.append(f"{what}: no root, but the page says {g['text']!r}")
        if w.get("workload") is None:
            continue
        if not (len(g["range"]) == 2 and all(close(a, b) for a, b in zip(g["range"], w["range"]))):
            bad.append(f"{what}: range page {g['range']}, solve {w['range']}")
        if (g["lo"] or None, g["hi"] or None) != (w["faster_at_low_end"], w["faster_at_high_end"]):
            bad.append(f"{what}: lower at the ends page {g['lo']}, {g['hi']}, solve {w['faster_at_low_end']}, {w['faster_at_high_end']}")
        if (g["settled"] or None) != w.get("settled") or (w.get("settled") and w["settled"] not in g["text"]):
            bad.append(f"{what}: settled page {g['settled']!r}, solve {w.get('settled')!r}")
        if not roots and w["faster_at_low_end"] == w["faster_at_high_end"] and w["faster_at_low_end"] is not None \
                and f"{w['faster_at_low_end']} is {WORDS[on]} over all of it" not in g["text"]:
            bad.append(f"{what}: never ties, but the page says {g['text']!r}")
        if w["faster_at_low_end"] is None and w["reason"] not in g["text"]:  # the queues settle nowhere in the range: solve's reason
            bad.append(f"{what}: solve says {w['reason']!r}, the page {g['text']!r}")
    return bad


def shown(page) -> dict:
    return page.evaluate(READ)


def expected(path: Path, sets: dict[str, str]) -> dict:
    return ctdsl.load(path, sets).solve().to_json()


def compare(got: dict, want: dict, where: str) -> list[str]:
    bad = []

    def check(what, a, b):
        if not close(a, b):
            bad.append(f"{where}: {what}: page {a!r}, solve {b!r}")

    for s in want["schemes"]:
        row = got["rows"][s["name"]]
        n = s["name"]
        check(f"{n} step", row["step"], s["step"]["seconds"])
        check(f"{n} time to target", row["time"], s["time_to_target"])
        check(f"{n} energy to target", row["energy"], s["energy_to_target"])
        check(f"{n} energy per step", row["eps"], math.fsum(s["energy_per_step"].values()))
        check(f"{n} payload", row["payload"], s["bytes"]["payload"])
        check(f"{n} wan bytes", row["wan"], s["bytes"]["wan"])
        for comp, v in row["components"]:
            check(f"{n} component {comp}", v, s["step"]["components"][comp]["seconds"])
        if row["binding"] != s["step"]["binding"] or row["bar_binding"] != s["step"]["binding"]:
            bad.append(f"{where}: {n} binds: page {row['binding']}/{row['bar_binding']}, solve {s['step']['binding']}")
        if s["module"] is not None and row.get("module") != s["module"]["binding"]:
            bad.append(f"{where}: {n} module binds: page {row.get('module')}, solve {s['module']['binding']}")
    bad += compare_breakevens(got["be"], want["breakevens"], where)
    return bad


def random_point(rng: random.Random, params: dict) -> dict[str, float]:
    """A value per param inside its range, in its declared unit: uniform, or log-uniform for a log sweep."""
    out = {}
    for name, p in params.items():
        if p["range"] is None:  # no declared range: within a factor of 10 of the default
            lo, hi = sorted([p["value"] / 10, p["value"] * 10]) if p["value"] else (-1.0, 1.0)
        else:
            lo, hi = p["range"]
        if lo > 0 and (p["range"] is None or (p["sweep"] and p["sweep"]["spacing"] == "log")):
            v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            v = rng.uniform(lo, hi)
        scale = ctdsl.units.parse_unit(p["declared_unit"]).scale if p["declared_unit"] else 1.0
        out[name] = v / scale
    return out


def type_point(page, point: dict[str, float]) -> None:
    """Type each value into its param's numeric box (in the param's declared unit)."""
    names = page.evaluate("() => Array.from(document.querySelectorAll('#params input.num')).map((e) => e.dataset.param)")
    assert sorted(names) == sorted(point)
    for i, name in enumerate(names):
        page.fill(f"#num-{i}", repr(point[name]))


def sets_of(params: dict, point: dict[str, float]) -> dict[str, str]:
    return {n: f"{v!r} {params[n]['declared_unit']}" if params[n]["declared_unit"] else repr(v) for n, v in point.items()}


def test_offline_no_request_no_console_error_and_every_view(browser, flagship_page):
    o = open_page(browser, flagship_page)
    page = o.page
    assert o.requests == [flagship_page.resolve().as_uri()]
    assert o.problems == []
    got = shown(page)
    assert len(got["rows"]) == 9 and len(got["be"]) == 3
    assert page.locator("#bars .bar-row").count() == 9
    assert page.locator("#stages .module").count() == 1
    assert page.locator("#params input[type=range]").count() == 4
    assert page.locator("#equations math").count() == 18  # step time and time to target of 9 schemes
    assert page.locator("#map-legend li").count() >= 1
    # the curve and the map were drawn: not a blank canvas
    for cid in ("curve", "winner"):
        colours = page.evaluate(
            f"""() => {{ const c = document.getElementById('{cid}'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const s = new Set(); for (let i = 0; i < d.length; i += 4 * 97) s.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return s.size; }}"""
        )
        assert colours > 3, cid
    # the page's defaults are the solver's
    assert compare(got, expected(FLAGSHIP, {}), "defaults") == []
    page.close()


def test_twenty_random_points_match_solve(browser, flagship_page):
    o = open_page(browser, flagship_page)
    base = expected(FLAGSHIP, {})
    params = base["params"]
    rng = random.Random(20261201)
    bad = []
    for k in range(POINTS):
        point = random_point(rng, params)
        type_point(o.page, point)
        bad += compare(shown(o.page), expected(FLAGSHIP, sets_of(params, point)), f"point {k} {point}")
    assert o.problems == []
    assert bad == []
    o.page.close()


def test_one_point_against_the_cli_itself(browser, flagship_page):
    point = {"wan_bw": 3.75, "budget": 71.5, "eff": 0.55, "wan_load": 0.6}
    sets = {"wan_bw": "3.75 GB/s", "budget": "71.5 GFLOP/s", "eff": "0.55", "wan_load": "0.6"}
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", "solve", str(FLAGSHIP), "--format", "json"]
    for n, v in sets.items():
        cmd += ["--set", f"{n}={v}"]
    want = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    o = open_page(browser, flagship_page)
    type_point(o.page, point)
    assert compare(shown(o.page), want, "cli") == []
    o.page.close()


def test_winner_map_matches_the_sweep(browser, flagship_page):
    nx = ny = 9
    frag = f"p.eff=0.3&p.wan_load=0.2&mx=wan_bw&my=budget&n={nx}"
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", "sweep", str(FLAGSHIP), "-f", "json",
           "--sweep", f"wan_bw=0.1 GB/s:1000 GB/s:{nx}:log", "--sweep", f"budget=10 GFLOP/s:99 GFLOP/s:{ny}",
           "--set", "eff=0.3", "--set", "wan_load=0.2"]  # fmt: skip
    sweep = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    cols = sweep["columns"]
    ix, iy, iw = cols.index("wan_bw_B_per_s"), cols.index("budget_FLOP_per_s"), cols.index("winner")
    xs = sorted({row[ix] for row in sweep["rows"]})
    ys = sorted({row[iy] for row in sweep["rows"]})
    want = {(xs.index(row[ix]), ys.index(row[iy])): row[iw] for row in sweep["rows"]}
    assert len(want) == nx * ny
    o = open_page(browser, flagship_page, frag)
    page = o.page
    names = page.evaluate("() => Array.from(document.querySelectorAll('#solve-body tr')).map((r) => r.dataset.scheme)")
    winners = page.evaluate("() => ctdslExplorer.winners()")
    got = {(c, r): names[winners[r * nx + c]] for r in range(ny) for c in range(nx)}
    assert got == want
    assert len(set(want.values())) >= 2  # a map with regions, not one colour
    # what is drawn: the pixel at each cell's centre has one colour per winner (the plot's rectangle
    # is data-plot, in CSS pixels; the canvas holds device pixels)
    pixels = page.evaluate(
        f"""() => {{ const c = document.getElementById('winner'), out = [];
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;  // one readback
        const [L, T, w, h] = c.dataset.plot.split(',').map(Number), s = c.width / c.getBoundingClientRect().width;
        for (let r = 0; r < {ny}; r++) for (let k = 0; k < {nx}; k++) {{
          const x = Math.floor(s * (L + (k + 0.5) * w / {nx})), y = Math.floor(s * (T + ({ny} - 1 - r + 0.5) * h / {ny}));
          const o = 4 * (y * c.width + x); out.push([k, r, d[o] + ',' + d[o + 1] + ',' + d[o + 2]]); }}
        return out; }}"""
    )
    colour_of: dict[str, str] = {}
    for c, r, rgb in pixels:
        assert colour_of.setdefault(got[(c, r)], rgb) == rgb
    assert len(set(colour_of.values())) == len(colour_of)
    assert o.problems == []
    page.close()


def test_url_fragment_sets_the_state_and_follows_the_sliders(browser, flagship_page):
    o = open_page(browser, flagship_page, "p.wan_bw=20000000000&x=budget&q=energy")
    page = o.page
    assert page.input_value("#num-0") == "20"
    assert page.input_value("#x-param") == "1" and page.input_value("#quantity") == "energy"
    assert compare(shown(page), expected(FLAGSHIP, {"wan_bw": "20 GB/s"}), "fragment") == []
    page.fill("#num-2", "0.5")
    page.wait_for_function("() => location.hash.includes('p.eff=0.5&')")  # written once the moves pause
    o.page.close()


def test_sliders_work_from_the_keyboard_and_reset_returns(browser, flagship_page):
    o = open_page(browser, flagship_page)
    page = o.page
    before = page.evaluate("ctdslExplorer.values()")
    page.focus("#slider-2")  # eff: 0.2 .. 0.6 over 1000 steps
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    after = page.evaluate("ctdslExplorer.values()")
    # the slider sat at step 500 (0.4); ten steps right is step 510: 0.2 + 0.4 * 0.51
    assert after[2] == pytest.approx(0.2 + 0.4 * 0.51, rel=1e-12)
    assert page.get_attribute("#slider-2", "aria-valuetext") == "0.404"
    assert page.get_attribute("#slider-2", "aria-labelledby") == "label-2"
    page.click("#reset")
    assert page.evaluate("ctdslExplorer.values()") == before
    o.page.close()


def test_play_sweeps_the_chosen_param(browser, flagship_page):
    o = open_page(browser, flagship_page)
    page = o.page
    start = page.evaluate("ctdslExplorer.values()")[0]
    page.click("#play")
    page.wait_for_function(f"() => ctdslExplorer.values()[0] !== {start!r}")
    page.click("#play")
    assert page.get_attribute("#play", "aria-pressed") == "false"
    assert o.problems == []
    o.page.close()


def test_equations_are_mathml_with_values_on_demand(browser, flagship_page):
    o = open_page(browser, flagship_page)
    page = o.page
    first = page.locator("#equations .ct-sym").first
    assert first.evaluate("(e) => e.querySelector('mn') === null")
    page.check("#subst")
    assert page.locator("#equations .ct-sym mn").count() == page.locator("#equations .ct-sym").count()
    page.uncheck("#subst")
    assert page.locator("#equations .ct-sym mn").count() == 0
    o.page.close()


ALL = sorted(p.relative_to(ROOT).as_posix() for p in [*ROOT.glob("examples/*.ct"), *ROOT.glob("specs/*.ct")])


@pytest.mark.parametrize("rel", ALL)
def test_every_spec_and_example_starts_at_the_solvers_values(browser, tmp_path, rel):
    out = tmp_path / "e.html"
    ctdsl.load(ROOT / rel).explore(out)
    o = open_page(browser, out)
    assert compare(shown(o.page), expected(ROOT / rel, {}), rel) == []
    assert o.problems == [] and len(o.requests) == 1
    o.page.close()


@pytest.mark.parametrize("rel", ["examples/01_params.ct", "examples/12_diloco.ct", "examples/14_breakeven.ct", "examples/15_contention.ct"])
def test_other_specs_match_solve(browser, tmp_path, rel):
    path = ROOT / rel
    out = tmp_path / "e.html"
    ctdsl.load(path).explore(out)
    o = open_page(browser, out)
    base = expected(path, {})
    assert compare(shown(o.page), base, "defaults") == []
    params = {n: p for n, p in base["params"].items()}
    rng = random.Random(7)
    bad = []
    for k in range(5):
        point = random_point(rng, params)
        type_point(o.page, point)
        bad += compare(shown(o.page), expected(path, sets_of(params, point)), f"{rel} point {k}")
    assert bad == [] and o.problems == [] and len(o.requests) == 1
    o.page.close()


def test_a_count_of_sites_against_the_hand_formula(browser, tmp_path):
    """The box (and slider) of K, the number of alike sites of a dc, gives the step times derived
    by hand in tests/siteskit.py at whole numbers of sites across the range."""
    from siteskit import BREAKEVEN, step

    path = tmp_path / "sites.ct"
    path.write_text(BREAKEVEN, encoding="utf-8")
    out = tmp_path / "e.html"
    ctdsl.load(path).explore(out)
    o = open_page(browser, out)
    for K in (2, 13, 64):
        o.page.fill("#num-0", str(K))
        rows = shown(o.page)["rows"]
        assert close(rows["adamw"]["step"], step(K, 1)) and close(rows["diloco"]["step"], step(K, 20)), K
    assert o.problems == [] and len(o.requests) == 1
    o.page.close()


def test_hostile_label_is_shown_not_run(browser, tmp_path):
    text = (ROOT / "examples" / "14_breakeven.ct").read_text(encoding="utf-8")
    label = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    path = tmp_path / "hostile.ct"
    path.write_text(text.replace("scheme band {\n", f'scheme band {{\n  label = "{label}"\n'), encoding="utf-8")
    out = tmp_path / "e.html"
    ctdsl.load(path).explore(out)
    o = open_page(browser, out)
    dialogs = []
    o.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    o.page.evaluate("ctdslExplorer.update()")
    assert o.page.locator("#solve-body tr[data-scheme=band] th").inner_text().startswith(label)
    assert o.page.locator("#solve-body img").count() == 0
    assert dialogs == [] and o.problems == [] and len(o.requests) == 1
    o.page.close()


def test_controls_have_accessible_names_and_print_drops_them(browser, flagship_page):
    o = open_page(browser, flagship_page)
    page = o.page
    for name in ("wan_bw (GB/s)", "budget (GFLOP/s)", "eff", "wan_load"):
        assert page.get_by_role("slider", name=name).count() == 1, name
    assert page.get_by_role("spinbutton", name="wan_bw in GB/s").count() == 1
    assert page.get_by_role("button", name="Play").count() == 1
    assert page.is_visible("#params input[type=range]")
    page.emulate_media(media="print")
    assert not page.is_visible("#params input[type=range]") and not page.is_visible("#play")
    assert page.is_visible("#solve-table") and page.is_visible("#curve")
    o.page.close()
