""".gitignore, as lint's directory walk reads it (`--no-respect-gitignore` turns it off).

The subset of gitignore(5) that spec trees use: blank lines and `#` comments are
skipped; `!pattern` re-includes; a trailing `/` matches directories only; a
pattern with a `/` before its end is anchored to its .gitignore's folder, one
without matches a name at any depth; `*`, `?`, `[...]` match within one path
component and `**` across components. Later patterns win, and a deeper
.gitignore is read after those above it. The .gitignore files of the folders
between the repository's root (the nearest folder above with a `.git`) and the
folder walked apply too (outside a repository, those from the folder walked down). Git's global excludes and .git/info/exclude are not read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ctdsl.check.reading import Unreadable, read_source


@dataclass(frozen=True)
class _Pattern:
    base: str  # the folder of its .gitignore, absolute, posix
    regex: re.Pattern
    negate: bool
    dir_only: bool


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("/**", i) and i + 3 == len(glob):
            out.append("/.*")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                inner = glob[i + 1 : j].replace("\\", "\\\\")
                out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner) + "]")
                i = j
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_gitignore(text: str, base: str) -> list[_Pattern]:
    """The patterns of one .gitignore whose folder is `base` (absolute)."""
    out: list[_Pattern] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _glob_to_regex(line)
        regex = re.compile(("" if anchored else "(?:.*/)?") + body + "$")
        out.append(_Pattern(Path(base).as_posix(), regex, negate, dir_only))
    return out


def _read(folder: Path) -> list[_Pattern]:
    f = folder / ".gitignore"
    try:
        if not f.is_file():
            return []
        return parse_gitignore(read_source(f), os.path.abspath(folder))
    except (Unreadable, OSError, ValueError):
        return []  # an unreadable .gitignore ignores nothing


class GitIgnore:
    """Whether a path under walked folders is ignored by the .gitignore files on its way."""

    def __init__(self) -> None:
        self._cache: dict[str, list[_Pattern]] = {}

    def _patterns(self, folder: str) -> list[_Pattern]:
        if folder not in self._cache:
            self._cache[folder] = _read(Path(folder))
        return self._cache[folder]

    @staticmethod
    def _repo_root(folder: Path) -> Path | None:
        for f in [folder, *folder.parents]:
            if (f / ".git").exists():
                return f
        return None

    def ignored(self, path: Path, is_dir: bool, top: Path) -> bool:
        """Whether `path`, found walking `top`, is ignored."""
        p = Path(os.path.abspath(path))
        root = self._repo_root(p.parent) or Path(os.path.abspath(top))  # outside a repository: from `top` down
        chain = [p.parent, *p.parent.parents]
        chain = chain[: chain.index(root) + 1] if root in chain else chain[:1]
        result = False
        for folder in reversed(chain):  # the top first: deeper files override
            for pat in self._patterns(os.fspath(folder)):
                if pat.dir_only and not is_dir:
                    continue
                rel = os.path.relpath(p, pat.base).replace(os.sep, "/")
                if pat.regex.match(rel):
                    result = not pat.negate
        return result


__all__ = ["GitIgnore", "parse_gitignore"]
