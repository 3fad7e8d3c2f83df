"""The specs, examples and docs that ship inside the package.

The wheel carries `specs/`, `examples/` and `docs/` under `ctdsl/data/`
(pyproject.toml), so that `ctdsl init` can write a starter spec and `ctdsl docs
CODE` can print a rule's full text after a plain `pip install ctdsl`. From a
source checkout (an editable install, the tests) the same folders are read
from the checkout itself.
"""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
KINDS = ("specs", "examples", "docs")


def folder(kind: str) -> Path:
    """The shipped folder `kind` (specs, examples or docs): inside the package, else the checkout's."""
    if kind not in KINDS:
        raise ValueError(f"no shipped folder {kind!r}")
    inside = PACKAGE / "data" / kind
    return inside if inside.is_dir() else PACKAGE.parent / kind


def flagship() -> Path:
    return folder("specs") / "llama70b_wan.ct"


def files(kind: str) -> list[Path]:
    """Every file of the shipped folder `kind` (specs or examples), subfolders included, in path order."""
    root = folder(kind)
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def examples() -> dict[str, Path]:
    """Each example spec by its name without `.ct`, in name order."""
    return {p.stem: p for p in sorted(folder("examples").glob("*.ct"))}


_HEADING = re.compile(r"^(#{1,6}) (\S+)")


def doc_section(code: str) -> str | None:
    """The section of docs/diagnostics.md (a CT code) or docs/lint-rules.md (a CTL rule) about `code`.

    A section runs from its heading (`### CT105 ...`, `## CTL003 ...`) to the next
    heading of the same or a higher level; lines inside code fences are not headings.
    """
    code = code.upper()
    name = "lint-rules.md" if code.startswith("CTL") else "diagnostics.md"
    path = folder("docs") / name
    if not path.is_file():
        return None
    out: list[str] = []
    level = 0
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        m = None if fenced else _HEADING.match(line)
        if line.startswith("```"):
            fenced = not fenced
        if m and level and len(m.group(1)) <= level:
            break
        if m and not level and m.group(2) == code:
            level = len(m.group(1))
        if level:
            out.append(line)
    return "\n".join(out).rstrip() + "\n" if out else None
