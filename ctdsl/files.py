"""Output files written whole or not at all, without losing what the file they replace had.

`atomic_open(path)` writes to a temporary file beside `path`, and only when the
block ends without an exception does that content reach `path`, so an
interrupted or failed run (Ctrl-C, SIGTERM, a diagnostic half-way) never leaves
a truncated CSV, report, figure, .tex or spec where a good one was: the old file
stays, and the temporary one is removed. SIGTERM is an exception only because
the command line's entry point makes it one (`ctdsl.cli.app.Terminated`, exit
143); a program that embeds ctdsl handles its own signals. What no program can
handle, SIGKILL or a machine that stops, leaves the temporary file, hidden
beside the target as `.NAME.XXXXXXXX.part`.

How the content reaches `path` depends on what is there (`os.lstat`):

- nothing: the temporary file is renamed to `path`, with the mode a new file
  gets (0666 less the umask).
- a regular file of one link, ours (its owner and group those a new file here
  gets) and without extended attributes: renamed over it, with the old file's
  whole mode, setuid, setgid and sticky bits included (a rename gives a new
  inode, so the old mode is copied onto it; `lint --fix` used to drop them).
- a regular file that a rename would change: hard links (`st_nlink` > 1: the
  rename would leave the other names on the old content), another owner or
  group (the new inode would be ours), or extended attributes (ACLs, SELinux
  labels: not copied by a rename). It is written in place, so its inode, links,
  owner, group, mode and attributes stay: the new content is first written whole
  to the temporary file (a failure or a signal before that leaves the file as it
  was), then copied over the old bytes and the file cut to the new length, with
  Ctrl-C and SIGTERM held until the copy is done (`_signals_held`). Only SIGKILL
  or a crash during that copy can leave it part old, part new. One case is
  refused instead (`Refused`, an OSError): a setuid or setgid file of another
  owner when we are not root, whose bit the kernel would clear on our write.
- a symbolic link: replaced by the file, never written through, so that a link
  in a checkout cannot make a command write outside it (`lint --fix` resolves
  the link of a spec it edits on purpose). `ctdsl init` counts a link, even a
  dangling one, as a file that exists (`--force` to replace it).
- a FIFO, a device or a socket (`-o /dev/stdout`, `-o /dev/null`, a pipe): it
  has no content to keep whole; it is written directly, with nothing renamed
  over it (as root, a rename would replace /dev/null itself). A link to one is
  written through, for the same reason.
- a directory: IsADirectoryError, before anything is written.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager


class Refused(OSError):
    """A file `atomic_open` will not replace, and why (`strerror`)."""

    def __init__(self, path: str, why: str):
        super().__init__(errno.EPERM, why, path)


def _has_xattrs(path: str) -> bool:
    try:
        return bool(os.listxattr(path, follow_symlinks=False))
    except (OSError, AttributeError):  # no extended attributes here (or on this platform)
        return False


@contextmanager
def atomic_open(path: str, mode: str = "w", **kw: object):
    """A file object for `path` (text by default; "wb" for bytes) whose content replaces it on success."""
    target = os.path.abspath(path)
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode):
        try:
            pointed = os.stat(target)
        except OSError:
            pointed = None
        if pointed is not None and not (stat.S_ISREG(pointed.st_mode) or stat.S_ISDIR(pointed.st_mode)):
            st = pointed  # a link to a FIFO or a device: written through, below
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a directory is there", path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        with open(target, mode, **kw) as fh:  # a FIFO, a device, a socket: nothing to keep whole
            yield fh
        return
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".part", dir=os.path.dirname(target))
    try:
        in_place = st is not None and stat.S_ISREG(st.st_mode) and _rename_would_change(target, st, os.fstat(fd))
        if in_place:
            _check_in_place(target, st)
        with os.fdopen(fd, mode, **kw) as fh:
            yield fh
        if in_place:
            _copy_over(tmp, target)
            os.unlink(tmp)
            return
        if st is not None and stat.S_ISREG(st.st_mode):
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _rename_would_change(target: str, st: os.stat_result, new: os.stat_result) -> bool:
    """Whether renaming a new file over `target` would lose links, owner, group or attributes."""
    return st.st_nlink > 1 or (st.st_uid, st.st_gid) != (new.st_uid, new.st_gid) or _has_xattrs(target)


def _check_in_place(target: str, st: os.stat_result) -> None:
    if st.st_mode & (stat.S_ISUID | stat.S_ISGID) and os.geteuid() != 0 and st.st_uid != os.geteuid():
        raise Refused(
            target,
            "it has the setuid or setgid bit and another owner: writing it would clear the bit, "
            "and replacing it would change its owner (clear the bit, or write it as its owner)",
        )


def _copy_over(src: str, target: str) -> None:
    """The bytes of `src` over those of `target`, in place (same inode), then cut to their length."""
    with _signals_held(), open(src, "rb") as fin:
        out = os.open(target, os.O_WRONLY)
        try:
            size = 0
            while chunk := fin.read(1 << 20):
                view = memoryview(chunk)
                while view:
                    n = os.write(out, view)
                    view = view[n:]
                size += len(chunk)
            os.ftruncate(out, size)
            os.fsync(out)
        finally:
            os.close(out)


@contextmanager
def _signals_held():
    """Ctrl-C and SIGTERM during the block are kept, and delivered once it ends (main thread only:
    elsewhere Python runs no signal handler anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    old = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
        for s in dict.fromkeys(caught):
            signal.raise_signal(s)
