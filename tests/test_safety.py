"""No spec text is ever evaluated as code.

The language is parsed by a grammar and built into checked expressions node by
node; nothing in ctdsl hands a string to eval, exec, compile, sympy's sympify,
parse_expr or S(), or lambdify. `lambdify` itself is allowed where the numeric
back end passes it built sympy expressions (its first argument is then not a
string literal). The scan reads the Python syntax tree of every module, so a
comment or a docstring that mentions eval() does not count, and an alias does
not escape it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "ctdsl").rglob("*.py"))

FORBIDDEN = {"eval", "exec", "compile", "sympify", "parse_expr", "__import__"}
NO_STRING_ARGUMENT = {"S", "lambdify", "Symbol", "symbols"}  # fine with built objects, not with text to parse


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _violations(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name.split(".")[-1] in {"sympify", "parse_expr"}:
                    out.append(f"{path.relative_to(root)}:{node.lineno}: imports {alias.name}")
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        where = f"{path.relative_to(root)}:{node.lineno}"
        if name in FORBIDDEN:
            if name == "compile" and isinstance(node.func, ast.Attribute):
                continue  # re.compile and friends
            out.append(f"{where}: calls {name}()")
        if name in NO_STRING_ARGUMENT and node.args:
            first = node.args[0]
            if name in ("Symbol", "symbols"):
                continue  # a symbol's name is a string by design; it is never parsed as an expression
            if isinstance(first, ast.Constant) and isinstance(first.value, str) or isinstance(first, ast.JoinedStr):
                out.append(f"{where}: calls {name}() on a string")
    return out


def test_sources_exist():
    assert len(SOURCES) > 10


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_from_strings(path):
    assert _violations(path) == []


def test_the_scan_catches_what_it_should(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sympy\n"
        "from sympy.parsing.sympy_parser import parse_expr\n"
        "eval('1')\n"
        "exec('x = 1')\n"
        "sympy.sympify(text)\n"
        "sympy.S('x')\n"
        "sympy.lambdify('x', e)\n"
        "compile(src, 'f', 'eval')\n"
        "# eval( in a comment is fine\n"
        "re.compile('x')\n"
        "sympy.lambdify(args, expr, modules='numpy')\n",
        encoding="utf-8",
    )
    found = sorted(_violations(bad, tmp_path), key=lambda v: int(v.split(":")[1]))
    found = [v.split(": ", 1)[1] for v in found]
    assert found == [
        "imports parse_expr",
        "calls eval()",
        "calls exec()",
        "calls sympify()",
        "calls S() on a string",
        "calls lambdify() on a string",
        "calls compile()",
    ]

