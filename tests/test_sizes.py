"""A module is as long as its concept: split by meaning, never by line count. Past 400 lines
its docstring says why it is one module (a line `Long: ...` in the module's docstring);
a function over 80 lines says why in a comment (a line `# long: ...` among its first lines)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "ctdsl").rglob("*.py"))
MAX_MODULE = 400
MAX_FUNCTION = 80


def _says_why(text: str) -> bool:
    """Whether the module's docstring has a line `Long: ...` saying why it is as long as it is."""
    doc = ast.get_docstring(ast.parse(text)) or ""
    return any(line.strip().startswith("Long:") and len(line.strip()) > len("Long:") + 10 for line in doc.splitlines())


def long_modules_without_a_reason(sources) -> dict[str, int]:
    out = {}
    for p in sources:
        text = p.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n > MAX_MODULE and not _says_why(text):
            out[p.as_posix()] = n
    return out


def test_a_module_past_400_lines_says_why():
    assert long_modules_without_a_reason(SOURCES) == {}


def test_the_rule_reads_the_docstring(tmp_path):
    body = "x = 1\n" * (MAX_MODULE + 1)
    silent = tmp_path / "silent.py"
    silent.write_text('"""A module."""\n' + body, encoding="utf-8")
    said = tmp_path / "said.py"
    said.write_text('"""A module.\n\nLong: one concept, the builder of every kind of definition.\n"""\n' + body, encoding="utf-8")
    comment = tmp_path / "comment.py"  # a reason outside the docstring is no reason
    comment.write_text('"""A module."""\n# Long: one concept, the builder of every kind of definition.\n' + body, encoding="utf-8")
    short = tmp_path / "short.py"
    short.write_text('"""A module."""\nx = 1\n', encoding="utf-8")
    got = long_modules_without_a_reason([silent, said, comment, short])
    assert set(got) == {silent.as_posix(), comment.as_posix()}


def _long_functions(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n <= MAX_FUNCTION:
                continue
            head = lines[node.lineno - 1 : node.lineno + 12]
            if not any(line.strip().startswith("# long:") for line in head):
                out.append(f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_over_80_lines_without_a_reason():
    assert [f for p in SOURCES for f in _long_functions(p)] == []
