"""docs/ecosystem.md: each convention ctdsl follows is backed by tests that exist and pass.

The table lists the conventions of the issue "From install to paper" (ruff,
pre-commit, SARIF, GitHub annotations, Jupyter, pandas/pyarrow/xarray and CF,
matplotlib, siunitx/booktabs, LSP, Pygments, TextMate, Dask, Perfetto). A row
either says *pending* in both its description and its test column (its owner
fills it), or names one or more tests as `tests/FILE.py::test_name`: each must be
a test function of that file, not marked skip or xfail. The suite runs them where
they stand; they are not run a second time here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ecosystem.md"
CONVENTIONS = ["ruff", "pre-commit", "SARIF", "GitHub annotations", "Jupyter", "pandas", "pyarrow", "xarray", "CF",
               "matplotlib", "siunitx", "booktabs", "Language Server Protocol", "Pygments", "TextMate", "Dask", "Perfetto"]  # fmt: skip
TEST = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def rows() -> list[tuple[str, str, str]]:
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 3 and cells[0] not in ("convention", "---"):
            out.append((cells[0], cells[1], cells[2]))
    return out


def _marks(fn: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d) for d in fn.decorator_list}


def named_tests() -> list[tuple[str, str]]:
    return [m.groups() for _, _, test in rows() for m in TEST.finditer(test)]


def test_every_convention_has_a_row_and_each_row_a_test_or_pending():
    table = rows()
    names = " ".join(c for c, _, _ in table)
    assert [c for c in CONVENTIONS if c not in names] == []
    for convention, what, test in table:
        if what == "pending" or test == "pending":
            assert what == test == "pending", convention
        else:
            assert TEST.search(test), f"{convention}: no test named as tests/FILE.py::test_name"
            assert TEST.sub("", test).strip(" ,") == "", f"{convention}: the test column holds something else: {test}"
    assert sum(1 for _, what, _ in table if what != "pending") >= 8


def test_each_named_test_exists_and_is_not_skipped_or_xfail():
    for path, name in named_tests():
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        found = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name]
        assert found, f"no {name} in {path}"
        assert not any("skip" in m or "xfail" in m for m in _marks(found[0])), f"{path}::{name} is marked skip or xfail"
