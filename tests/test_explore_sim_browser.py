"""`ctdsl explore --simulate` in a real browser (Chromium through Playwright, offline; see explorekit).

The expected mean comes from the page's own embedded recording, read in Python
(the measured rounds' step times weighted by their steps), not from the page's
script. Skips, with the reason, where Playwright or Chromium is missing.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import ctdsl
from explorekit import launch, open_page, why_no_browser
from backstop import HANG_MS

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
def sim_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore-sim") / "e.html"
    ctdsl.load(FLAGSHIP, {"wan_load": "0.9"}).explore(out, simulate=True)
    return out


def recorded(path: Path) -> dict:
    page = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="ct-sim">(.*?)</script>', page, re.S).group(1))


def mean_of(s: dict) -> float:
    measured = s["rounds"][s["warm"]:]
    return math.fsum(r[3] * r[2] for r in measured) / sum(r[2] for r in measured)


def test_view_plays_and_shows_the_recorded_mean(browser, sim_page):
    rec = recorded(sim_page)
    opened = open_page(browser, sim_page)
    page = opened.page
    assert page.locator("#sim canvas#sim-canvas").count() == 1
    assert page.get_attribute("#sim-canvas", "aria-label")
    assert page.locator("#sim-scheme option").count() == len(rec["schemes"])
    for j, s in enumerate(rec["schemes"]):
        page.select_option("#sim-scheme", str(j))
        shown = float(page.get_attribute("#sim-steps .sim-mean", "data-value"))
        assert shown == pytest.approx(mean_of(s), rel=1e-9)
        assert shown == pytest.approx(s["mean"], rel=1e-9)
        assert float(page.get_attribute("#sim-steps .sim-closed", "data-value")) == s["closed"]
    page.select_option("#sim-scheme", "0")
    t0 = float(page.get_attribute("#sim-now", "data-value"))
    page.click("#sim-play")
    assert page.get_attribute("#sim-play", "aria-pressed") == "true"
    page.wait_for_function(f"() => window.ctdslSim.time() > {t0}", timeout=HANG_MS)  # waits for progress, asserts no duration
    page.click("#sim-play")
    assert page.get_attribute("#sim-play", "aria-pressed") == "false"
    assert float(page.get_attribute("#sim-now", "data-value")) > t0
    assert opened.requests == [sim_page.resolve().as_uri()]
    assert opened.problems == []


def test_view_is_keyboard_operable(browser, sim_page):
    opened = open_page(browser, sim_page)
    page = opened.page
    page.focus("#sim-time")
    page.keyboard.press("Home")
    assert float(page.get_attribute("#sim-now", "data-value")) == 0
    page.keyboard.press("End")
    end = recorded(sim_page)["schemes"][0]["end"]
    assert float(page.get_attribute("#sim-now", "data-value")) == pytest.approx(end, rel=1e-12)
    page.keyboard.press("Home")
    page.focus("#sim-play")
    page.keyboard.press("Space")
    page.wait_for_function("() => window.ctdslSim.time() > 0", timeout=HANG_MS)
    page.keyboard.press("Space")
    assert page.get_attribute("#sim-play", "aria-pressed") == "false"
    assert opened.problems == []
