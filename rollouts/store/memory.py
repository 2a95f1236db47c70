"""Giving memory back to the system after a pass over a big step.

A column pass reads a 1 GB step in blocks (`lines.READ_BLOCK_BYTES`) and copies out lines of
hundreds of kB. glibc's allocator serves such sizes with mmap at first, but once one is freed it
raises its mmap threshold to that size (and its trim threshold to twice it) and serves later ones
from its heaps, where freed pages stay resident: with 4 MB blocks, 12-17 MB stayed per GB read.
Blocks of 256 kB keep that ceiling near the size of a big sample (and the pass is no slower:
1.14 s vs 1.21 s on 1 GB of 300 kB samples, 0.12 vs 0.13 s on 60 MB of 3 kB ones), and asking
the allocator to trim once, when a big scan or pass ends, returns what it left (about a
millisecond). A fixed low mmap threshold would do it too, but page-faults every block anew: a
pass 2-3x slower.
Elsewhere (musl, macOS) there is no `malloc_trim`, and this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

# Passes over fewer bytes than this leave too little behind to be worth a trim.
RELEASE_AFTER_BYTES = 64 * 1024 * 1024
# A page of samples sent (50 of 300 kB: 15 MB) leaves its buffers in the sending thread's heap
# the same way (3-4 MB of them after a 1 GB step's first page); pages above this trim after.
PAGE_RELEASE_BYTES = 8 * 1024 * 1024


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_freed_memory(bytes_read: int, at_least: int | None = None) -> bool:
    """Return the allocator's free pages to the system after reading `bytes_read` bytes
    (when they are at least `at_least`, RELEASE_AFTER_BYTES unless given)."""
    trim = _malloc_trim()
    threshold = RELEASE_AFTER_BYTES if at_least is None else at_least
    if trim is None or bytes_read < threshold:
        return False
    trim(0)
    return True
