"""The HTML writer of the document model (`ctdsl.report.blocks`): a report as one self-contained page
(images as data URIs, each exact form as MathML, selectable and searchable, with its LaTeX source),
and the tables a notebook and the explorer show; every text from a spec escaped."""

from __future__ import annotations

import base64

from ctdsl.version import __version__
from ctdsl.report.blocks import Bullets, Code, Equations, Grid, Image, Math, Name, Para, Prose, Section, TeX, cell_text
from ctdsl.report.encode import html_text as escape

CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; max-width: 1060px; margin: 2em auto; padding: 0 1em; color: #111; line-height: 1.45; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: .6em 0 .3em; font-size: .88em; }
th, td { border: 1px solid #bbb; padding: .25em .55em; text-align: left; vertical-align: top; }
th { background: #eee; } td.mark { font-weight: bold; background: #fff4d6; }
caption { text-align: left; font-weight: bold; padding: .3em 0; }
p.note { font-size: .85em; color: #444; margin: .1em 0 .9em; }
img { max-width: 100%; height: auto; display: block; margin: .6em 0; }
pre { background: #f6f6f6; border: 1px solid #ddd; padding: .6em; overflow-x: auto; font-size: .85em; white-space: pre-wrap; word-break: break-all; }
footer { margin-top: 3em; font-size: .8em; color: #666; }
@media print { body { max-width: none; } h2 { page-break-after: avoid; } img { page-break-inside: avoid; } }
"""


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def grid_html(g: Grid) -> str:
    """An HTML table: its title as the caption, marked cells in bold, notes below it."""
    cap = f"<caption>{escape(g.title)}</caption>" if g.title else ""
    head = "".join(f"<th>{escape(cell_text(h))}</th>" for h in g.header)
    body = []
    for i, row in enumerate(g.rows):
        cells = "".join(
            f'<td class="mark"><b>{escape(cell_text(c))}</b></td>' if (i, j) in g.marked else f"<td>{escape(cell_text(c))}</td>"
            for j, c in enumerate(row)
        )
        body.append(f"<tr>{cells}</tr>")
    foot = "".join(f'<p class="note"><small>{escape(n)}</small></p>' for n in g.notes)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{foot}"


def _html_run(run) -> str:
    """A run of a paragraph: words escaped, a name as code, math as its LaTeX source (there is no
    expression to print MathML from)."""
    if isinstance(run, Name):
        return f"<code>{escape(run.text)}</code>"
    if isinstance(run, TeX):
        return f'<code class="language-latex">{escape(run.tex)}</code>'
    return escape(cell_text(run))


def _html_block(b) -> str:
    if isinstance(b, Para):
        return f"<p>{escape(b.text)}</p>"
    if isinstance(b, Prose):
        head = "<b>" + "".join(_html_run(r) for r in b.head) + "</b> " if b.head else ""
        return "<p>" + head + "".join(_html_run(r) for r in b.runs) + "</p>"
    if isinstance(b, Equations):  # the rows' LaTeX source, as the LaTeX writer aligns them (without labels)
        return f'<pre><code class="language-latex">{escape(b.aligned())}</code></pre>'
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in b.items) + "</ul>"
    if isinstance(b, Code):
        return f"<pre><code>{escape(b.text)}</code></pre>"
    if isinstance(b, Image):
        w = f' width="{b.width}"' if b.width else ""
        return f'<img src="{data_uri(b.png)}" alt="{escape(b.alt)}"{w}>'
    if isinstance(b, Math):  # MathML: text a reader can select and search, no picture
        return b.mathml + f'<pre><code class="language-latex">{escape(b.latex)}</code></pre>'
    if isinstance(b, Grid):
        return grid_html(b)
    if isinstance(b, Section):
        return _html_section(b)
    raise TypeError(b)  # pragma: no cover


def _html_section(s: Section) -> str:
    return f"<section><h{s.level}>{escape(s.title)}</h{s.level}>\n" + "\n".join(_html_block(b) for b in s.blocks) + "\n</section>"


def to_html(title: str, sections: list[Section]) -> str:
    body = "\n".join(_html_section(s) for s in sections)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n{body}\n"
        f"<footer>Made by ctdsl {escape(__version__)}: ctdsl report. Equations rendered by matplotlib mathtext; LaTeX source under each.</footer>\n"
        "</body>\n</html>\n"
    )
