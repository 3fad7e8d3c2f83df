"""A display name never combines with what a printer appends into a TeX escape or a broken group.

Issue 25, item 7. `"b^"` passed the checker, and the printer appended `^{*}` to
a break-even's param: `b^^{*}`, which TeX reads as its `^^{` character escape
(a `;`, leaving the `}` unbalanced). The rule for safe names
(`ctdsl.language.texname`) now reads a name as a math list: every script has its
argument, no nucleus has two superscripts; and the printers compose with
`texname.atom`, the name in braces when it already ends with a superscript.

Each hostile name is run through `export latex --standalone` on a spec whose
break-even has a root (so `^{*}` is appended): it is refused (CT310, nothing
written) or the .tex compiles with real pdflatex. Then every name the rule
accepts, from a list and from random strings over the alphabet it allows, is
composed the ways the printers compose it (the root's `^{*}`, sympy's powers,
roots and fractions, the model's printer) into one document that must compile.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
import sympy as sp
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.language.texname import atom, problem, safe_display
from ctdsl.model import expr as E
from ctdsl.model.printers import latex, latex_name
from ctdsl.report.encode import tex_display

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()

HAVE_TEX = shutil.which("pdflatex") is not None and subprocess.run(["kpsewhich", "siunitx.sty"], capture_output=True).returncode == 0
needs_tex = pytest.mark.skipif(not HAVE_TEX, reason="pdflatex with siunitx is not installed")

HOSTILE = [
    "b^",
    "b_",
    "b^{2}",
    "b^{2}^{3}",
    "b_{1}_{2}",
    "b'",
    "b''",
    "b^2'",
    "b'^2",
    "b^_{x}",
    r"b^\alpha",
    r"\mathrm{b}^",
    r"\mathrm",
    r"b\mathrm",
    r"\mathrm x",
    r"\text{b_1}",
    r"\text{b}",
    "b^{}",
    "b^{x^{y}}",
    "{b}^",
    "b_{x}",
    "b^ ",
    r"b_{\mathrm{WAN}}^{2}",
]


def _spec(display: str) -> str:
    """examples/16_variants.ct with a display name on wan_bw: its break-evens have roots."""
    src = (ROOT / "examples" / "16_variants.ct").read_text(encoding="utf-8")
    old = '"b_{\\mathrm{WAN}}"'
    assert old in src
    return src.replace(old, '"' + display + '"')


def _compile(where: Path, name: str) -> None:
    proc = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout[-3000:]


@needs_tex
@pytest.mark.parametrize("display", HOSTILE)
def test_a_hostile_display_name_is_refused_or_compiles(tmp_path, display, monkeypatch):
    monkeypatch.chdir(ROOT / "examples")  # the example's imports resolve from there
    spec = tmp_path / "spec.ct"
    spec.write_text(_spec(display), encoding="utf-8")
    out = tmp_path / "study.tex"
    r = runner.invoke(app, ["export", "latex", str(spec), "--standalone", "-o", str(out)])
    if problem(display) is not None:
        assert r.exit_code == 1 and "CT310" in r.output and "not safe LaTeX math" in r.output, r.output
        assert not out.exists()
        return
    assert r.exit_code == 0, r.output
    tex = out.read_text(encoding="utf-8")
    assert "^^" not in tex
    assert tex.count(atom(display) + "^{*}") >= 1  # a root of the break-even, starred
    _compile(tmp_path, "study.tex")


def test_the_rule_refuses_what_would_break_and_keeps_what_reads():
    for bad in ("b^", "b_", "b^{2}^{3}", "b_1_2", "b^2'", "b^_x", r"\text{a_b}", r"b\mathrm", "b^ ", r"b^\input", r"\text\alpha", r"\mathrm\text{a}", r"x^\mathrm{a}", "x'_1'"):
        assert not safe_display(bad), bad
        assert tex_display(bad).startswith(r"\text{") and "^^" not in tex_display(bad)
    for good in (r"b_{\mathrm{WAN}}", r"\eta", r"\rho_{\mathrm{WAN}}", "b^{2}", "x'", "x'^2", r"\mathrm x", "b^{x^{y}}", "b_1^2"):
        assert safe_display(good), good
    # the composable form: braces only where the last nucleus has a superscript already
    assert atom(r"b_{\mathrm{WAN}}") == r"b_{\mathrm{WAN}}" and atom("b^{2}") == "{b^{2}}" and atom("b_1^2") == "{b_1^2}"
    assert atom("x'") == "{x'}" and atom(r"b^{2}\eta") == r"b^{2}\eta"


_ALPHABET = ["b", "x", "1", "^", "_", "{", "}", "'", " ", ",", "-", r"\alpha", r"\mathrm", r"\text", "{a}"]


def _accepted_names(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    names: set[str] = set()
    while len(names) < n:
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 9)))
        if safe_display(text) and text.strip():
            names.add(text)
    return sorted(names)


@needs_tex
def test_every_accepted_name_composes_into_tex_that_compiles(tmp_path):
    """Each name the rule accepts, composed as each printer composes it, in one document."""
    names = sorted(set(_accepted_names(300, seed=25)) | {d for d in HOSTILE if safe_display(d)})
    x, y = sp.symbols("x y", positive=True)
    lines = []
    for name in names:
        shown = tex_display(name)
        forms = [
            shown,
            shown + "^{*}",  # a break-even's root (latex.py, document.py, paper.py)
            sp.latex(x**2 * y, symbol_names={x: shown, y: "c"}),
            sp.latex(sp.sqrt(x) + 1 / x**3, symbol_names={x: shown}),
            latex(E.Pow(E.Sym("w"), Fraction(2)) * E.Sym("w"), lambda _n: latex_name("w", name)),
        ]
        lines.append(" \\quad ".join(f"${f}$" for f in forms) + r"\par")
    doc = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + "\n".join(lines) + "\n\\end{document}\n"
    (tmp_path / "names.tex").write_text(doc, encoding="utf-8")
    assert "^^" not in doc
    _compile(tmp_path, "names.tex")
    assert len(names) >= 300
