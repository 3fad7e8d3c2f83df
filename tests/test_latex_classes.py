"""Every shipped spec's `export latex --columns 2`, compiled by real pdflatex in the classes papers
use: a two-column article, IEEEtran (conference) and acmart (sigconf), with zero overfull boxes
read from pdflatex's own log (issue 30: examples/20_codesign_study.ct ran 2,078 pt past its
column, acmart's paragraphs 6.4 pt).

Cheap by design: the fragments of all the specs are made once (in this process) and `\\input`
into one document per class, compiled once each (no references are checked here:
tests/test_paper_latex.py compiles twice for those). The same fragments are checked for the
rules an equation is broken by: no line starts with a comma, no number is printed with a
trailing `.0`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import ctdsl
from backstop import HANG
from ctdsl.report.paper import paper_latex

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted([*ROOT.glob("specs/*.ct"), *ROOT.glob("examples/*.ct"), ROOT / "tests" / "data" / "tpxpp_step.ct"])
PDFLATEX = shutil.which("pdflatex")
PREAMBLE = r"\usepackage{amsmath}\usepackage{booktabs}\usepackage{siunitx}\DeclareSIUnit\flop{FLOP}"
CLASSES = {
    "article": (r"\documentclass[10pt,twocolumn]{article}", "", "article.cls"),
    "ieeetran": (r"\documentclass[conference]{IEEEtran}", "", "IEEEtran.cls"),
    "acmart": (
        r"\documentclass[sigconf]{acmart}\settopmatter{printacmref=false}\setcopyright{none}",
        r"\title{ctdsl}\maketitle",
        "acmart.cls",
    ),
}


def _found(name: str) -> bool:
    kpse = shutil.which("kpsewhich")
    return kpse is not None and subprocess.run([kpse, name], capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def fragments(tmp_path_factory) -> Path:
    """Each spec's two-column fragment (labels prefixed by its number), and body.tex inputting them all."""
    folder = tmp_path_factory.mktemp("classes")
    body = []
    for i, spec in enumerate(SPECS):
        tex = paper_latex(ctdsl.load(str(spec)).solve(), columns=2, prefix=f"s{i}")
        (folder / f"s{i}.tex").write_text(tex, encoding="utf-8")
        body.append(rf"\section{{{spec.stem.replace('_', '-')}}}\input{{s{i}}}\clearpage")
    (folder / "body.tex").write_text("\n".join(body) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("cls", list(CLASSES))
def test_every_spec_compiles_without_overfull_boxes(fragments, cls):
    head, top, needs = CLASSES[cls]
    if PDFLATEX is None or not _found("siunitx.sty") or not _found(needs):
        pytest.skip(f"pdflatex with siunitx and {needs} is not installed (.ci/setup.d/texlive-classes.sh installs them)")
    (fragments / f"{cls}.tex").write_text(f"{head}\n{PREAMBLE}\n\\begin{{document}}\n{top}\\input{{body}}\n\\end{{document}}\n")
    proc = subprocess.run(
        [PDFLATEX, "-draftmode", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", f"{cls}.tex"],
        cwd=fragments, capture_output=True, text=True, timeout=HANG,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (fragments / f"{cls}.log").read_text(encoding="latin-1")
    assert "Overfull" not in log, [line for line in log.splitlines() if "Overfull" in line]


def test_equations_break_at_operators(fragments):
    """No row of an equation starts with a comma; no number is printed `1999.0` or `8.0 \\cdot 10^{8}`."""
    for tex in sorted(fragments.glob("s*.tex")):
        rows = [r.strip() for r in tex.read_text(encoding="utf-8").split("\\\\\n")]
        assert not [r for r in rows if r.startswith(("&\\quad ,", "&\\qquad ,", ","))], tex.name
        assert not re.findall(r"(?<![\d.])\d+\.0(?!\d)", tex.read_text(encoding="utf-8")), tex.name


def test_the_same_spec_gives_the_same_bytes_whatever_the_hash_seed():
    """The notes of the maxes dropped from a form come in a fixed order: llama405b_3dc's two (in t_2) were
    written in the order of a set, which Python's string hashing changes from run to run (seeds 1 and 3
    gave different files)."""
    import os
    import sys

    outs = set()
    for seed in ("1", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        code = "import sys; from ctdsl.cli import main; sys.argv = [\"ctdsl\", \"export\", \"latex\", sys.argv[1]]; main()"
        proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "specs" / "llama405b_3dc.ct")],
                              capture_output=True, env=env, timeout=HANG, cwd=ROOT)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        outs.add(proc.stdout)
    assert len(outs) == 1
