"""A .gitignore never hides a tracked spec from lint (issue 25, item 5), and git's own rules
decide what it ignores (pathspec, issue 30).

The attack: a pull request commits a spec with a finding and, beside it, a .gitignore naming
it; `ctdsl lint .` skipped it and printed "All checks passed". Which files are tracked is
read from the index by ctdsl.lint.gitindex, without running git; the tests build real
repositories with git and compare that reader with `git ls-files` (an independent method),
in index formats 2, 3 and 4, split, and with SHA-256 object names.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ctdsl.cli import app
from ctdsl.lint.gitindex import tracked

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git builds the repositories these tests read")

CLEAN = """\
import std.devices
import std.links
import std.models
model m : llama3_8b { tokens = 4096 }
device accel : h100 { efficiency = 0.4 }
switch tor { sum = true }
dc east { workers = 4; device = accel; link = nvlink4; switch = tor }
dc west : east {}
scheme dense { payload = dense; collective = hier_allreduce; steps = 1000 }
wan east <-> west = eth100g
"""
FINDING = CLEAN + "param spare = 1 ms\n"  # CTL001 on line 11


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run([GIT, "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    git(tmp_path, "init", "-q")
    return tmp_path


def lint(*args: str):
    return CliRunner().invoke(app, ["lint", *args])


@needs_git
def test_a_tracked_spec_is_linted_whatever_a_gitignore_beside_it_says(repo):
    write(repo / "specs" / "a.ct", FINDING)
    write(repo / "specs" / ".gitignore", "a.ct\nscratch.ct\n")
    git(repo, "add", "-f", "specs/a.ct", "specs/.gitignore")
    write(repo / "specs" / "scratch.ct", FINDING)  # ignored and not tracked: skipped
    r = lint(".", "-f", "concise")
    assert r.stdout == "specs/a.ct:11:7: CTL001 param 'spare' is defined but never used\n", r.stdout
    assert json.loads(lint(".", "-f", "json").stdout)["files"] == ["specs/a.ct"]


@needs_git
def test_an_ignored_folder_that_holds_a_tracked_spec_is_walked_for_it_alone(repo):
    write(repo / ".gitignore", "out/\n")
    write(repo / "out" / "deep" / "kept.ct", CLEAN)
    git(repo, "add", "-f", "out/deep/kept.ct")
    write(repo / "out" / "deep" / "new.ct", CLEAN)
    write(repo / "out" / "other" / "x.ct", CLEAN)
    assert json.loads(lint(".", "-f", "json").stdout)["files"] == ["out/deep/kept.ct"]


@needs_git
def test_git_need_not_be_installed(repo, monkeypatch):
    write(repo / "a.ct", FINDING)
    write(repo / ".gitignore", "*.ct\n")
    git(repo, "add", "-f", "a.ct")
    monkeypatch.setenv("PATH", "")  # no git to run: the index is read, not asked for
    assert json.loads(lint(".", "-f", "json").stdout)["files"] == ["a.ct"]


@needs_git
def test_an_index_that_cannot_be_read_skips_nothing_and_says_so(repo):
    write(repo / "a.ct", FINDING)
    write(repo / ".gitignore", "*.ct\n")
    git(repo, "add", "-f", "a.ct")
    index = repo / ".git" / "index"
    index.write_bytes(index.read_bytes()[:40])  # cut short
    r = lint(".", "-f", "json")
    assert json.loads(r.stdout)["files"] == ["a.ct"]
    assert "cannot read git's index" in r.stderr


@needs_git
@pytest.mark.parametrize("form", ["v2", "v3", "v4", "split", "sha256", "worktree"])
def test_the_index_reader_agrees_with_git_ls_files(tmp_path, form):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", *(["--object-format=sha256"] if form == "sha256" else []))
    names = ["a.ct", "specs/b.ct", "specs/deep/c d.ct", "ünïcode/é.ct", "x" * 200 + ".ct", "specs/deep/" + "y" * 120 + "/z.ct"]
    for n in names:
        write(repo / n, "param x = 1 ms\n")
    git(repo, "add", ".")
    if form == "v3":
        git(repo, "update-index", "--index-version", "3")
        git(repo, "update-index", "--skip-worktree", "a.ct")  # an extended flag: v3's two more bytes
    if form == "v4":
        git(repo, "update-index", "--index-version", "4")
    if form == "split":
        git(repo, "commit", "-q", "-m", "x")
        git(repo, "update-index", "--split-index")
        write(repo / "later.ct", "param y = 1 ms\n")
        git(repo, "add", "later.ct")
    root = repo
    if form == "worktree":
        git(repo, "commit", "-q", "-m", "x")
        git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
        root = tmp_path / "wt"  # its .git is a file naming the worktree's git folder
    listed = set(git(root, "ls-files", "-z").split("\0")) - {""}
    got = tracked(root)
    assert got is not None and got.files == listed
    assert got.holds("specs/deep", True) and not got.holds("ünïcode/none.ct", False)


@needs_git
def test_a_sparse_index_folder_holds_its_files(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for n in ["top.ct", "specs/a.ct", "far/b.ct", "far/deep/c.ct"]:
        write(repo / n, "param x = 1 ms\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")
    git(repo, "sparse-checkout", "init", "--cone", "--sparse-index")
    git(repo, "sparse-checkout", "set", "specs")
    listed = set(git(repo, "ls-files", "-z", "--sparse").split("\0")) - {""}
    got = tracked(repo)
    assert got is not None and got.files | {f + "/" for f in got.sparse} == listed
    assert "far/" in listed, "the index really is sparse: far/ is one entry"
    assert got.holds("far/deep/c.ct", False) and got.holds("far/deep", True) and not got.holds("elsewhere.ct", False)
