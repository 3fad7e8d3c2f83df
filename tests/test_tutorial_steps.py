"""The tutorial's last step runs as written: its commands on the study of step 8.

The spec is the last complete ```ct block of step 8 in docs/tutorial.md, saved as
spec.ct; the commands are the ```sh block of step 12, each run through the CLI
in that folder. Each must exit 0 and write the file it names.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from solvekit import C

ROOT = Path(__file__).resolve().parents[1]
TUTORIAL = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}.*?(?=^## |\Z)", TUTORIAL, flags=re.M | re.S)
    assert m, title
    return m.group(0)


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", text, flags=re.M | re.S)


def _commands() -> list[list[str]]:
    (block,) = _blocks(_section("12."), "sh")
    out = []
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            words = shlex.split(line)
            assert words[0] == "ctdsl", line
            out.append(words[1:])
    return out


COMMANDS = _commands()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("tutorial")
    spec = _blocks(_section("8."), "ct")[-1]
    (d / "spec.ct").write_text(spec, encoding="utf-8")
    return d


def test_the_step_has_the_commands_it_promises():
    assert [c[0] for c in COMMANDS] == ["sweep", "sweep", "report", "export", "lint", "explore"]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_command_runs_as_written(folder, monkeypatch, args):
    monkeypatch.chdir(folder)
    r = CliRunner().invoke(app, args, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    if "-o" in args or "--plot" in args:
        target = args[args.index("-o" if "-o" in args else "--plot") + 1]
        assert (folder / target).stat().st_size > 0


def _solve_block(title: str, tmp_path):
    import ctdsl

    spec = _blocks(_section(title), "ct")[0]
    (tmp_path / "spec.ct").write_text(spec, encoding="utf-8")
    return ctdsl.load(tmp_path / "spec.ct").solve()


def test_step_10s_break_even_is_what_the_text_says(tmp_path):
    (be,) = _solve_block("10.", tmp_path).breakevens
    (root,) = be.result.roots
    assert f"about {round(root.value, -1):,.0f} replicas in east here, found numerically" in " ".join(_section("10.").split())
    assert root.numeric


def test_step_11s_figures_are_what_solve_gives(tmp_path):
    """Each figure the text of step 11 quotes, from the step's own spec."""
    from ctdsl import units as U

    sol = _solve_block("11.", tmp_path)
    text = " ".join(_section("11.").split())
    dp = sol.schemes["dp"]
    c = dp.components
    quoted = [c[C("compute")], c[C("tensor_parallel")], c[C("pipeline_bubble")], dp.inner, c[C("exposed_sync:sync")]]
    for q in quoted:
        assert str(q) in text, str(q)
    roots = {t.scheme: U.format_quantity(t.roots[0].value, t.dim) for t in sol.targets}
    assert f"{roots['dp']} for dp, {roots['diloco']} for DiLoCo and {roots['streaming']} for Streaming DiLoCo" in text
    assert dp.timeline.dcs[0].micro_batches.value == 16  # "1/16 of the backward pass"


def test_step_3s_memory_warning_is_what_solve_prints(tmp_path, monkeypatch):
    """Step 3 quotes the CT425 warning `ctdsl solve` prints for its spec, and its parts add up as the text says."""
    spec = _blocks(_section("3."), "ct")[-1]
    (tmp_path / "spec.ct").write_text(spec, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["solve", "spec.ct"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    (quoted,) = _blocks(_section("3."), "text")
    assert r.stderr.startswith(quoted), r.stderr[:1000]
    text = " ".join(_section("3.").split())
    # 2 + 4 + 12 bytes a parameter of Llama-3 8B (8,029,995,008 parameters, step 1): weights, gradients, AdamW
    p = 8_029_995_008
    for part, nbytes in (("weights", 2), ("gradients", 4), ("optimizer", 12)):
        assert f"{part} {p * nbytes / 1e9:.2f} GB" in quoted
    assert f"needs {p * 18 / 1e9:.1f} GB" in quoted and "144.5 GB against the H100's 80 GB" in text
