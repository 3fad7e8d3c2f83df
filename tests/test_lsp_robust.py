"""The language server's analysis on every position of every spec, and on broken text.

No answer is checked here (tests/test_lsp.py does that through a real client):
only that nothing raises, whatever the cursor or the text, since an exception
in the server would lose the user's diagnostics. Truncated specs stand in for
text being typed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctdsl.lsp.analysis import analyse, definition, hover, outline, references
from ctdsl.lsp.complete import complete
from ctdsl.lsp.tokens import semantic_tokens

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted([ROOT / "specs" / "llama70b_wan.ct", *ROOT.glob("examples/*.ct")])


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_every_cursor_position_is_answered_without_raising(path):
    text = path.read_text(encoding="utf-8")
    an = analyse(str(path), text)
    assert an.index is not None
    lines = text.split("\n")
    for n, line in enumerate(lines, start=1):
        for col in range(1, len(line) + 2, 3):
            hover(an, n, col)
            definition(an, n, col)
            references(an, n, col)
            complete(text, n, col, an.index)
    outline(an)
    assert len(semantic_tokens(text, an.index, str(path))) % 5 == 0


@pytest.mark.parametrize("path", SPECS[:4], ids=lambda p: p.name)
def test_text_being_typed_is_analysed_without_raising(path):
    text = path.read_text(encoding="utf-8")
    for cut in range(0, len(text), max(len(text) // 25, 1)):
        partial = text[:cut]
        an = analyse(str(path), partial)
        lines = partial.split("\n")
        complete(partial, len(lines), len(lines[-1]) + 1, an.index)
        semantic_tokens(partial, an.index, str(path))
        hover(an, len(lines), max(len(lines[-1]), 1))


@pytest.mark.parametrize(
    "text",
    ["", "\n\n", "link {", "dc x { link = ", 'import "', "param p = 1 GB/s in", "}}}{{{", "\x00\x01", "pluggable q { port { ", "é ñ 中文 😀 = 1"],
)
def test_odd_text(text, tmp_path):
    an = analyse(str(tmp_path / "odd.ct"), text)
    lines = text.split("\n")
    for n, line in enumerate(lines, start=1):
        for col in range(1, len(line) + 2):
            complete(text, n, col, an.index)
            hover(an, n, col)
    semantic_tokens(text, an.index, str(tmp_path / "odd.ct"))


def test_an_error_in_an_imported_file_is_shown_at_its_import(tmp_path):
    (tmp_path / "lib.ct").write_text("link broken { bandwidth = 10 GB/s; latency = }\n", encoding="utf-8")
    text = 'import std.links\nimport "lib.ct"\n'
    an = analyse(str(tmp_path / "main.ct"), text)
    (d,) = an.diagnostics
    # line 2 is the import of lib.ct; the error itself is on lib.ct's line 1
    assert (d.span.file, d.span.line, d.span.col) == (str(tmp_path / "main.ct"), 2, 1)
    assert d.message.startswith("in imported file ") and "lib.ct:1:" in d.message
    assert d.secondary[0].span.file.endswith("lib.ct") and d.secondary[0].span.line == 1


def test_definition_of_an_import_and_of_a_dotted_field(tmp_path):
    from ctdsl.lsp.analysis import file_of

    text = "import std.links\nlink mine : ib_ndr { latency = 2 us }\nparam p = 2 * mine.bandwidth\n"
    an = analyse(str(tmp_path / "d.ct"), text)
    target = definition(an, 1, 10)  # on `std.links`
    assert file_of(target.file).endswith("ctdsl/stdlib/links.ct") and target.line == 1
    # `mine.bandwidth` (line 3, `bandwidth` from column 20): mine does not write it, its base ib_ndr does
    span = definition(an, 3, 22)
    assert span.file == "<std>/links.ct"
    line = (Path(file_of(span.file)).read_text(encoding="utf-8").split("\n"))[span.line - 1]
    assert line.startswith("link ib_ndr {") and line[span.col - 1 : span.end_col - 1] == "bandwidth"
    # `latency` written in mine's own block: go to the base's latency, which it overrides
    span = definition(an, 2, 23)
    assert span.file == "<std>/links.ct" and span.line == line_of("link ib_ndr", span)


def line_of(prefix: str, span) -> int:
    from ctdsl.lsp.analysis import file_of

    lines = Path(file_of(span.file)).read_text(encoding="utf-8").split("\n")
    return next(n for n, line in enumerate(lines, start=1) if line.startswith(prefix))
