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
