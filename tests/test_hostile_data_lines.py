"""JSON and LaTeX that ctdsl prints hold no CI runner's command; the JSON still parses to what the spec wrote.

Azure Pipelines obeys `##vso[...]` anywhere in a line of a step's output (the agent looks for
the prefix with IndexOf), and GitHub Actions `##[error]` and its kin anywhere in a line (the
runner's older command form, actions/runner ActionCommand.TryParse). A label, a file name or a
spec line in a finding's excerpt reaches JSON on stdout as a string: `solve --format json` with
a label `##vso[task.setvariable variable=x]1` set a pipeline variable in the log of a CI job
that printed it (found by the fuzz campaign, seed 31, input 36). A `#` occurs in JSON only
inside a string, where `\\u0023` is JSON's own way of writing it: every `#` after a `#` is
written so, and a JSON reader gets the same value. export latex names the spec's file in its
first line, a TeX comment, where a zero-width joiner between the `#`s changes nothing TeX reads
(found by the campaign too, seed 31, input 138). `runner_commands` reads output as both
runners do.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app

VSO = "##vso[task.setvariable variable=pwned]1"
SPEC = f"""\
import std.devices
import std.links
import std.models
model m : llama3_8b {{ tokens = 4096 }}
device accel : h100 {{ efficiency = 0.4 }}
switch tor {{ sum = true }}
dc east {{ workers = 4; device = accel; link = nvlink4; switch = tor }}
dc west : east {{}}
scheme dense {{ payload = dense; collective = hier_allreduce; steps = 1000; label = "{VSO} ###[error]x" }}
link eth100g_dci {{ bandwidth = 100 GB/s; latency = 1 ms }}  # {VSO}
wan east <-> west = eth100g_dci
param spare = 1 ms
"""
NAME = f"{VSO}.ct"  # lint's JSON and SARIF name the file (and hold no excerpt)


def runner_commands(output: str) -> list[str]:
    return [line for line in re.split(r"\r\n|\r|\n", output) if "##vso[" in line or "##[" in line]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / NAME).write_text(SPEC, encoding="utf-8")
    return tmp_path


def strings(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from strings(v)
    elif isinstance(x, str):
        yield x


@pytest.mark.parametrize("command", [
    ("solve", NAME, "--format", "json"),
    ("simulate", NAME, "--steps", "2", "--seeds", "2", "--warmup", "0", "--format", "json", "--no-progress"),
    ("lint", NAME, "--format", "json"),  # (SARIF writes the name as a URI: %23%23vso%5B...)
], ids=lambda c: c[0])
def test_json_on_stdout_starts_no_command_and_reads_back_as_written(here, command):
    r = CliRunner().invoke(app, list(command))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 1), r.stdout
    assert runner_commands(r.stdout) == []
    found = [s for s in strings(json.loads(r.stdout)) if "##vso[" in s]
    assert found, r.stdout[:2000]  # not vacuous: the text is there, as the spec wrote it
    if command[0] == "solve":
        assert f"{VSO} ###[error]x" in found


def test_the_latex_export_names_the_file_in_a_comment_that_starts_no_command(here):
    r = CliRunner().invoke(app, ["export", "latex", NAME])
    assert r.exit_code == 0, r.stdout
    assert runner_commands(r.stdout) == []
    first = r.stdout.splitlines()[0]
    assert first.startswith("% ") and first.replace("\u2060", "").endswith(f"export latex of {NAME}")
