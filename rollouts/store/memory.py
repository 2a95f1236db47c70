"""Giving memory back to the system after a pass over a big step.

A column pass reads a 1 GB step in blocks of a few MB and copies out lines of hundreds of kB.
glibc's allocator serves such sizes with mmap at first, but once one is freed it raises its
mmap threshold (up to 32 MB) and keeps later ones in its heaps, where freed pages stay resident:
12-17 MB kept per GB read, per thread that read it, long after the pass. Asking the allocator
to trim once, when a big pass ends, returns them (about a millisecond) without slowing the pass
itself, which a fixed low mmap threshold would (every block page-faulted anew: 2-3x slower).
Elsewhere (musl, macOS) there is no `malloc_trim`, and this does nothing.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

# Passes over fewer bytes than this leave too little behind to be worth a trim.
RELEASE_AFTER_BYTES = 64 * 1024 * 1024


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_freed_memory(bytes_read: int) -> bool:
    """Return the allocator's free pages to the system after reading `bytes_read` bytes."""
    trim = _malloc_trim()
    if trim is None or bytes_read < RELEASE_AFTER_BYTES:
        return False
    trim(0)
    return True
