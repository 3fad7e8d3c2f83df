"""`ctdsl lsp` on the command line: without its extra it says what to install (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from backstop import HANG


def test_without_pygls_it_says_what_to_install():
    code = "import sys; sys.modules['pygls'] = None; sys.argv = ['ctdsl', 'lsp']; from ctdsl.cli import main; main()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG, stdin=subprocess.DEVNULL)
    assert r.returncode == 2
    assert r.stderr == "CT890 ctdsl lsp needs pygls, which is not installed\n  = help: pip install 'ctdsl[lsp]'\n\n"


def test_help():
    code = "import sys; sys.argv = ['ctdsl', 'lsp', '--help']; from ctdsl.cli import main; main()"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG)
    assert r.returncode == 0 and "language server" in r.stdout
