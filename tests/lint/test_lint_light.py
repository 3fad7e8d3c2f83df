"""`ctdsl lint` on its import path: what a pre-commit hook needs installed.

A fresh interpreter runs `ctdsl lint` over the specs and examples and lists the
third-party packages it imported. The back ends' libraries (sympy, numpy,
matplotlib, scipy, mpmath, simpy) and the editor's (pygls, lsprotocol, pygments)
must not be among them: lint needs only lark, networkx, typer (with typer's
own dependencies) and pathspec, which is what a light hook environment installs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from lintkit import ROOT

NEVER = {"sympy", "numpy", "matplotlib", "scipy", "mpmath", "simpy", "pygls", "lsprotocol", "cattrs", "pygments"}


def test_lint_imports_only_its_own_dependencies():
    code = textwrap.dedent(
        """
        import json, sys
        sys.argv = ["ctdsl", "lint", "specs/", "examples/", "tests/lint/bad_everything.ct", "-q", "--statistics"]
        from ctdsl.cli import main
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        tops = sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names))
        print(json.dumps({"code": code, "modules": tops}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=3600)  # a backstop, not a measure: HANG of tests/backstop.py
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["code"] == 1, "bad_everything.ct has errors: the rules ran"
    imported = set(result["modules"])
    assert imported & NEVER == set()
    assert {"ctdsl", "lark", "networkx", "typer"} <= imported
