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
    """The flagship's page at 90% WAN load with its recording. 6 measured steps, not 20: what these
    tests read (the schemes, the rounds, the means, playing) does not depend on the run's length, and a
    dense scheme's step at this load is minutes of simulated time (10.8 -> 4.9 CPU-s)."""
    from ctdsl.simulate import trace

    out = tmp_path_factory.mktemp("explore-sim") / "e.html"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(trace, "MAX_STEPS", 6)
        ctdsl.load(FLAGSHIP, {"wan_load": "0.9"}).explore(out, simulate=True)
    return out


def recorded(path: Path) -> dict:
    page = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="ct-sim">(.*?)</script>', page, re.S).group(1))


def mean_of(s: dict) -> float:
    """The mean step of the measured rounds of the page's embedded recording (simview.py's format:
    rounds as whole ticks, the first start then each round's length; `per`, the steps of each)."""
    lengths = s["rounds"][1:]
    per = s["per"] if isinstance(s["per"], list) else [s["per"]] * len(lengths)
    measured = list(zip(lengths, per))[s["warm"]:]
    return math.fsum(d * s["tick"] for d, _ in measured) / sum(m for _, m in measured)


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
        assert shown == s["mean"]  # the run's own mean, what ctdsl simulate reports for the seed
        assert shown == pytest.approx(mean_of(s), rel=1e-5)  # the rounds drawn: whole ticks, a millionth of the run
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
    s0 = recorded(sim_page)["schemes"][0]
    end = s0["end"] * s0["tick"]  # whole ticks
    assert float(page.get_attribute("#sim-now", "data-value")) == pytest.approx(end, rel=1e-12)
    page.keyboard.press("Home")
    page.focus("#sim-play")
    page.keyboard.press("Space")
    page.wait_for_function("() => window.ctdslSim.time() > 0", timeout=HANG_MS)
    page.keyboard.press("Space")
    assert page.get_attribute("#sim-play", "aria-pressed") == "false"
    assert opened.problems == []


@pytest.mark.parametrize("load", ["0.3", "0.6", "0.9"])
def test_the_closed_form_shown_is_what_solve_prints(browser, tmp_path, monkeypatch, load):
    """Each scheme's closed-form step time, as a number and as text, is `ctdsl solve --set
    wan_load=LOAD`'s (its JSON's step, printed as its tables print a time), whatever the run."""
    from typer.testing import CliRunner

    from ctdsl import units as U
    from ctdsl.cli import app
    from ctdsl.simulate import trace

    r = CliRunner().invoke(app, ["solve", str(FLAGSHIP), "--set", f"wan_load={load}", "--format", "json"])
    assert r.exit_code == 0
    want = {s["name"]: s["step"]["seconds"] for s in json.loads(r.output)["schemes"]}
    monkeypatch.setattr(trace, "MAX_STEPS", 2)  # the closed form does not depend on the run's length
    out = tmp_path / "e.html"
    ctdsl.load(FLAGSHIP, {"wan_load": load}).explore(out, simulate=True)
    opened = open_page(browser, out)
    page = opened.page
    names = [s["name"] for s in recorded(out)["schemes"]]
    assert sorted(names) == sorted(want)
    for j, name in enumerate(names):
        page.select_option("#sim-scheme", str(j))
        assert float(page.get_attribute("#sim-steps .sim-closed", "data-value")) == want[name]
        text = page.text_content("#sim-steps .sim-closed")
        shown = re.match(r"closed form (\S+ \S+?),? ", text + " ")
        assert shown and shown.group(1) == U.format_quantity(want[name], U.TIME), (name, text)
    assert opened.problems == []
    page.close()
