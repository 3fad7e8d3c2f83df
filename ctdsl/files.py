"""Output files written whole or not at all.

`atomic_open(path)` writes to a temporary file beside `path` and renames it over
`path` only when the block ends without an exception, so an interrupted or failed
run (Ctrl-C, a kill, a diagnostic half-way) never leaves a truncated CSV, report,
figure or .tex where a good one was: the old file stays, and the temporary one is
removed.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager


@contextmanager
def atomic_open(path: str, mode: str = "w", **kw: object):
    """A file object for `path` (text by default; "wb" for bytes) that replaces it on success."""
    target = os.path.abspath(path)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".part", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, mode, **kw) as fh:
            yield fh
        if os.path.exists(target):
            os.chmod(tmp, os.stat(target).st_mode & 0o777)
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
