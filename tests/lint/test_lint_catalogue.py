"""The rule table is complete wherever it is read, and lint's modules import one way.

`rule_name("CTL001")` once was None in a fresh process until something happened to
import the rules; the registry and the rules imported each other. These tests run
a fresh interpreter, and read the import statements of the source (as the safety
scan does), so that a cycle or an import hidden in a function shows.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap

from lintkit import ROOT

LINT = ROOT / "ctdsl" / "lint"
DIAGNOSTICS = ROOT / "ctdsl" / "diagnostics"


def fresh(code: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=3600  # a backstop, not a measure: HANG of tests/backstop.py
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_rule_names_are_known_in_a_fresh_process():
    got = fresh(
        """
        import json
        from ctdsl.lint.formats import rule_name
        print(json.dumps([rule_name("CTL001"), rule_name("CTL011"), rule_name("CT202"), rule_name("CTL000")]))
        """
    )
    # names from docs/lint-rules.md and docs/diagnostics.md
    assert got == ["unused-definition", "unused-suppression", "wrong-dimension", "internal-error"]


def test_the_catalogue_is_complete_on_import():
    got = fresh(
        """
        import json
        from ctdsl.lint import catalogue
        print(json.dumps({"codes": sorted(catalogue.RULES), "six": catalogue.lookup("bit-byte-slip").code}))
        """
    )
    assert got == {"codes": [f"CTL{i:03d}" for i in range(1, 17)], "six": "CTL006"}


def test_the_renderer_imports_nothing_of_the_pipeline():
    got = fresh(
        """
        import json, sys
        import ctdsl.diagnostics
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("ctdsl"))))
        """
    )
    # a base module: it may read the table of checker codes and the version (SARIF's tool), and nothing above them
    assert [m for m in got if not m.startswith("ctdsl.diagnostics")] == ["ctdsl", "ctdsl.codes", "ctdsl.version"], got


def _imports(path) -> tuple[set[str], list[str]]:
    """(ctdsl modules imported at module level, ctdsl imports inside functions) of one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ctdsl"):
            top.add(node.module)
            top |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            top |= {a.name for a in node.names if a.name.startswith("ctdsl")}
    inner = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for fn in ast.walk(tree)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(fn)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return top, inner


def _module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_lint_and_diagnostics_modules_form_no_cycle_and_import_nothing_in_functions():
    files = sorted(LINT.rglob("*.py")) + sorted(DIAGNOSTICS.rglob("*.py"))
    names = {_module_name(p): p for p in files}
    edges: dict[str, set[str]] = {}
    hidden: list[str] = []
    for name, path in names.items():
        top, inner = _imports(path)
        edges[name] = {m for m in top if m in names and m != name}
        hidden += inner
    assert hidden == [], "imports inside functions"

    def cycle_from(start: str) -> list[str] | None:
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(edges[node]):
                if nxt == start:
                    return trail + [start]
                if nxt not in trail:
                    stack.append((nxt, trail + [nxt]))
        return None

    cycles = [c for c in (cycle_from(n) for n in sorted(names)) if c]
    assert not cycles, cycles
    # the registry does not import the rules back, and the base module never imports the linter
    assert not [m for m in edges["ctdsl.lint.registry"] if m.startswith("ctdsl.lint.rules")]
    assert not [m for n in names if n.startswith("ctdsl.diagnostics") for m in edges[n] if m.startswith("ctdsl.lint")]
