""".gitignore, as lint's directory walk reads it (`--no-respect-gitignore` turns it off).

The patterns are git's, matched by pathspec's `GitIgnoreSpec` (git's own rules:
negation, anchoring, `**`, directory-only patterns, and the last matching
pattern wins). A folder's .gitignore applies below it and a deeper one is
read after those above it; the .gitignore files of the folders between the
repository's root (the nearest folder above with a `.git`) and the folder
walked apply too (outside a repository, those from the folder walked down).
Git's global excludes and .git/info/exclude are not read.

A file git tracks is never ignored, nor is a folder that holds one: what a
pull request commits is linted, whatever a .gitignore beside it says. The
tracked files are read from the repository's index (`ctdsl.lint.gitindex`,
without running git); when the index cannot be read, no .gitignore skips
anything in that repository (`unknown` names it), so a tracked spec is never
skipped on a guess.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from ctdsl.check.reading import Unreadable, read_source
from ctdsl.diagnostics.lines import split_lines
from ctdsl.lint.gitindex import Tracked, relative, tracked


def parse_gitignore(text: str) -> pathspec.GitIgnoreSpec:
    """The patterns of one .gitignore file."""
    return pathspec.GitIgnoreSpec.from_lines(split_lines(text))


def _read(folder: Path) -> pathspec.GitIgnoreSpec | None:
    f = folder / ".gitignore"
    try:
        if not f.is_file():
            return None
        return parse_gitignore(read_source(f))
    except (Unreadable, OSError, ValueError):
        return None  # an unreadable .gitignore ignores nothing


class GitIgnore:
    """Whether a path under walked folders is ignored by the .gitignore files on its way (never a tracked one)."""

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._tracked: dict[str, Tracked | None] = {}
        self.unknown: set[str] = set()  # repositories whose index could not be read

    def _spec(self, folder: Path) -> pathspec.GitIgnoreSpec | None:
        key = os.fspath(folder)
        if key not in self._specs:
            self._specs[key] = _read(folder)
        return self._specs[key]

    def _tracked_in(self, root: Path) -> Tracked | None:
        key = os.fspath(root)
        if key not in self._tracked:
            self._tracked[key] = tracked(root)
            if self._tracked[key] is None:
                self.unknown.add(key)
        return self._tracked[key]

    @staticmethod
    def _repo_root(folder: Path) -> Path | None:
        for f in [folder, *folder.parents]:
            if (f / ".git").exists():
                return f
        return None

    def ignored(self, path: Path, is_dir: bool, top: Path) -> bool:
        """Whether `path`, found walking `top`, is ignored."""
        p = Path(os.path.abspath(path))
        repo = self._repo_root(p.parent)
        root = repo or Path(os.path.abspath(top))  # outside a repository: from `top` down
        chain = [p.parent, *p.parent.parents]
        chain = chain[: chain.index(root) + 1] if root in chain else chain[:1]
        result = False
        for folder in reversed(chain):  # the top first: deeper files override
            spec = self._spec(folder)
            if spec is None:
                continue
            rel = relative(p, folder) + ("/" if is_dir else "")
            verdict = spec.check_file(rel).include
            if verdict is not None:
                result = verdict
        if not result or repo is None:
            return result
        known = self._tracked_in(repo)
        if known is None:
            return False  # the index cannot be read: nothing is skipped on a guess
        return not known.holds(relative(p, repo), is_dir)


__all__ = ["GitIgnore", "parse_gitignore"]
