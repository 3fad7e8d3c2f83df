"""docs/language.md's limits section lists every limit with its code.

Every `MAX_...` of ctdsl/limits.py has a code in `limits.CODES`, a real one of
ctdsl/codes.py (an import limit is CT505, the others CT6xx), and a row of the
generated table with that code; every other bound the package defines at module
level (`MAX_...` or `..._CHARS` outside limits.py, an alias of a limit aside) is in
the generator's BACK_END_LIMITS and so in the second table.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ctdsl import limits
from ctdsl.codes import CODES as ALL_CODES

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
_DEF = re.compile(r"^(MAX_[A-Z_]+|[A-Z_]+_CHARS) = (.+)$", re.M)


def _defined(path: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _DEF.finditer(path.read_text(encoding="utf-8"))]


def test_every_limit_has_its_code_in_the_table():
    names = [n for n, _ in _defined(ROOT / "ctdsl" / "limits.py")]
    assert len(names) >= 27 and set(names) == set(limits.CODES)
    known = set(ALL_CODES)
    for name in names:
        code = limits.CODES[name]
        assert code in known, (name, code)
        assert code == "CT505" or code.startswith("CT6"), (name, code)
        assert re.search(rf"^\| `{name}` \| [\d,]+ \| {code} \|", DOC, re.M), name


def test_every_other_bound_is_in_the_back_end_table():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from gen_language_tables import BACK_END_LIMITS
    finally:
        sys.path.remove(str(ROOT / "tools"))
    listed = {(path, name) for path, name, _ in BACK_END_LIMITS}
    found = set()
    for path in (ROOT / "ctdsl").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "ctdsl/limits.py":
            continue
        for name, value in _defined(path):
            if not value.startswith("limits."):  # an alias of a limit of limits.py
                found.add((rel, name))
    assert found == listed
    for path, name in listed:
        assert re.search(rf"^\| `{name}` \| `{path}` \|", DOC, re.M), name
