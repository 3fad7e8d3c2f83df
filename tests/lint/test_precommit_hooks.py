""".pre-commit-hooks.yaml: the hooks this repository offers, read as pre-commit reads them.

pre-commit (https://pre-commit.com/#new-hooks) requires `id`, `name`, `entry` and
`language` of every hook, matches `files` as a Python regular expression against each
staged path, and runs `entry` with the matching paths appended. These tests read the
file with a YAML parser, check it against those rules, and run each hook's entry the
way pre-commit would, on one clean spec and one with a finding.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
# pre-commit's languages (pre-commit/pre-commit, pre_commit/languages/): those a hook of ours may use
LANGUAGES = {"python", "system"}

CLEAN = (ROOT / "examples" / "06_links.ct").read_text(encoding="utf-8")  # lints clean (test_specs.py)


def test_every_hook_has_what_pre_commit_requires():
    assert isinstance(HOOKS, list) and HOOKS
    ids = [h["id"] for h in HOOKS]
    assert len(ids) == len(set(ids))
    for hook in HOOKS:
        assert {"id", "name", "entry", "language"} <= set(hook), hook
        assert hook["language"] in LANGUAGES, hook
        pattern = re.compile(hook["files"])
        assert pattern.search("specs/llama70b_wan.ct") and pattern.search("x.ct")
        assert not pattern.search("x.py") and not pattern.search("x.cts")
        assert shlex.split(hook["entry"])[0] in SCRIPTS, f"{hook['id']}: its entry is not a console script of the package"


@pytest.mark.parametrize("hook", HOOKS, ids=[h["id"] for h in HOOKS])
def test_each_hook_runs_as_pre_commit_runs_it(hook, tmp_path):
    (tmp_path / "ok.ct").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "bad.ct").write_text(CLEAN.replace("  link = leaf\n", "  link = leaff\n"), encoding="utf-8")
    argv = shlex.split(hook["entry"])
    cmd = [sys.executable, "-c", "from ctdsl.cli import main; main()", *argv[1:], *hook.get("args", [])]

    def run(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run([*cmd, *files], cwd=tmp_path, capture_output=True, text=True, timeout=3600)  # a backstop, not a measure: HANG of tests/backstop.py

    ok = run("ok.ct")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = run("ok.ct", "bad.ct")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    line = CLEAN.splitlines().index("  link = leaf") + 1
    assert f"bad.ct:{line}:" in bad.stdout and "ok.ct:" not in bad.stdout
