"""One notion of a line, shared by the parser, the diagnostics, the excerpts, the fixer and the
language server (ctdsl/diagnostics/lines.py; docs/language.md, Lexical structure).

The attack (issue 25, item 2): a form feed, U+2028 or a bare CR in a comment made Python's
`str.splitlines()` (the fixer's lines) count one line more than the parser, so `lint --fix`
rewrote the line above the one flagged: another link's 400 GB/s became 12.5 GB/s, the flagged
link kept its 100 GB/s, and the command said "Fixed 1 finding".

Every spec here is built from a list of lines joined by hand, so the line a finding must point
at is known from the list, not from any code under test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.diagnostics import Diagnostic, Span
from ctdsl.diagnostics.lines import LineIndex, split_lines
from ctdsl.diagnostics.terminal import printable
from ctdsl.lint.fixes import Edit, Fix, apply_fixes, fix_for

HEAD = [
    "import std.devices",
    "import std.links",
    "import std.models",
    "model m : llama3_8b { tokens = 4096 }",
    "device accel : h100 { efficiency = 0.4 }",
    "switch tor { sum = true }",
    "dc east { workers = 4; device = accel; link = nvlink4; switch = tor }",
    "dc west : east {}",
    "scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }",
]
# an unused link with a bandwidth written at the same column as the flagged one
DECOY = "link fast_link_x { bandwidth = 400 GB/s; latency = 1 ms }   # ctdsl: ignore[CTL001]"
SLIP = "link eth100g_dci { bandwidth = 100 GB/s; latency = 1 ms }"  # 100 GbE is 12.5 GB/s: CTL006
FIXED = "link eth100g_dci { bandwidth = 12.5 GB/s; latency = 1 ms }"
WAN = "wan east <-> west = eth100g_dci"

# the characters Python's splitlines() breaks at that are not line ends in a spec
INSIDE = {
    "form-feed": "\x0c",
    "vertical-tab": "\x0b",
    "file-separator": "\x1c",
    "group-separator": "\x1d",
    "record-separator": "\x1e",
    "NEL": "\x85",
    "LINE-SEPARATOR": "\u2028",
    "PARAGRAPH-SEPARATOR": "\u2029",
}


def spec(comment_char: str = "", ends: list[str] | None = None) -> tuple[str, int]:
    """The spec's text (a comment holding `comment_char` on line 10) and the 1-based line of SLIP."""
    lines = HEAD + [f"# a note{comment_char}more of it", DECOY, SLIP, WAN]
    ends = ends or ["\n"] * len(lines)
    return "".join(line + end for line, end in zip(lines, ends)), lines.index(SLIP) + 1


def fixed(text: str) -> str:
    assert text.count(SLIP) == 1
    return text.replace(SLIP, FIXED)


CASES = {name: spec(ch) for name, ch in INSIDE.items()}  # SLIP on line 12
# the comment's line ended by a bare CR (Python's splitlines() agreed, the old grammar's comment ran on)
CASES["bare-CR-ends-a-line"] = spec(ends=["\n"] * 9 + ["\r", "\n", "\n", "\n"])  # SLIP on line 12
# a CR, then a CR LF: two line ends, an empty line between, SLIP on line 13
CASES["CR-CRLF"] = (spec(ends=["\n"] * 9 + ["\r\r\n", "\n", "\n", "\n"])[0], 13)
CASES["CRLF-and-LF-mixed"] = spec(ends=["\r\n", "\n"] * 6 + ["\r\n"])
CASES["all-CRLF"] = spec(ends=["\r\n"] * 13)
CASES["all-bare-CR"] = spec(ends=["\r"] * 13)


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


def lint(*args: str):
    return CliRunner().invoke(app, ["lint", *args])


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_finding_points_at_the_flagged_line_and_the_excerpt_quotes_it(here, name):
    text, line = CASES[name]
    _write(here / "s.ct", text)
    r = lint("s.ct", "-f", "concise")
    hits = [x for x in r.stdout.splitlines() if "CTL006" in x]
    assert len(hits) == 1 and hits[0].startswith(f"s.ct:{line}:20: CTL006"), r.stdout
    excerpt = lint("s.ct").stdout
    assert f"{line} | {SLIP}" in excerpt, excerpt


@pytest.mark.parametrize("name", sorted(CASES))
def test_fix_rewrites_the_flagged_line_and_only_it_and_a_second_run_changes_nothing(here, name):
    text, _ = CASES[name]
    path = _write(here / "s.ct", text)
    r = lint("s.ct", "--fix", "--unsafe-fixes", "-f", "concise")
    assert path.read_bytes().decode("utf-8") == fixed(text), "the decoy's 400 GB/s is kept, the slip is fixed"
    assert "Fixed 1 finding." in r.stderr
    assert "CTL006" not in r.stdout
    again = lint("s.ct", "--fix", "--unsafe-fixes")
    assert path.read_bytes().decode("utf-8") == fixed(text)
    assert "Fixed" not in again.stderr


def test_a_bare_cr_ends_a_comment_as_an_editor_shows_it(here):
    # `# note<CR>param y = oops` shows as two lines in an editor (LSP's line ends): the second is
    # code, not part of the comment, so its error is reported on line 2
    _write(here / "c.ct", "param x = 1 ms  # note\rparam y = oops\n")
    r = CliRunner().invoke(app, ["check", "c.ct", "-f", "concise"])
    assert r.stdout.startswith("c.ct:2:11: CT"), r.stdout
    # a spec whose lines all end with a bare CR checks as one with LF
    text, _ = CASES["all-bare-CR"]
    _write(here / "cr.ct", text.replace(SLIP, FIXED))
    assert CliRunner().invoke(app, ["check", "cr.ct"]).exit_code == 0


def test_line_index_counts_lines_as_lsp_does():
    # by hand: LF, CR LF and a lone CR end a line; nothing else does
    text = "a\fb\u2028c\nd\r\ne\rf\x85g\n"
    assert split_lines(text) == ["a\fb\u2028c", "d", "e", "f\x85g"]
    index = LineIndex(text)
    assert [index.line(n) for n in range(1, 5)] == split_lines(text)
    assert index.position(text.index("e")) == (3, 1) and index.position(text.index("g")) == (4, 3)
    assert index.offset(4, 3) == text.index("g")
    # columns in code points; an LSP client's UTF-16 units count an emoji twice, UTF-8 bytes four times
    index = LineIndex("x = \U0001f600 y\n")
    assert index.units(1, 6, "utf-16") == 6 and index.units(1, 6, "utf-8") == 8 and index.units(1, 6, "utf-32") == 5
    assert index.column(1, 6, "utf-16") == 6 and index.column(1, 8, "utf-8") == 6
    assert index.column(1, 5, "utf-16") == 5  # inside the emoji: rounds down to it


def test_fix_refuses_when_the_text_it_replaces_is_not_there():
    text, line = CASES["form-feed"]
    d = Diagnostic("CTL006", "slip", Span("s.ct", line, 20, line, 40), help="write bandwidth = 12.5 GB/s")
    fix = fix_for(d, text)
    assert fix is not None and not fix.safe and fix.edits[0].expect == "bandwidth = 100 GB/s"
    # the same fix on a text where a line was added above: the slip moved down a line
    moved = "# added\n" + text
    done = apply_fixes(moved, [fix])
    assert done.text == moved and done.stale == [fix] and done.applied == []
    # a fix whose positions count lines as splitlines() did (one more after the form feed) is refused too
    off_by_one = Fix("write", "s.ct", (Edit(line - 1, 20, line - 1, 40, "bandwidth = 12.5 GB/s", "bandwidth = 100 GB/s"),), safe=False)
    assert apply_fixes(text, [off_by_one]).stale == [off_by_one]
    assert apply_fixes(text, [fix]).text == fixed(text)


def test_excerpts_show_line_and_paragraph_separators_as_visible_characters():
    assert printable("a\u2028b\u2029c\x85d\x0ce") == "a\ufffdb\ufffdc\ufffdd\u240ce"


# ---- the language server --------------------------------------------------------------------------


pygls = pytest.importorskip("pygls", reason="the language server needs pygls: pip install 'ctdsl[lsp]'")


@pytest.fixture(scope="module")
def lsp():
    from lspkit import Session

    s = Session()
    yield s
    s.close()


@pytest.mark.parametrize("name", ["form-feed", "LINE-SEPARATOR", "NEL", "CRLF-and-LF-mixed", "all-bare-CR"])
def test_the_language_server_points_and_fixes_at_the_same_line(lsp, tmp_path, name):
    from lsprotocol import types as T

    from lspkit import _offset

    text, line = CASES[name]
    uri = lsp.open(tmp_path / f"{name}.ct", text)
    diags = [d for d in lsp.diagnostics(uri) if d.code == "CTL006"]
    assert len(diags) == 1 and diags[0].range.start.line == line - 1 and diags[0].range.start.character == 19
    actions = lsp.code_actions(uri, diags[0].range, diags)
    (action,) = [a for a in actions if "CTL006" in a.title]
    assert "unsafe" in action.title and not action.is_preferred
    (edit,) = action.edit.changes[uri]
    a = _offset(text, edit.range.start.line, edit.range.start.character, lsp.encoding)
    b = _offset(text, edit.range.end.line, edit.range.end.character, lsp.encoding)
    assert text[:a] + edit.new_text + text[b:] == fixed(text)
    assert isinstance(edit, T.TextEdit)
