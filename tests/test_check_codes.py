"""The registry of diagnostic codes, the source that emits them and docs/diagnostics.md agree."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from ctdsl.check.loader import Unreadable
from ctdsl.codes import CODES, PHASES, lookup, phase

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"^CT\d{3}$")


def _emitted() -> dict[str, list[str]]:
    """Every "CTnnn" string literal in ctdsl/, except the registry itself."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "ctdsl").rglob("*.py")):
        if path.name == "codes.py" and path.parent.name == "ctdsl":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value):
                found.setdefault(node.value, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_emitted_code_is_registered():
    unknown = {code: where for code, where in _emitted().items() if code not in CODES}
    assert not unknown, f"codes emitted but not in ctdsl/codes.py: {unknown}"


def test_every_registered_code_is_emitted():
    emitted = _emitted()
    dead = sorted(code for code in CODES if code not in emitted)
    assert not dead, f"codes in the registry that nothing emits: {dead}"


def test_registry_entries_are_well_formed():
    names = [c.name for c in CODES.values()]
    assert len(set(names)) == len(names)
    assert list(CODES) == sorted(CODES)
    for code, entry in CODES.items():
        assert entry.code == code and CODE.match(code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", entry.name), entry.name
        assert entry.summary and "\n" not in entry.summary and not entry.summary.endswith(".")
        assert code[2] in PHASES


def test_lookup_by_code_and_by_name():
    assert lookup("CT202").name == "wrong-dimension"
    assert lookup("ct202").code == "CT202"
    assert lookup("wrong-dimension").code == "CT202"
    assert lookup("CT999") is None
    assert phase("CT412") == "Topology and placement"


def test_unreadable_file_is_ct001():
    diag = Unreadable("no such file: x.ct", "x.ct").diagnostic()
    assert diag.code == "CT001" and diag.span is None and diag.message == "no such file: x.ct"


def test_diagnostics_doc_is_up_to_date():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_diagnostics_doc.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_diagnostics_doc_lists_every_code_with_an_example():
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code, entry in CODES.items():
        heading = f"### {code} {entry.name}\n"
        assert heading in text
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        assert "```text\n" in section
        rendered = section.split("```text\n", 1)[1].split("```", 1)[0]
        assert f"{code} " in rendered.splitlines()[0]
