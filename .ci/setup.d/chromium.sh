#!/usr/bin/env bash
# The explorer's browser tests (tests/test_explore_browser.py) drive Debian's
# Chromium through Playwright for Python (its driver comes with the pip package;
# no browser is downloaded). Install chromium and chromium-driver from the
# distribution where we can; elsewhere the tests skip with a stated reason.
set -u
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  echo "chromium: already installed"
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
     chromium chromium-driver >/dev/null) || echo "note: chromium not installed; the explorer's browser tests will skip"
else
  echo "note: cannot install chromium here (needs root and apt-get); the explorer's browser tests will skip"
fi
exit 0
