"""Shared by the explorer's browser tests and its benchmark: Chromium through Playwright, offline.

`browser_or_skip()` launches the system's Chromium (Debian's /usr/bin/chromium,
or CTDSL_CHROMIUM) with Playwright for Python, whose driver ships with the pip
package: no browser is downloaded. Where Playwright or Chromium is missing the
caller skips with the reason. `open_page` loads a page from a file URL with
every request routed: the page itself is served, anything else is aborted, and
all of them are recorded, as are console messages and page errors.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from backstop import HANG_MS

# Without the background-networking flags Chromium opens connections of its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    env = os.environ.get("CTDSL_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def why_no_browser() -> str | None:
    """None when a browser can be driven, else why not."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; the test extra has it)"
    if find_chromium() is None:
        return "no chromium on PATH: run bash .ci/setup.d/chromium.sh (Debian's chromium), or set CTDSL_CHROMIUM"
    return None


def launch():
    """(playwright, browser): the caller stops both."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
    except Exception:
        pw.stop()
        raise
    return pw, browser


@dataclass
class Opened:
    page: object
    requests: list[str] = field(default_factory=list)  # every request the page made, the page's own first
    problems: list[str] = field(default_factory=list)  # console errors and warnings, page errors


def open_page(browser, path: Path, fragment: str = "", viewport=(1200, 2400)) -> Opened:
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.set_default_timeout(HANG_MS)  # every wait of the page: a backstop, not a measure (tests/backstop.py)
    opened = Opened(page)
    url = Path(path).resolve().as_uri()

    def route(r):
        opened.requests.append(r.request.url)
        if r.request.url.split("#")[0] == url:
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: opened.problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: opened.problems.append(f"pageerror: {e}"))
    page.on("requestfailed", lambda r: opened.problems.append(f"request failed: {r.url}"))
    page.goto(url + ("#" + fragment if fragment else ""))
    try:
        page.wait_for_function("() => window.ctdslExplorer !== undefined", timeout=HANG_MS)
    except Exception as exc:
        raise AssertionError(f"the page did not start: {opened.problems}") from exc
    return opened


FLAGSHIP = Path(__file__).resolve().parents[1] / "specs" / "llama70b_wan.ct"


def wide_spec(params: int = 20, schemes: int = 30) -> str:
    """The flagship spec widened to `params` params and `schemes` schemes (for the palette test and the
    redraw benchmark): its 4 params and 9 schemes, then more schemes of its kinds (top-k and band at
    fractions, DiLoCo at periods), each further param a fraction, a period or a count of steps one of
    them reads. Every added param has a declared range; every added scheme's label is unique."""
    assert params >= 4 and schemes >= 9
    text = FLAGSHIP.read_text(encoding="utf-8")
    extra = params - 4
    lines = []
    kinds = ("fraction", "period", "steps")
    names = []
    for k in range(extra):
        kind = kinds[k % 3]
        name = f"{kind}_{k}"
        names.append((kind, name))
        if kind == "fraction":
            lines.append(f"param {name} = 1/{8 * (1 + k % 4)} in 1/256 .. 1/2 log 9")
        elif kind == "period":
            lines.append(f"param {name} = {20 * (1 + k % 5)} in 2 .. 1000 log 9")
        else:
            lines.append(f"param {name} = {11000 + 100 * k} in 8000 .. 20000")
    blocks = []
    for j in range(schemes - 9):
        fr = [n for kd, n in names if kd == "fraction"] or ["1/16"]
        pe = [n for kd, n in names if kd == "period"] or ["100"]
        st = [n for kd, n in names if kd == "steps"] or ["12000"]
        f, h, s = fr[j % len(fr)], pe[j % len(pe)], st[j % len(st)]
        kind = j % 3
        if kind == 0:
            body = f'label = "top-k {j}"\n  payload = topk\n  fraction = {f}\n  chunk = 65536\n  collective = hier_allgather'
        elif kind == 1:
            body = f'label = "band {j}"\n  payload = band\n  fraction = {f}\n  cost = 10 FLOP/B\n  collective = hier_allreduce'
        else:
            body = f'label = "DiLoCo {j}"\n  payload = dense\n  collective = hier_allreduce\n  period = {h}\n  inner = dc'
        blocks.append(f"scheme extra_{j} {{\n  {body}\n  overlap = backward\n  steps = {s}\n}}\n")
    head, tail = text.split("\nmodel llama70b", 1)
    return head + "\n".join(lines) + "\n\nmodel llama70b" + tail.replace("\nbaseline adamw", "\n" + "\n".join(blocks) + "\nbaseline adamw", 1)
