"""Every third-party module the package imports is declared in pyproject.toml.

The scan reads the syntax tree of every module under ctdsl/ (as
tests/test_architecture.py does) and finds every import, at module level and
inside functions. A third-party module (not the standard library's, not ctdsl's)
must be

- in `dependencies`, what a plain `pip install ctdsl` brings, or
- a module of an optional extra (`ctdsl.extras.EXTRAS`, which must agree with
  pyproject.toml's `optional-dependencies`), imported inside a function (through
  `ctdsl.extras.require`, which names the extra in a CT890 diagnostic when it is
  missing), or at module level only in a module that nothing in ctdsl imports at
  module level, or
- the library whose plugin a module is (`ctdsl.highlight`, Pygments' lexer entry
  point, is loaded only by Pygments itself).

A module is mapped to its distribution by importlib.metadata (this environment
has every extra installed). The behavioural half: with an extra's module hidden,
the command that needs it exits 2 with CT890 and the `pip install` that brings
it, and `ctdsl search` runs without scipy (it crashed on a plain install).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backstop import HANG
from ctdsl.cli import app
from ctdsl.extras import EXTRAS, MissingExtra

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    """`dask[distributed]>=2024.1` -> `dask`, normalised as PEP 503 does."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group(0)).lower()


DEPENDENCIES = {_name(r) for r in PYPROJECT["dependencies"]}
OPTIONAL = {extra: {_name(r) for r in reqs} for extra, reqs in PYPROJECT["optional-dependencies"].items()}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def scan() -> list[tuple[str, str, int, bool]]:
    """(importing module, imported module, line, inside a function) for every import under ctdsl/."""
    out = []
    for path in sorted((ROOT / "ctdsl").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        mod = _module(path)

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                if isinstance(child, ast.Import):
                    out.extend((mod, a.name, child.lineno, in_function) for a in child.names)
                elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                    out.append((mod, child.module, child.lineno, in_function))
                visit(child, inner)

        visit(tree, False)
    return out


@pytest.fixture(scope="module")
def imports() -> list[tuple[str, str, int, bool]]:
    """`scan()`, once, on the worker that runs these tests (not at collection, on every worker)."""
    return scan()


@pytest.fixture(scope="module")
def third_party(imports) -> list[tuple[str, str, int, bool]]:
    return [i for i in imports if i[1].split(".")[0] not in sys.stdlib_module_names | {"ctdsl", "__future__"}]


def _entry_point_plugins() -> dict[str, str]:
    """ctdsl module -> the library whose entry point loads it (`pygments.lexers` -> pygments)."""
    out = {}
    for group, points in PYPROJECT.get("entry-points", {}).items():
        for target in points.values():
            out[target.split(":")[0]] = group.split(".")[0]
    return out


def test_the_scan_sees_the_imports_it_should(third_party):
    """Not vacuous: the scan finds a module-level and a function-level third-party import it must judge."""
    assert any(m.startswith("ctdsl.syntax") and i.startswith("lark") and not f for m, i, _, f in third_party)
    assert any(i == "pyarrow" and f for _, i, _, f in third_party)
    assert any(i.startswith("pygls") and not f for _, i, _, f in third_party)


def test_the_extras_table_agrees_with_pyproject():
    for module, (extra, dist) in EXTRAS.items():
        assert extra in OPTIONAL, f"{module}: no extra {extra!r} in pyproject.toml"
        assert _name(dist) in OPTIONAL[extra], f"{module}: {dist} is not in the {extra} extra"
        assert _name(dist) not in DEPENDENCIES, f"{dist} is a dependency; it needs no extra"


def test_every_runtime_import_is_declared(imports, third_party):
    dists = packages_distributions()
    plugins = _entry_point_plugins()
    lazy_only = {m for m, i, _, f in imports if i.split(".")[0] in EXTRAS and not f}  # modules that import an extra's module at their top
    wrong = []
    for mod, imported, line, in_function in third_party:
        top = imported.split(".")[0]
        names = {_name(d) for d in dists.get(top, [top])}
        where = f"{mod}:{line} imports {imported}"
        if names & DEPENDENCIES:
            continue
        if plugins.get(mod) == top:
            continue  # the library loads this module itself, through its entry point
        if top in EXTRAS:
            if _name(EXTRAS[top][1]) not in names:
                wrong.append(f"{where}: ctdsl.extras says {EXTRAS[top][1]}, installed as {sorted(names)}")
            continue
        wrong.append(f"{where}: {sorted(names)} is in no dependency nor extra of pyproject.toml")
    # a module that imports an extra at its top is itself imported only inside functions
    for mod, imported, line, in_function in imports:
        if imported in lazy_only and not in_function and mod != imported:
            wrong.append(f"{mod}:{line} imports {imported} (which needs an extra) at module level")
    assert wrong == []


def test_the_plugin_module_is_loaded_only_by_its_library(imports):
    for mod in _entry_point_plugins():
        assert not [m for m, i, _, _ in imports if i == mod], f"{mod} is imported by ctdsl itself"


def _hidden(monkeypatch, *modules):
    for m in list(sys.modules):
        if m.split(".")[0] in modules:
            monkeypatch.delitem(sys.modules, m)
    for m in modules:
        monkeypatch.setitem(sys.modules, m, None)  # `import m` raises ImportError(name=m)


def test_a_missing_extra_is_ct890_with_the_install_line(monkeypatch, tmp_path):
    _hidden(monkeypatch, "pyarrow")
    r = CliRunner().invoke(app, ["sweep", str(ROOT / "specs" / "llama70b_wan.ct"), "-f", "parquet", "-o", str(tmp_path / "g.parquet")])
    assert r.exit_code == 2
    assert r.stderr.splitlines()[:2] == [
        "CT890 --format parquet needs pyarrow, which is not installed",
        "  = help: pip install 'ctdsl[data]' (or use --format npz)",
    ]
    assert "Traceback" not in r.output and not (tmp_path / "g.parquet").exists()


def test_the_language_server_without_its_extra_is_ct890(monkeypatch):
    _hidden(monkeypatch, "pygls", "lsprotocol")
    r = CliRunner().invoke(app, ["lsp", "--stdio"])
    assert r.exit_code == 2 and r.stderr.startswith("CT890 ctdsl lsp needs pygls, which is not installed")
    assert "pip install 'ctdsl[lsp]'" in r.stderr


def test_the_library_without_an_extra_raises_missing_extra(monkeypatch):
    import ctdsl

    sw = ctdsl.load(str(ROOT / "specs" / "llama70b_wan.ct")).sweep({"wan_bw": ("1 GB/s", "10 GB/s", 3, "log")})
    _hidden(monkeypatch, "pandas", "xarray")
    with pytest.raises(MissingExtra, match=r"to_pandas\(\) needs pandas.*pip install 'ctdsl\[data\]'"):
        sw.to_pandas()
    with pytest.raises(ImportError, match=r"to_xarray\(\) needs xarray"):
        sw.to_xarray()


def test_search_runs_without_scipy():
    """`ctdsl search` on a plain install: scipy was imported for the bounded line search and not declared (exit 3)."""
    code = (
        "import sys; sys.modules['scipy'] = None\n"
        "from ctdsl.cli import main; sys.argv = ['ctdsl', 'search', sys.argv[1]]; main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code, str(ROOT / "examples" / "18_codesign_search.ct")],
                       capture_output=True, text=True, cwd=ROOT, timeout=HANG)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "scipy" not in r.stderr and "Pareto" in r.stdout


def test_the_help_shows_each_extra_it_names():
    """`ctdsl[lsp]` in a help string is rich markup unless escaped: the help showed `pip install 'ctdsl'`."""
    from typer.main import get_command

    root = get_command(app)
    for name, cmd in root.commands.items():
        shown = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200", "TERM": "dumb"}).stdout
        flat = " ".join(shown.split())
        assert "pip install 'ctdsl'" not in flat and "needs ctdsl." not in flat and "need ctdsl)" not in flat, name
    for name, extra in (("lsp", "lsp"), ("sweep", "data"), ("simulate", "dask"), ("uncertainty", "uncertainty")):
        shown = " ".join(CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200", "TERM": "dumb"}).stdout.split())
        assert f"ctdsl[{extra}]" in shown, name
