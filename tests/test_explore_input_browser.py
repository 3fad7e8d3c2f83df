"""The explorer's input in a real browser (Chromium through Playwright, offline; see explorekit):
values checked as `ctdsl solve --set` checks them, whole numbers, the URL fragment, reset.

The expected diagnostics come from the CLI itself: `ctdsl solve SPEC --set name=value` run
in-process (typer's runner, the command's own output), parsed into (place, code, severity,
message, help). The page must show, at the box, the same for the same value, and must not draw
with a value the CLI refuses. Skips, with the reason, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ctdsl
from ctdsl.cli import app
from explorekit import launch, open_page, why_no_browser
from test_explore_browser import compare, expected, shown

ROOT = Path(__file__).resolve().parents[1]
FLAGSHIP = "specs/llama70b_wan.ct"
runner = CliRunner()

_why = why_no_browser()
pytestmark = pytest.mark.skipif(_why is not None, reason=_why or "")


@pytest.fixture(scope="module")
def browser():
    pw, b = launch()
    yield b
    b.close()
    pw.stop()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Each spec's page, written once (the spec named as the CLI is given it: relative to the root)."""
    out = tmp_path_factory.mktemp("explore-input")
    made = {}

    def page(rel: str) -> Path:
        if rel not in made:
            made[rel] = out / (Path(rel).stem + ".html")
            ctdsl.load(rel).explore(made[rel])
        return made[rel]

    return page


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # spans name the spec as given: relative to the root, as the CLI below


_DIAG = re.compile(r"^(?P<at>\S.*?:\d+:\d+): (?P<code>CT\d{3}) (?:\[(?P<sev>warning)\] )?(?P<text>.*)$")


def cli_diagnostics(rel: str, name: str, value: str) -> tuple[int, list[tuple]]:
    """(exit code, [(place, code, severity, message, help)]) of `ctdsl solve REL --set name=value`."""
    r = runner.invoke(app, ["solve", rel, "--set", f"{name}={value}", "--format", "json"])
    out, diags = r.output.splitlines(), []
    for k, line in enumerate(out):
        m = _DIAG.match(line)
        if not m:
            continue
        nxt = next((j for j in range(k + 1, len(out)) if _DIAG.match(out[j])), len(out))
        helps = [h.split("= help: ", 1)[1] for h in out[k + 1 : nxt] if "= help: " in h]
        diags.append((m["at"], m["code"], m["sev"] or "error", m["text"], helps[0] if helps else None))
    return r.exit_code, diags


READ_DIAGS = """(i) => Array.from(document.querySelectorAll('#diag-' + i + ' li')).map((li) => [
  li.querySelector('.at').textContent, li.dataset.code, li.dataset.severity, li.querySelector('.text').textContent,
  li.querySelector('.help') ? li.querySelector('.help').textContent.replace(/^help: /, '') : null])"""


def box_of(page, name: str) -> int:
    names = page.evaluate("() => Array.from(document.querySelectorAll('#params input.num')).map((e) => e.dataset.param)")
    return names.index(name)


# (spec, param, the value as typed in the box in the param's declared unit, as given to --set)
BAD = [
    (FLAGSHIP, "eff", "-0.5", "-0.5"),
    (FLAGSHIP, "eff", "1.5", "1.5"),
    (FLAGSHIP, "eff", "0", "0"),
    (FLAGSHIP, "wan_load", "1", "1"),
    (FLAGSHIP, "wan_load", "-0.125", "-0.125"),
    (FLAGSHIP, "wan_bw", "-1", "-1 GB/s"),
    (FLAGSHIP, "wan_bw", "0", "0 GB/s"),
    (FLAGSHIP, "budget", "-12.125", "-12.125 GFLOP/s"),
    ("examples/20_sites.ct", "n_sites", "2.5", "2.5"),
    ("examples/20_sites.ct", "n_sites", "0", "0"),
    ("examples/20_sites.ct", "n_sites", "1", "1"),
    ("examples/12_diloco.ct", "H", "0.5", "0.5"),
    ("examples/12_diloco.ct", "H", "-3", "-3"),
    ("specs/llama405b_3dc.ct", "zr_links", "2.5", "2.5"),
    ("specs/llama405b_3dc.ct", "zr_links", "0.4", "0.4"),
    ("specs/llama405b_3dc.ct", "eff", "1.0000001", "1.0000001"),
]


def test_bad_values_are_refused_at_the_box_with_the_clis_diagnostics(browser, pages):
    """Each value the CLI refuses: the box shows the CLI's diagnostics (place, code, message, help),
    is marked invalid, and the page keeps drawing the values it had."""
    opened = {}
    bad = []
    for rel, name, typed, given in BAD:
        code, want = cli_diagnostics(rel, name, given)
        assert code == 1 and want and all(d[2] == "error" for d in want), (rel, name, given, want)
        if rel not in opened:
            opened[rel] = open_page(browser, pages(rel))
        page = opened[rel].page
        i = box_of(page, name)
        before = page.evaluate("ctdslExplorer.values()")
        table = shown(page)
        page.fill(f"#num-{i}", typed)
        got = [tuple(d) for d in page.evaluate(READ_DIAGS, i)]
        if sorted(got) != sorted(want):
            bad.append(f"{rel} {name}={given}: page {got}, cli {want}")
        assert page.get_attribute(f"#num-{i}", "aria-invalid") == "true"
        assert page.evaluate("ctdslExplorer.values()") == before  # not taken
        assert shown(page) == table  # nothing redrawn with it
    assert bad == []
    for o in opened.values():
        assert o.problems == [] and len(o.requests) == 1
        o.page.close()


def test_a_value_outside_the_declared_range_is_taken_with_the_clis_warning(browser, pages):
    code, want = cli_diagnostics(FLAGSHIP, "wan_bw", "5000 GB/s")
    assert code == 0 and [d[1:3] for d in want] == [("CT311", "warning")]
    o = open_page(browser, pages(FLAGSHIP))
    o.page.fill("#num-0", "5000")
    assert [tuple(d) for d in o.page.evaluate(READ_DIAGS, 0)] == want
    assert o.page.get_attribute("#num-0", "aria-invalid") == "false"
    assert o.page.evaluate("ctdslExplorer.values()")[0] == 5e12  # taken, and drawn: the solver's numbers
    assert compare(shown(o.page), expected(ROOT / FLAGSHIP, {"wan_bw": "5000 GB/s"}), "5 TB/s") == []
    o.page.fill("#num-0", "12.5")
    assert o.page.evaluate(READ_DIAGS, 0) == []
    assert o.problems == []
    o.page.close()


def test_a_bad_value_in_the_fragment_is_refused_at_the_box(browser, pages):
    _, want = cli_diagnostics(FLAGSHIP, "wan_load", "1.5")
    o = open_page(browser, pages(FLAGSHIP), "p.wan_load=1.5&p.eff=0.5")
    page = o.page
    values = page.evaluate("ctdslExplorer.values()")
    assert values[3] == 0.0 and values[2] == 0.5  # the good one taken, the bad one not
    assert [tuple(d) for d in page.evaluate(READ_DIAGS, 3)] == want
    assert page.input_value("#num-3") == "1.5" and page.get_attribute("#num-3", "aria-invalid") == "true"
    assert compare(shown(page), expected(ROOT / FLAGSHIP, {"eff": "0.5"}), "fragment") == []
    assert o.problems == []
    page.close()


def test_two_and_a_half_sites_are_refused_not_rounded(browser, pages):
    """From the box and from the fragment: CT305, as the CLI says, and the sites stay whole."""
    rel = "examples/20_sites.ct"
    _, want = cli_diagnostics(rel, "n_sites", "2.5")
    assert [d[1] for d in want] == ["CT305"]
    o = open_page(browser, pages(rel), "p.n_sites=7.4")
    page = o.page
    assert page.evaluate("ctdslExplorer.values()")[0] == 4  # the start: 7.4 refused
    assert [d[1] for d in page.evaluate(READ_DIAGS, 0)] == ["CT305"]
    page.fill("#num-0", "2.5")
    assert [tuple(d) for d in page.evaluate(READ_DIAGS, 0)] == want
    assert page.evaluate("ctdslExplorer.values()")[0] == 4
    page.fill("#num-0", "13")
    assert page.evaluate("ctdslExplorer.values()")[0] == 13 and page.evaluate(READ_DIAGS, 0) == []
    assert compare(shown(page), expected(ROOT / rel, {"n_sites": "13"}), "13 sites") == []
    o.page.close()


def test_arrow_keys_step_a_whole_number_slider_by_whole_numbers(browser, pages):
    """n_sites (2 .. 64, log): from Home, each ArrowRight is the next whole number, 2, 3, ... 64.
    zr_links (8 .. 1024, log) at its default 64: ArrowRight is 65, ArrowLeft twice 63; a step
    of 1/1000 of the log range (a factor 128^(1/1000), 0.3 at 64) rounded back never moved."""
    o = open_page(browser, pages("examples/20_sites.ct"))
    page = o.page
    page.focus("#slider-0")
    page.keyboard.press("Home")
    seen = [page.evaluate("ctdslExplorer.values()")[0]]
    for _ in range(62):
        page.keyboard.press("ArrowRight")
        seen.append(page.evaluate("ctdslExplorer.values()")[0])
    assert seen == list(range(2, 65))
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("ctdslExplorer.values()")[0] == 63
    assert page.input_value("#num-0") == "63"
    o.page.close()
    o = open_page(browser, pages("specs/llama405b_3dc.ct"))
    page = o.page
    i = box_of(page, "zr_links")
    page.focus(f"#slider-{i}")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("ctdslExplorer.values()")[i] == 65
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("ctdslExplorer.values()")[i] == 63
    assert compare(shown(page), expected(ROOT / "specs/llama405b_3dc.ct", {"zr_links": "63"}), "63 links") == []
    assert o.problems == []
    o.page.close()


@pytest.mark.parametrize("rel", ["examples/12_diloco.ct", "examples/14_breakeven.ct", "examples/03_model_params.ct", FLAGSHIP])
def test_reset_returns_every_view_to_the_start(browser, pages, rel):
    """On pages with 1, 1, 0 and 4 params: move a slider and type a value (and a refused one),
    then Reset: no error, every value, box, slider and the table back at the start (the solver's
    defaults)."""
    o = open_page(browser, pages(rel))
    page = o.page
    start = page.evaluate("ctdslExplorer.values()")
    boxes = page.evaluate("() => Array.from(document.querySelectorAll('#params input')).map((e) => e.value)")
    if start:
        page.focus("#slider-0")
        for _ in range(30):
            page.keyboard.press("ArrowRight")
        page.fill(f"#num-{len(start) - 1}", "-1")  # refused by every param of these specs
        assert page.evaluate("ctdslExplorer.values()") != start
    page.click("#reset")
    assert o.problems == []
    assert page.evaluate("ctdslExplorer.values()") == start
    assert page.evaluate("() => Array.from(document.querySelectorAll('#params input')).map((e) => e.value)") == boxes
    assert page.locator(".diags li").count() == 0 and page.locator("[aria-invalid=true]").count() == 0
    assert compare(shown(page), expected(ROOT / rel, {}), f"{rel} after reset") == []
    o.page.close()


PROTO = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype"]


@pytest.mark.parametrize("key", ["q", "x", "mx", "my", "n", "p.__proto__", "p.constructor", "__proto__", "constructor"])
def test_a_fragment_of_prototype_keys_changes_nothing(browser, pages, key):
    """`#q=constructor` and the like: ignored; the curves and the map are drawn, as at the start."""
    frag = "&".join(f"{key}={v}" for v in PROTO)
    o = open_page(browser, pages(FLAGSHIP), frag)
    page = o.page
    assert o.problems == []
    assert page.input_value("#quantity") == "time" and page.input_value("#x-param") == "0"
    assert page.evaluate("ctdslExplorer.values()") == [12.5e9, 50e9, 0.4, 0.0]
    for cid in ("curve", "winner"):
        colours = page.evaluate(
            f"""() => {{ const c = document.getElementById('{cid}'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const s = new Set(); for (let i = 0; i < d.length; i += 4 * 97) s.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]); return s.size; }}"""
        )
        assert colours > 3, cid
    assert compare(shown(page), expected(ROOT / FLAGSHIP, {}), frag) == []
    o.page.close()


def test_numbers_are_printed_as_the_cli_prints_them(browser, pages):
    """The page's messages print a value as ctdsl.units.format_quantity and Python's "{:g}" do: the
    same text for 3,000 values of every magnitude and sign, and for the ties that a browser's own
    rounding (toFixed, toExponential: half up) gets wrong where Python rounds half to even."""
    import random

    from ctdsl import units as U

    rng = random.Random(29)
    values = [0.0, -0.0, 12.125, 0.125, 2.5, 1234565.0, 0.0001234565, 9.9995, 999.95, 99995.0, 1e21, 5e-324, 1.7976931348623157e308]
    values += [k / 8 for k in range(-40, 41)] + [k + 0.5 for k in range(-20, 20)]
    values += [rng.choice([-1, 1]) * 10 ** rng.uniform(-15, 22) for _ in range(3000)]
    values += [round(v, rng.randint(0, 6)) for v in values[-600:]]
    dims = [U.TIME, U.DATA, U.RATE, U.ONE, U.ENERGY, U.MONEY_PER_DATA]
    o = open_page(browser, pages(FLAGSHIP))
    got = o.page.evaluate(
        "([vs, dims]) => vs.map((v) => [ctdslExplorer.g(v), ...dims.map((d) => ctdslExplorer.format(v, d))])",
        [values, [list(d.exps) for d in dims]],
    )
    bad = []
    for v, row in zip(values, got):
        want = [f"{v:g}", *(U.format_quantity(v, d) for d in dims)]
        if row != want:
            bad.append((v, row, want))
    assert bad == []
    o.page.close()
