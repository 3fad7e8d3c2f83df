"""Every writer of the document model writes every kind of block (docs/architecture.md, "The
report layer"): the terminal, Markdown, HTML and LaTeX.

A section someone adds (serving's, say) is made of the same blocks, so it must show in every
format: one document holding one block of each kind, with hostile spec text in every place a
spec's text can reach, goes through each writer, which must show each block's content and
encode the text for its sink. The LaTeX is compiled by real pdflatex. A new kind of block in
`ctdsl.report.blocks` must be added here (the first test), and so to every writer.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from io import StringIO

import pytest
from rich.console import Console

from backstop import HANG
from ctdsl.report import blocks as B
from ctdsl.report.document_html import to_html
from ctdsl.report.document_md import to_markdown
from ctdsl.report.document_rich import print_blocks
from ctdsl.report.document_tex import blocks_tex

# a 1x1 PNG
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
EVIL = "<script>x</script> $1$ [bold]b[/bold] \\end{document} a_b #c"

KINDS = {B.Image, B.Math, B.Code, B.Para, B.Bullets, B.Section, B.Prose, B.Equations, B.Grid}
PARTS = {B.Text, B.Name, B.Qty, B.TeX, B.EqRow}  # runs, cells and rows: inside a block


def _document() -> list[B.Section]:
    return [
        B.Section(
            "para " + EVIL,
            [
                B.Para("a paragraph " + EVIL),
                B.Prose((B.Text("prose words "), B.Name("name_" + EVIL), B.TeX(r"x^{2}")), (B.Text("head " + EVIL),)),
                B.Bullets(["an item " + EVIL]),
                B.Code("code " + EVIL + "\n\nsecond line"),
                B.Math(r"y = x^{2}", lambda: "<math><mi>y</mi></math>"),
                B.Equations([B.EqRow(r"z &= \text{" + r"w\_1" + "}", "eq:z"), B.EqRow(r"&\quad + 1")]),
                B.Grid("grid " + EVIL, ["col", B.TeX("c")], [["cell " + EVIL, B.Qty(1.5, "s")]], {(0, 0)}, ["note " + EVIL], align=["left", "right"]),
                B.Image(PNG, "figure " + EVIL),
                B.Section("sub " + EVIL, [B.Para("inner")], level=3),
            ],
        )
    ]


def test_the_document_holds_one_block_of_every_kind():
    kinds = {getattr(B, n) for n in dir(B) if dataclasses.is_dataclass(getattr(B, n)) and isinstance(getattr(B, n), type)}
    assert kinds == KINDS | PARTS, "a new kind of block: add it to KINDS (and to every writer) or to PARTS"
    seen = set()

    def walk(bs):
        for b in bs:
            seen.add(type(b))
            if isinstance(b, B.Section):
                walk(b.blocks)

    walk(_document())
    assert seen == KINDS


def test_markdown_writes_every_block_with_spec_text_inert():
    md = to_markdown("title", _document())
    for words in ("a paragraph", "prose words", "an item", "code", "y = x^{2}", r"\begin{aligned}", "grid", "cell", "note", "figure", "inner", "1.5 s"):
        assert words in md, words
    outside = md.replace("```\ncode " + EVIL + "\n\nsecond line\n```", "")  # a fenced block is inert as it is
    assert outside != md and "<script>" not in outside and "&lt;script>" in outside
    assert "**head " in md  # a paragraph's head in bold
    assert "|---|---:|" in md  # the number column right-aligned
    assert "\\label" not in md  # the LaTeX writer's labels stay in LaTeX


def test_html_writes_every_block_with_spec_text_escaped():
    html = to_html("title", _document())
    for words in ("a paragraph", "prose words", "an item", "code", "<math><mi>y</mi></math>", r"\begin{aligned}", "grid", "cell", "note", "figure", "inner"):
        assert words in html, words
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<b>head " in html and "<code>name_" in html and '<img src="data:image/png;base64,' in html


def test_terminal_writes_every_block_with_markup_shown_as_text():
    buf = StringIO()
    print_blocks(Console(file=buf, width=100, no_color=True, color_system=None, force_terminal=False), _document(), mark=" *")
    out = buf.getvalue()
    for words in ("a paragraph", "prose words", "an item", "code", "y = x^{2}", r"z = \text", "grid", "cell", "note", "(figure: figure", "inner"):
        assert words in out, words
    assert "[bold]b[/bold]" in out  # rich's markup from a spec is printed, not applied
    assert "cell <script>" in out and " *" in out  # the marked cell carries the mark


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_writes_every_block_and_compiles(tmp_path):
    tex = blocks_tex(_document(), "plain")
    for words in ("a paragraph", "prose words", "an item", "code", r"\[ y = x^{2} \]", r"\begin{align}", r"\label{eq:z}", "grid", r"\textbf{cell", r"\footnotesize note", "% a figure", r"\subsection*{sub"):
        assert words in tex, words
    text = "\n".join(line for line in tex.splitlines() if not line.startswith("%"))  # a comment is inert to its line's end
    assert "\\end{document}" not in text and "<script>" in text.replace(r"\textless{}", "<").replace(r"\textgreater{}", ">")
    doc = tmp_path / "d.tex"
    doc.write_text("\\documentclass{article}\n\\usepackage{amsmath}\\usepackage{booktabs}\n\\begin{document}\n" + tex + "\n\\end{document}\n", encoding="utf-8")
    r = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "d.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=HANG)
    assert r.returncode == 0, r.stdout[-2000:]
