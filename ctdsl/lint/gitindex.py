"""The files git tracks, read from the repository's index without running git.

Lint's directory walk skips what .gitignore files ignore, but never a file git
tracks: a .gitignore committed beside a spec cannot hide it from CI. Which
files are tracked is what `git ls-files` prints; it is read here from the index
itself (`.git/index`, format versions 2, 3 and 4, SHA-1 or SHA-256 object
names, a split index's shared part, a sparse index's directory entries), so
git need not be installed, and no git command (whose configuration a checkout
may set, `core.fsmonitor` runs a program) is ever run on a tree lint reads.

`tracked(root)` returns None when the index cannot be read (a format this does
not know, a file cut short, over `MAX_INDEX_BYTES`): the walk then lets no
.gitignore skip a file, rather than risk skipping a tracked one, and says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

MAX_INDEX_BYTES = 268_435_456  # bytes of git's index read (256 MiB: a few million files); past it, tracked files are not known


class UnreadableIndex(Exception):
    """The index cannot be read: why."""


@dataclass
class Tracked:
    """Paths (relative to the repository's root, '/'-separated) git tracks, and the folders that hold one."""

    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)  # every folder above a tracked file
    sparse: set[str] = field(default_factory=set)  # a sparse index's folder entries: tracked files below, unnamed

    def add(self, path: str, is_dir: bool = False) -> None:
        path = path.rstrip("/")
        (self.sparse if is_dir else self.files).add(path)
        parts = path.split("/")
        self.folders.update("/".join(parts[:i]) for i in range(1, len(parts)))

    def holds(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is tracked (a file) or holds a tracked file (a folder)."""
        if rel in (self.folders if is_dir else self.files) or (is_dir and rel in self.sparse):
            return True
        parts = rel.split("/")
        return any("/".join(parts[:i]) in self.sparse for i in range(1, len(parts) + 1))


def git_dir(root: Path) -> Path | None:
    """The repository's git directory: `.git`, or where a `.git` file (a worktree, a submodule) points."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        try:
            text = dot.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            return None
        m = re.match(r"gitdir:\s*(.+?)\s*$", text, re.M)
        if m:
            target = Path(m.group(1))
            return target if target.is_absolute() else (root / target)
    return None


def _hash_size(gitdir: Path) -> int:
    """20 bytes (SHA-1), or 32 in a repository whose object format is SHA-256."""
    for config in (gitdir / "config", gitdir.parent / "config" if gitdir.parent.name == "worktrees" else None):
        try:
            if config is not None and re.search(r"objectformat\s*=\s*sha256", config.read_text(encoding="utf-8", errors="replace"), re.I):
                return 32
        except OSError:
            continue
    commondir = gitdir / "commondir"
    if commondir.is_file():
        try:
            common = gitdir / commondir.read_text(encoding="utf-8").strip()
            if re.search(r"objectformat\s*=\s*sha256", (common / "config").read_text(encoding="utf-8", errors="replace"), re.I):
                return 32
        except OSError:
            pass
    return 20


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset encoding (index format 4's prefix lengths)."""
    c = data[pos]
    pos += 1
    value = c & 0x7F
    while c & 0x80:
        value += 1
        c = data[pos]
        pos += 1
        value = (value << 7) + (c & 0x7F)
    return value, pos


def _entries(data: bytes, hash_size: int, into: Tracked) -> bytes | None:
    """Add the entries of one index file to `into`; return the shared index's name of a split index, if any."""
    if len(data) < 12 or data[:4] != b"DIRC":
        raise UnreadableIndex("not a git index")
    version = int.from_bytes(data[4:8], "big")
    if version not in (2, 3, 4):
        raise UnreadableIndex(f"index format {version}")
    count = int.from_bytes(data[8:12], "big")
    fixed = 40 + hash_size  # times, dev, ino, mode, uid, gid, size; the object name
    if count > len(data) // (fixed + 2):
        raise UnreadableIndex("more entries than the file holds")
    pos, previous = 12, b""
    try:
        for _ in range(count):
            start = pos
            mode = int.from_bytes(data[start + 24 : start + 28], "big")
            pos += fixed
            flags = int.from_bytes(data[pos : pos + 2], "big")
            pos += 2
            if version >= 3 and flags & 0x4000:
                pos += 2  # extended flags
            if version == 4:
                strip, pos = _varint(data, pos)
                end = data.index(b"\0", pos)
                name = previous[: len(previous) - strip] + data[pos:end]
                pos = end + 1
            else:
                length = flags & 0x0FFF
                end = pos + length if length < 0x0FFF else data.index(b"\0", pos)
                name = data[pos:end]
                pos = start + ((end - start + 8) & ~7)  # NUL-padded to a multiple of 8 bytes
            previous = name
            if name:  # a split index's entry with no name replaces one of the shared index's
                into.add(name.decode("utf-8", "surrogateescape"), is_dir=(mode & 0o170000) == 0o040000)
    except (ValueError, IndexError) as exc:
        raise UnreadableIndex(f"an entry is cut short ({exc})") from None
    # extensions: a 4-byte signature and a 4-byte size each, then the file's checksum
    shared = None
    while pos + 8 <= len(data) - hash_size:
        sig, size = data[pos : pos + 4], int.from_bytes(data[pos + 4 : pos + 8], "big")
        if sig == b"link":
            shared = data[pos + 8 : pos + 8 + hash_size]
        pos += 8 + size
    return shared


def _read(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_INDEX_BYTES:
        raise UnreadableIndex(f"the index is larger than {MAX_INDEX_BYTES // (1024 * 1024)} MiB")
    with open(path, "rb") as fh:
        return fh.read(MAX_INDEX_BYTES + 1)


def tracked(root: Path) -> Tracked | None:
    """The files git tracks in the repository at `root` (`git ls-files`), or None when its index cannot be read."""
    gitdir = git_dir(root)
    if gitdir is None:
        return None
    out = Tracked()
    index = gitdir / "index"
    try:
        if not index.exists():
            return out  # a repository nothing was added to yet
        hash_size = _hash_size(gitdir)
        shared = _entries(_read(index), hash_size, out)
        if shared is not None and shared.strip(b"\0"):
            # a split index: the entries live in the shared index too (taken whole: a file it
            # lists that the split part deletes is counted as tracked, which only lints more)
            _entries(_read(gitdir / f"sharedindex.{shared.hex()}"), hash_size, out)
    except (OSError, UnreadableIndex):
        return None
    return out


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root`, '/'-separated, as the index names it."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(root)).replace(os.sep, "/")


__all__ = ["MAX_INDEX_BYTES", "Tracked", "git_dir", "relative", "tracked"]
