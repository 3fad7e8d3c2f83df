"""The pipeline runs one way: parse -> check -> model -> symbolic -> numeric/simulate ->
report/lint -> cli, with no back edges and no cycles.

The scan reads the Python syntax tree of every module under ctdsl/ (as the safety
scan does) and finds every import, at module level and inside functions. Each
module belongs to a layer; a module may import its own package or a package of
a lower layer, never a higher one, and never another package of its own layer.
Imports between modules form no cycle, nor do imports between packages.

Imports inside a function hide an edge from a reader; they are allowed only

- for the heavy third-party libraries in HEAVY, which a command loads only when
  it needs them (so that `ctdsl check` and `ctdsl lint` start without sympy,
  numpy or matplotlib), and
- in the entry points (`ctdsl/__init__.py`, `ctdsl/api.py`, `ctdsl/cli/`), which
  defer a command's back end until the command runs; such an import must still
  point down the layers.

A function (or a class's `__init__`) that a module of another package imports and uses
annotates every parameter (`untyped_crossings`): what crosses a package boundary says
what it is, so that no untyped context object is handed from layer to layer. A use is a
name imported from the function's module (`from ctdsl.x.y import f`), or an attribute of
the module imported under a name (`from ctdsl.x import y as Y; Y.f`), type-only imports
included.

`run_scan(root)` is the scan itself; the last tests run the scans on a copy of the tree
with a back edge or an untyped parameter injected, and they must fail there.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]

# low to high; a package may import only packages of lower layers (and itself)
LAYERS: list[tuple[str, ...]] = [
    ("ctdsl.limits", "ctdsl.codes", "ctdsl.files", "ctdsl.shipped", "ctdsl.highlight", "ctdsl.extras", "ctdsl.roots", "ctdsl.version"),
    ("ctdsl.diagnostics",),
    ("ctdsl.units", "ctdsl.failure"),
    ("ctdsl.language",),
    ("ctdsl.syntax",),
    ("ctdsl.model",),
    ("ctdsl.check",),
    ("ctdsl.results",),
    ("ctdsl.symbolic",),
    ("ctdsl.numeric", "ctdsl.simulate"),
    ("ctdsl.report", "ctdsl.lint"),
    ("ctdsl.api", "ctdsl.lsp"),
    ("ctdsl.cli", "ctdsl"),  # `ctdsl` is the package's own face (ctdsl/__init__.py)
    ("ctdsl.__main__",),  # `python -m ctdsl`: runs the command line
]

# third-party libraries a command loads only when it needs them
HEAVY = {"matplotlib", "scipy", "simpy", "mpmath", "sympy", "numpy", "networkx", "rich", "typer", "lark", "jsonschema", "tomllib", "tomli", "pyarrow", "pandas", "xarray", "SALib"}
ENTRY_POINTS = ("ctdsl/__init__.py", "ctdsl/__main__.py", "ctdsl/api.py", "ctdsl/cli/")


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package(mod: str) -> str:
    """The layer unit a module belongs to: ctdsl.X for modules under ctdsl/X, the module itself at the top."""
    parts = mod.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else mod


def _layer(pkg: str) -> int:
    for i, names in enumerate(LAYERS):
        if pkg in names:
            return i
    raise KeyError(pkg)


def _imports(path: Path, mod: str) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every ctdsl and third-party import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[str, int, bool]] = []
    is_pkg = path.name == "__init__.py"

    def visit(node: ast.AST, in_fn: bool, in_type_checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            fn = in_fn or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            tc = in_type_checking
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                tc = True
            if isinstance(child, ast.Import) and not tc:
                out.extend((a.name, child.lineno, in_fn) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and not tc:
                if child.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target != "ctdsl":  # every import runs ctdsl/__init__.py anyway: no edge of its own
                    out.append((target, child.lineno, in_fn))
                if target.startswith("ctdsl"):
                    # `from ctdsl.lint import rules` imports the module ctdsl.lint.rules
                    for a in child.names:
                        out.append((f"{target}.{a.name}", child.lineno, in_fn))
            visit(child, fn, tc)

    visit(tree, False, False)
    return out


def run_scan(root: Path) -> tuple[list[str], nx.DiGraph, nx.DiGraph]:
    """Every violation, the module graph and the package graph of the tree at `root`."""
    sources = sorted((root / "ctdsl").rglob("*.py"))
    modules = {_module_name(p, root): p for p in sources}
    problems: list[str] = []
    mg, pg = nx.DiGraph(), nx.DiGraph()
    for mod, path in modules.items():
        rel = path.relative_to(root).as_posix()
        entry = rel.startswith(ENTRY_POINTS)
        src_pkg = _package(mod)
        mg.add_node(mod)
        pg.add_node(src_pkg)
        for target, line, in_fn in _imports(path, mod):
            top = target.split(".")[0]
            if top != "ctdsl":
                if in_fn and top not in HEAVY:
                    problems.append(f"{rel}:{line}: imports {target} inside a function (not a heavy library)")
                continue
            if target not in modules and target.count(".") == 1 and src_pkg != "ctdsl" and _layer(src_pkg) < _layer("ctdsl"):
                # `from ctdsl import name`: a name of the package's face (ctdsl/__init__.py), the top layer
                problems.append(f"{rel}:{line}: {src_pkg} (layer {_layer(src_pkg)}) imports {target} from the package's face (layer {_layer('ctdsl')}): a back edge")
                continue
            if target not in modules:
                continue  # `from ctdsl.x import name`: the name is not a module
            dst_pkg = _package(target)
            if target != mod:
                mg.add_edge(mod, target)
            if in_fn and not entry:
                problems.append(f"{rel}:{line}: imports {target} inside a function")
            if dst_pkg == src_pkg:
                continue
            pg.add_edge(src_pkg, dst_pkg)
            ls, ld = _layer(src_pkg), _layer(dst_pkg)
            if ld > ls or (ld == ls and src_pkg != "ctdsl"):
                problems.append(f"{rel}:{line}: {src_pkg} (layer {ls}) imports {target} ({dst_pkg}, layer {ld}): a back edge")
    for cycle in nx.simple_cycles(mg):
        if len(cycle) > 1:
            problems.append("import cycle between modules: " + " -> ".join(cycle + [cycle[0]]))
    for cycle in nx.simple_cycles(pg):
        if len(cycle) > 1 and "ctdsl" not in cycle:
            problems.append("import cycle between packages: " + " -> ".join(cycle + [cycle[0]]))
    return problems, mg, pg


def _definitions(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """A module's top-level functions, and its classes by their own `__init__`."""
    out: dict[str, ast.FunctionDef] = {}
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[n.name] = n
        elif isinstance(n, ast.ClassDef):
            init = next((b for b in n.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
            if init is not None:
                out[n.name] = init
    return out


def _untyped(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    params = a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x is not None]
    return [x.arg for x in params if x.annotation is None and x.arg not in ("self", "cls")]


def untyped_crossings(root: Path) -> list[str]:
    """Functions with an unannotated parameter that a module of another package uses."""
    trees = {_module_name(p, root): (p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted((root / "ctdsl").rglob("*.py"))}
    defs = {m: _definitions(t) for m, (_, t) in trees.items()}
    uses: dict[tuple[str, str], set[str]] = {}
    for mod, (path, tree) in trees.items():
        alias: dict[str, str] = {}  # a local name -> the ctdsl module it stands for
        used: list[tuple[str, str]] = []
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom) and not n.level and (n.module or "").startswith("ctdsl"):
                for a in n.names:
                    if f"{n.module}.{a.name}" in trees:
                        alias[a.asname or a.name] = f"{n.module}.{a.name}"
                    elif a.name in defs.get(n.module, {}):
                        used.append((n.module, a.name))
            elif isinstance(n, ast.Import):
                for a in n.names:
                    if a.name in trees and a.asname:
                        alias[a.asname] = a.name
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in alias:
                target = alias[n.value.id]
                if n.attr in defs[target]:
                    used.append((target, n.attr))
        for target, name in used:
            if _package(target) != _package(mod):
                uses.setdefault((target, name), set()).add(path.relative_to(root).as_posix())
    problems = []
    for (target, name), users in sorted(uses.items()):
        missing = _untyped(defs[target][name])
        if missing:
            problems.append(f"{target}.{name}: parameters {', '.join(missing)} have no annotation, and {', '.join(sorted(users))} use it")
    return problems


def test_what_crosses_a_package_boundary_is_typed():
    assert untyped_crossings(ROOT) == []


def test_the_typed_scan_fails_on_an_untyped_parameter(tmp_path):
    shutil.copytree(ROOT / "ctdsl", tmp_path / "ctdsl")
    target = tmp_path / "ctdsl" / "symbolic" / "queueing.py"
    text = target.read_text(encoding="utf-8").replace("def long_run_bound(rho: float,", "def long_run_bound(rho,")
    target.write_text(text, encoding="utf-8")
    problems = untyped_crossings(tmp_path)
    assert problems == ["ctdsl.symbolic.queueing.long_run_bound: parameters rho have no annotation, and ctdsl/simulate/plan.py use it"]
    # its use in symbolic/assemble.py is inside its own package: no crossing, not listed


def test_the_pipeline_runs_one_way():
    problems, mg, pg = run_scan(ROOT)
    assert len(mg) > 40 and pg.number_of_edges() > 10  # the scan sees the code
    assert problems == []


def test_every_package_has_a_layer():
    for path in sorted((ROOT / "ctdsl").rglob("*.py")):
        _layer(_package(_module_name(path, ROOT)))


def test_no_back_end_imports_the_checker():
    _, mg, _ = run_scan(ROOT)
    allowed = ("ctdsl.check", "ctdsl.lint", "ctdsl.cli", "ctdsl.api", "ctdsl.lsp")
    bad = [(a, b) for a, b in mg.edges if b.startswith("ctdsl.check") and not a.startswith(allowed)]
    assert bad == []


def test_report_reads_results_only():
    _, mg, _ = run_scan(ROOT)
    bad = [(a, b) for a, b in mg.edges if a.startswith("ctdsl.report") and b.startswith(("ctdsl.symbolic", "ctdsl.numeric"))]
    assert bad == []


@pytest.mark.parametrize(
    "file, line",
    [
        ("ctdsl/model/graph.py", "from ctdsl.symbolic import convert\n"),  # model -> symbolic
        ("ctdsl/symbolic/costs.py", "from ctdsl.report import tables\n"),  # symbolic -> report
        ("ctdsl/units.py", "def _f():\n    from ctdsl import language\n"),  # hidden in a function
        ("ctdsl/report/tables.py", "from ctdsl import __version__\n"),  # a name of the package's face, from below
    ],
)
def test_the_scan_fails_on_an_injected_back_edge(tmp_path, file, line):
    shutil.copytree(ROOT / "ctdsl", tmp_path / "ctdsl")
    target = tmp_path / file
    target.write_text(target.read_text(encoding="utf-8") + "\n" + line, encoding="utf-8")
    problems, _, _ = run_scan(tmp_path)
    assert any(file in p for p in problems), problems
