"""Spec text with characters pdflatex has no glyph for still gives LaTeX that compiles.

A label holding U+2028 made `ctdsl export latex` write a file pdflatex stops on
("Unicode character not set up for use with LaTeX"; found by the fuzz campaign's
pdflatex sample, seed 25, input 26); so did a BiDi control, a zero-width space,
Greek and any emoji. tex_text keeps the characters the LaTeX kernel typesets by
default and writes any other as its code (\\u{2028} in the text). Real pdflatex
is the judge here: the export with such a label compiles, and so does a page of
every character tex_text keeps as it is.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from backstop import HANG
from ctdsl.cli import app
from ctdsl.report.encode import tex_text, tex_text_to_mathjax

runner = CliRunner()
UNSET = "\u2028\u202e\u200b\u03b7\U0001f600"  # a line separator, a BiDi override, a zero-width space, eta, an emoji
KEPT = "\u00e9 \u2192 \u00fc \u2013 \u201cq\u201d \u00b5"  # e-acute, an arrow, u-umlaut, an en dash, quotes, micro

SPEC = f"""import std.devices
import std.links
import std.models

param wan_bw = 12.5 GB/s in 0.1 GB/s .. 1000 GB/s log 9

model job : llama3_8b {{ tokens = 8192 }}
device gpu0 : h100 {{ efficiency = 0.4 }}
switch tor {{ }}
dc east {{ workers = 4; device = gpu0; link = ib_ndr; switch = tor }}
dc west : east {{}}
link wan {{ bandwidth = wan_bw; latency = 30 ms }}
wan east <-> west = wan
scheme ring {{ label = "a{UNSET}b {KEPT}"; payload = dense; collective = ring_allreduce }}
"""


def _pdflatex(where, name: str) -> subprocess.CompletedProcess:
    if shutil.which("pdflatex") is None or subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True).returncode != 0:
        pytest.skip("pdflatex with siunitx is not installed")
    return subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
                          cwd=where, capture_output=True, text=True, errors="replace", timeout=HANG)


def test_a_label_with_characters_pdflatex_cannot_set_still_compiles(tmp_path):
    spec = tmp_path / "u.ct"
    spec.write_text(SPEC, encoding="utf-8")
    out = tmp_path / "u.tex"
    r = runner.invoke(app, ["export", "latex", str(spec), "--standalone", "-o", str(out)])
    assert r.exit_code == 0, r.output
    tex = out.read_text(encoding="utf-8")
    assert not any(c in tex for c in UNSET)
    assert r"\textbackslash u\{2028\}\textbackslash u\{202e\}\textbackslash u\{200b\}\textbackslash u\{03b7\}" in tex
    assert KEPT in tex  # what LaTeX typesets stays as written
    proc = _pdflatex(tmp_path, "u.tex")
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_every_character_tex_text_keeps_is_typeset_by_pdflatex(tmp_path):
    probed = [*range(0xA0, 0x250), *range(0x370, 0x400), *range(0x2000, 0x2300)]
    kept = [chr(c) for c in probed if tex_text(chr(c)) == chr(c)]
    assert 200 < len(kept) < len(probed) / 2  # Latin-1 and more are kept, Greek and most symbols are not
    body = "\n".join(rf"\paragraph{{U+{ord(c):04X} a{c}b}} x\par" for c in kept)
    (tmp_path / "k.tex").write_text("\\documentclass{article}\n\\begin{document}\n" + body + "\n\\end{document}\n",
                                    encoding="utf-8")
    proc = _pdflatex(tmp_path, "k.tex")
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_a_notebook_shows_the_character_pdflatex_gets_as_its_code():
    """MathJax has the glyphs: the notebook's blocks (tex_text's output made MathJax-safe) show the character."""
    assert tex_text_to_mathjax(r"\text{" + tex_text("\u03b7 = 0.4") + "}") == "\\text{\u03b7 = 0.4}"
    # a label that writes the code itself is text, not a character
    assert "\u03b7" not in tex_text_to_mathjax(r"\text{" + tex_text("\\u{03b7}") + "}")
