"""Reading a step file's lines by their offsets: runs of records in one pread each, and the
blank-line test of the newline scan. Plain reads, never an mmap (see `StepIndex._scan`)."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterator

READ_BLOCK_BYTES = 4 * 1024 * 1024
BLANK = b" \t\r\f\v"


def read_lines(
    fd: int, starts: array, ends: array, positions: range, check: Callable[[], None] = lambda: None
) -> Iterator[tuple[int, bytes]]:
    """(position, line bytes) for `positions`, reading runs of records with one pread each:
    a block of up to READ_BLOCK_BYTES (or one record, if it is larger) at once; `check` after
    each read."""
    position, stop = positions.start, positions.stop
    while position < stop:
        first, block_start = position, starts[position]
        position += 1
        while position < stop and ends[position] - block_start <= READ_BLOCK_BYTES:
            position += 1
        block = os.pread(fd, ends[position - 1] - block_start, block_start)
        check()
        for p in range(first, position):
            yield p, block[starts[p] - block_start : ends[p] - block_start]


def is_blank(chunk: bytearray, start: int, end: int) -> bool:
    """Whether chunk[start:end] is whitespace, without copying a long line to find out."""
    if start >= end:
        return True
    if chunk[start] not in BLANK:
        return False
    return not chunk[start:end].strip(BLANK)
