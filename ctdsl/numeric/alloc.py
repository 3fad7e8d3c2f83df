"""Keep freed memory in the process during a chunked sweep (glibc only).

Each chunk of a sweep makes about a hundred temporary arrays of the chunk's
length and frees them all before the next chunk makes them again. By default
glibc serves allocations of 128 KiB and more with mmap, and gives freed memory
at the top of the heap back to the system as soon as more than 128 KiB of it is
free; either way the next chunk touches fresh pages, about 1,500 page faults a
chunk, which costs as much time as the arithmetic. Raising the two thresholds
keeps those pages in the process: memory stays bounded by the largest chunk's
working set, and a sweep runs about twice as fast.

`keep_freed_memory()` is called by `ctdsl sweep` before it writes the data; a
library user may call it too. It changes a process-wide setting, so it is never called
on import. On other C libraries it does nothing.
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


def keep_freed_memory(trim: int = 256 << 20, mmap: int = 32 << 20) -> bool:
    """Raise glibc's trim and mmap thresholds; True if it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(M_TRIM_THRESHOLD, trim)) and bool(libc.mallopt(M_MMAP_THRESHOLD, mmap))
    except (OSError, AttributeError):
        return False
