"""Spec text reaching Markdown is shown, never obeyed (issue 25, items 3 and 8).

The attack: an opening comment line `> [docs]: javascript:alert(1)` became a link reference
definition that any `[docs]` elsewhere in report.md used, and a remote image could be planted
the same way; the language server's hover showed field values as raw Markdown. Every case is
rendered by real Markdown implementations, Python-Markdown (what MkDocs uses, with the
extensions MkDocs sites commonly turn on) and markdown-it-py (CommonMark, as GitHub and VS
Code's hovers parse it), and the HTML is read with html.parser: no link, no image but the
report's own data: pictures, no element from the spec, no event handler, and the text reads
as it was written.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.report.encode import md_cell, md_code, md_fence, md_item, md_text

markdown = pytest.importorskip("markdown", reason="Python-Markdown renders the reports (the test extra)")
markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py renders the reports (the test extra)")

PY_MD_EXTENSIONS = ["tables", "fenced_code", "attr_list", "footnotes", "abbr", "def_list", "md_in_html", "toc", "admonition"]

PAYLOADS = [
    "> [docs]: javascript:alert(1)",
    "[docs]: javascript:alert(1)",
    "see [docs] and [docs][] and [x][docs]",
    "![x](https://evil.example/t.png)",
    "![x][img]",
    "[img]: https://evil.example/t.png",
    "<https://evil.example/a>",
    "<me@evil.example>",
    "<img src=https://evil.example/t.png>",
    "<script>alert(1)</script>",
    "<details open ontoggle=alert(1)>x</details>",
    "<!-- hidden -->",
    "[a](javascript:alert(1))",
    "[a]( javascript:alert(1) )",
    "&#106;avascript:alert(1) &lt;b&gt;",
    'a title {: onclick="alert(1)" }',
    "# not a heading",
    "1. not a list",
    "- not a list",
    "+ not a list",
    "```",
    "~~~",
    "[^1]: not a footnote [^1]",
    "*[HTML]: not an abbreviation",
    r"$\href{javascript:alert(1)}{x}$",
    "trailing \\",
    "\\<b>bold?</b>",
    "[ ] not a task",
    "a\u2028b",
    "**bold** and *it* and `code` and __b__ and _i_ and ~~del~~ and ~s~ and ``c`` and *x*y_z_",
]
# the elements that Markdown's inline syntax makes: from spec text, each one is markup obeyed
INLINE = ("em", "strong", "code", "del", "s")


def inline_markup(rendered: str) -> list[str]:
    return [t for t, _ in parse(rendered).tags if t in INLINE]


class _Html(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.tags.append(("!--", {}))


def parse(rendered: str) -> _Html:
    p = _Html()
    p.feed(rendered)
    p.close()
    return p


def renderings(text: str) -> dict[str, str]:
    return {
        "python-markdown": markdown.markdown(text, extensions=PY_MD_EXTENSIONS),
        "markdown-it": markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text),
    }


def active(rendered: str, allowed_images: str = "data:image/png;base64,") -> list[str]:
    """What in the HTML does something: links, images from elsewhere, event handlers, script, raw HTML."""
    out = []
    for tag, attrs in parse(rendered).tags:
        if tag == "a" or tag in ("script", "iframe", "details", "object", "embed", "style", "!--"):
            out.append(f"<{tag} {attrs}>")
        if tag == "img" and not (attrs.get("src") or "").startswith(allowed_images):
            out.append(f"<img {attrs}>")
        out += [f"<{tag} {k}>" for k in attrs if k.startswith("on")]
    return out


def words(rendered: str) -> str:
    return " ".join("".join(parse(rendered).text).split())


# ---- the encoder, in every place a text may stand --------------------------------------------------


def _document(payload: str) -> str:
    """The payload where spec text stands in ctdsl's Markdown: a paragraph, a heading, a list
    item, a table cell, emphasis, a code span and a fenced block; then a paragraph that uses
    the references [docs] and [img], which a definition anywhere would make live."""
    return "\n\n".join(
        [
            md_text(payload),
            f"## {md_text(payload)}",
            f"- {md_item(payload)}",
            f"| a | b |\n|---|---|\n| {md_cell(payload)} | x |",
            f"_{md_text(payload)}_",
            f"value: {md_code(payload)}",
            md_fence(payload + "\n```\n~~~", "ct"),
            "a reference: [docs] and ![pic][img]",
        ]
    )


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_no_spec_text_becomes_a_live_element(payload):
    doc = _document(payload)
    for name, rendered in renderings(doc).items():
        assert active(rendered) == [], (name, active(rendered), rendered)
        assert "javascript" not in " ".join(a.get("href", "") + a.get("src", "") for _, a in parse(rendered).tags)
        assert "evil.example/t.png" not in " ".join(a.get("src", "") for _, a in parse(rendered).tags)
        assert inline_markup(rendered) == ["em", "code", "code"], (name, rendered)  # _document's own, no more


@pytest.mark.parametrize("payload", [p for p in PAYLOADS if "\u2028" not in p], ids=lambda p: p[:20])
def test_the_text_reads_as_it_was_written(payload):
    for name, rendered in renderings(md_text(payload)).items():
        assert words(rendered) == " ".join(payload.split()), (name, rendered)
    for name, rendered in renderings(f"| h |\n|---|\n| {md_cell(payload)} |").items():
        assert words(rendered) == " ".join(("h " + payload).split()), (name, rendered)
    for name, rendered in renderings(md_fence(payload + "\n```\n~~~", "ct")).items():
        assert words(rendered) == " ".join((payload + " ``` ~~~").split()), (name, rendered)


# ---- the documents ctdsl writes ---------------------------------------------------------------------

SPEC = """\
# > [docs]: javascript:alert(1)
#
# ![tracker](https://evil.example/t.png) see [docs] and <img src=https://evil.example/u.png>
#
# [img]: https://evil.example/v.png
# {: onclick="alert(2)" } <script>alert(3)</script>
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000; label = "[docs] ![x][img] [a](javascript:alert(4))" }
scheme fancy { payload = dense; collective = hier_allreduce; steps = 1100; label = "**bold** and *it* and `code`" }
wan east <-> west = eth100g
"""


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "s.ct").write_text(SPEC, encoding="utf-8")
    return tmp_path


def test_report_md_shows_the_opening_comment_and_labels_as_text(here):
    r = CliRunner().invoke(app, ["report", "s.ct", "-o", "r.md"])
    assert r.exit_code == 0, r.output
    text = (here / "r.md").read_text(encoding="utf-8")
    for name, rendered in renderings(text).items():
        assert active(rendered) == [], (name, active(rendered))
        shown = words(rendered)
        assert "> [docs]: javascript:alert(1)" in shown and "[docs] ![x][img] [a](javascript:alert(4))" in shown, name
        assert any(t == "img" for t, _ in parse(rendered).tags), "the report's own figures are there"
        assert "**bold** and *it* and `code`" in shown, name
        assert not _obeyed(rendered), (name, _obeyed(rendered))


class _Inline(HTMLParser):
    """The text of each <em>, <strong> and <code>, nested ones included."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[list[str]] = []
        self.done: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in INLINE:
            self.open.append([])

    def handle_endtag(self, tag):
        if tag in INLINE and self.open:
            self.done.append("".join(self.open.pop()))

    def handle_data(self, data):
        for parts in self.open:
            parts.append(data)


def _obeyed(rendered: str) -> list[str]:
    """Inline markup made from the label `**bold** and *it* and `code``: an element that holds one of its
    words without the delimiters around it (ctdsl's own bold around the whole label holds them)."""
    p = _Inline()
    p.feed(rendered)
    p.close()
    return [t for t in p.done if t.strip() in ("bold", "it", "code")]


def test_solve_markdown_shows_labels_as_text(here):
    r = CliRunner().invoke(app, ["solve", "s.ct", "-f", "markdown"])
    assert r.exit_code == 0, r.output
    for name, rendered in renderings(r.stdout).items():
        assert active(rendered) == [], (name, active(rendered))
        assert "[docs] ![x][img] [a](javascript:alert(4))" in words(rendered), name
    (here / "t.ct").write_text(SPEC.replace("steps = 1100", "steps = 900"), encoding="utf-8")  # fancy first: its label shown
    r = CliRunner().invoke(app, ["solve", "t.ct", "-f", "markdown"])
    assert r.exit_code == 0, r.output
    for name, rendered in renderings(r.stdout).items():
        assert "**bold** and *it* and `code`" in words(rendered), name
        assert not _obeyed(rendered), (name, _obeyed(rendered))


# ---- the language server's hover ------------------------------------------------------------------------

pytest.importorskip("pygls", reason="the language server needs pygls: pip install 'ctdsl[lsp]'")

HOVERED = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
param bw = 12.5 GB/s in 1 GB/s .. 100 GB/s "b_{x}"   # ![t](https://evil.example/p.png) [x](javascript:alert(1))
link l : eth100g { bandwidth = bw; latency = 1 ms }   # ![t](https://evil.example/q.png)
scheme s { payload = dense; collective = hier_allreduce; steps = 1000; label = "![t](https://evil.example/r.png) <img src=https://evil.example/s.png> [a](javascript:alert(2)) | cell" }
"""


@pytest.fixture(scope="module")
def lsp():
    from lspkit import Session

    s = Session()
    yield s
    s.close()


@pytest.mark.parametrize(
    "where, says",
    [
        ((6, 8), "label"),  # the scheme `s`: a table of its fields, the label as written
        ((4, 7), "display: `b_{x}`"),  # the param: its statement, its value, its display name
        ((5, 6), "bandwidth"),  # the link: its fields, inherited ones from the preset
    ],
)
def test_hover_shows_spec_text_as_text(lsp, tmp_path, where, says):
    uri = lsp.open(tmp_path / "h.ct", HOVERED)
    lsp.diagnostics(uri)
    text = lsp.hover(uri, *where)
    assert text is not None and says in html.unescape(text).replace("\\", "")
    for name, rendered in renderings(text).items():
        assert active(rendered) == [], (name, active(rendered), text)
        assert "evil.example" not in " ".join(a.get("src", "") + a.get("href", "") for _, a in parse(rendered).tags)


def test_hover_on_an_import_shows_its_path_as_text(lsp, tmp_path):
    folder = tmp_path / "imp"
    folder.mkdir()
    name = "x` <img src=x onerror=alert(1)> [a](javascript:alert(1)) `y.ct"  # a file's name holds no '/'

    (folder / name).write_text("param z = 1 ms\n", encoding="utf-8")
    text = f'import "{name}"\nparam w = z\n'
    uri = lsp.open(folder / "main.ct", text)
    lsp.diagnostics(uri)
    hovered = lsp.hover(uri, 0, 10)
    assert hovered is not None and "imports" in hovered
    for rendered in renderings(hovered).values():
        assert active(rendered) == [], hovered
        assert name in words(rendered)
