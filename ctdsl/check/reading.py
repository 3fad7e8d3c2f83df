"""Reading one spec file from disk: only a regular file, its size checked first.

Every way a path can fail (missing, a directory, a FIFO or device, a symbolic link
loop, a NUL byte, a name too long, permission denied, not UTF-8) becomes an
`Unreadable` with a message in words; nothing here raises an OSError to its caller.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ctdsl import limits
from ctdsl.diagnostics import Diagnostic


class Unreadable(Exception):
    """The root file itself cannot be read: a usage error (exit 2), not a finding.

    `diagnostic()` gives it as diagnostic CT001 for callers that list problems; an
    imported file that cannot be read is CT501 instead, at the import.
    """

    code = "CT001"

    def __init__(self, message: str, path: str | Path | None = None, missing: bool = False):
        super().__init__(message)
        self.path = str(path) if path is not None else None
        self.missing = missing  # no file at the path

    @property
    def shipped(self) -> bool:
        """A missing file under specs/ or examples/: one that `ctdsl init -e` writes, as --help's examples expect."""
        return self.missing and self.path is not None and Path(self.path).parts[:1] in (("specs",), ("examples",))

    @property
    def help(self) -> str:
        if self.shipped:
            return f"give the path of a spec file; {INIT_HINT}"
        return "give the path of a UTF-8 text file, e.g. specs/llama70b_wan.ct"

    def diagnostic(self) -> Diagnostic:
        return Diagnostic(self.code, str(self), None, help=self.help)


# the files the --help examples and the docs name come with the package
INIT_HINT = "`ctdsl init -e` writes the specs/ and examples/ that --help and the docs use into this folder"


def _escape(c: str) -> str:
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte of a file name that is not UTF-8 (surrogateescape)
        n -= 0xDC00
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}"


def shown(path: str | Path, most: int = 160) -> str:
    """A path fit for a message: control characters escaped, a very long one shortened."""
    text = "".join(c if c.isprintable() else _escape(c) for c in str(path))
    return text if len(text) <= most else text[: most // 2] + "..." + text[-most // 2 :]


_KINDS = [
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
]


def file_kind(mode: int) -> str | None:
    """What a non-regular file is ("a FIFO (named pipe)"), or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def os_problem(exc: BaseException) -> str:
    """Why a path cannot be used, in words: for OSError, ValueError (a NUL) and RuntimeError (a loop)."""
    if isinstance(exc, ValueError):
        return "the path contains a NUL byte"
    if isinstance(exc, RuntimeError):
        return "a symbolic link loop"
    errno_ = getattr(exc, "errno", None)
    words = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ELOOP: "too many levels of symbolic links (a symbolic link loop)",
        errno.ENAMETOOLONG: "the file name or path is too long",
        errno.EISDIR: "it is a directory",
        errno.ENOTDIR: "a part of the path is not a directory",
    }
    return words.get(errno_) or (getattr(exc, "strerror", None) or str(exc))


class TooLarge(Unreadable):
    """A file over limits.MAX_FILE_BYTES, found from its size before it is read: CT601."""

    code = "CT601"


def stat_source(path: Path) -> os.stat_result:
    """The stat of a spec file that may be read, or Unreadable saying why not (no file is opened)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # bytes no output format can carry (SARIF URIs, JSON)
        raise Unreadable(f"cannot read {shown(path)}: the file name is not valid UTF-8", path) from None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise Unreadable(f"no such file: {shown(path)}", path, missing=True) from None
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read {shown(path)}: {os_problem(exc)}", path) from None
    kind = file_kind(st.st_mode)
    if kind is not None:
        raise Unreadable(f"{shown(path)} is {kind}, not a spec file", path)
    if st.st_size > limits.MAX_FILE_BYTES:
        raise TooLarge(f"{shown(path)} is larger than {limits.MAX_FILE_BYTES // 1024} KiB", path)
    return st


def confine(path: Path, within: Path | None = None) -> None:
    """Raise Unreadable unless `path`, its symbolic links followed, is a file inside `within`.

    The one path policy for every spec ctdsl reads (docs/ci.md, Security): a spec
    is read only inside the folder it is named from. That folder is the one a
    file named on the command line (or by an editor) sits in, the folder lint
    walks for a file found there (`within`), and the importing file's folder for
    an import (`ctdsl.check.loader`). A symbolic link that leads out of it is not
    followed: its target is never opened and never named, so a link committed in
    a pull request (`x.ct -> ~/.ssh/id_rsa`) cannot put another file's text into
    an excerpt.
    """
    folder = within if within is not None else Path(os.path.abspath(path)).parent
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(folder)
        inside = os.path.commonpath([real, base]) == base
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read {shown(path)}: {os_problem(exc)}", path) from None
    if not inside:
        named = within if within is not None else (os.path.dirname(str(path)) or ".")  # the folder as it was named
        raise Unreadable(f"{shown(path)} not read: a symbolic link that leads outside {shown(named)}", path)


def _read_bounded(path: Path) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file, whatever its size said."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)  # O_NONBLOCK: a FIFO swapped in after the stat does not block
    try:
        kind = file_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise Unreadable(f"{shown(path)} is {kind}, not a spec file", path)
        chunks: list[bytes] = []
        left = limits.MAX_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_source(path: Path, within: Path | None | bool = False) -> str:
    """Read a spec file or raise Unreadable (TooLarge: CT601) with a message fit for a user.

    Only a regular file is opened, after its size is checked, and at most one byte
    past the limit is read: a FIFO, a device or a growing file cannot hang or fill memory.
    A spec is read under the path policy (`confine`): pass `within=None` for the
    folder it is named in, or the folder walked; `within=False` (a settings file,
    an import already confined by the loader) reads the path as it is.
    """
    if within is not False:
        confine(path, within)  # type: ignore[arg-type]
    stat_source(path)
    try:
        data = _read_bounded(path)
    except FileNotFoundError:
        raise Unreadable(f"no such file: {shown(path)}", path, missing=True) from None
    except (OSError, ValueError) as exc:
        raise Unreadable(f"cannot read {shown(path)}: {os_problem(exc)}", path) from None
    if len(data) > limits.MAX_FILE_BYTES:
        raise TooLarge(f"{shown(path)} is larger than {limits.MAX_FILE_BYTES // 1024} KiB", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{shown(path)} is not UTF-8 text (byte {exc.start})", path) from None


__all__ = ["Unreadable", "TooLarge", "confine", "read_source", "stat_source", "file_kind", "os_problem", "shown"]
