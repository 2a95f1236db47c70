"""Reading a step file's records by their offsets, and the whitespace a blank line is made of.

Kept apart from the index (`index.py`), which finds the offsets: these are the two loops that
touch every byte or every record, and both avoid copies and syscalls they can do without.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator

READ_BLOCK_BYTES = 4 * 1024 * 1024
BLANK = b" \t\r\f\v"


def read_lines(
    fd: int, starts: array, ends: array, positions: range
) -> Iterator[tuple[int, bytes]]:
    """(position, line bytes) for `positions`, reading runs of records with one pread each.

    Small lines cost a syscall each when read one by one; a block of up to READ_BLOCK_BYTES
    (or one record, if it is larger) is read at once instead.
    """
    position, stop = positions.start, positions.stop
    while position < stop:
        first, block_start = position, starts[position]
        position += 1
        while position < stop and ends[position] - block_start <= READ_BLOCK_BYTES:
            position += 1
        block = os.pread(fd, ends[position - 1] - block_start, block_start)
        for p in range(first, position):
            yield p, block[starts[p] - block_start : ends[p] - block_start]


def is_blank(chunk: bytearray, start: int, end: int) -> bool:
    """Whether chunk[start:end] is whitespace, without copying a long line to find out."""
    if start >= end:
        return True
    if chunk[start] not in BLANK:
        return False
    return not chunk[start:end].strip(BLANK)
