"""The scanning part of a search: one step's lines in blocks, the candidate lines a block's raw
bytes show (`searchquery.Matcher.needles`), each confirmed on its decoded fields; and the time
(or line) budget that ends a slice. `search.py` walks the steps and keeps the cursor.

Each block is a run of whole lines (the index knows where they are) read into one reused
buffer: plain reads rather than an mmap, since a step rewritten under an mmap kills the process
(SIGBUS), while a short read is only a changed file.
"""

from __future__ import annotations

import os
import re
import time
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import StepChanged
from .index import StepIndex
from .searchquery import Matcher

BLOCK_BYTES = 4 * 1024 * 1024  # read at once: big enough that each find call is worth it
DEFAULT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Budget:
    """How much one answer may scan: seconds of wall-clock time, and at most `lines` lines
    (a test's deterministic slices); at least one block is always scanned."""

    seconds: float | None = DEFAULT_SECONDS
    lines: int | None = None


class Clock:
    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.started = time.monotonic()
        self.lines = 0  # scanned so far
        self.bytes = 0

    def lines_left(self) -> int | None:
        limit = self.budget.lines
        return None if limit is None else max(1, limit - self.lines)

    def spent(self) -> bool:
        budget = self.budget
        if budget.lines is not None and self.lines >= budget.lines:
            return True
        return budget.seconds is not None and time.monotonic() - self.started >= budget.seconds


Found = tuple[str, str, re.Match[str]]


def scan_lines(
    index: StepIndex,
    matcher: Matcher,
    first: int,
    stop: int,
    clock: Clock,
) -> Iterator[tuple[int, int | None, Found | None]]:
    """(position, block end, match) of each matching line of positions [first, stop), and
    (last position, block end, None) after each block, where the caller may stop."""
    starts, ends = index.starts, index.ends
    buffer = bytearray(BLOCK_BYTES)
    with open(index.path, "rb") as f:
        fd = f.fileno()
        position = first
        while position < stop:
            block_first, base = position, starts[position]
            cap = max(BLOCK_BYTES, ends[position] - base)
            lines_left = clock.lines_left()
            last = stop if lines_left is None else min(stop, position + lines_left)
            position += 1
            while position < last and ends[position] - base <= cap:
                position += 1
            size = ends[position - 1] - base
            if size > len(buffer):
                buffer = bytearray(size)
            view = memoryview(buffer)[:size]
            if os.preadv(fd, [view], base) < size:
                raise StepChanged(f"{index.name} shrank while it was searched")
            index.check_same(f)  # rewritten meanwhile: StepChanged (growth is fine)
            clock.lines += position - block_first
            clock.bytes += size
            for candidate in _candidates(
                matcher, buffer, size, base, starts, ends, block_first, position
            ):
                data = bytes(view[starts[candidate] - base : ends[candidate] - base])
                found = _confirm(matcher, data)
                if found is not None:
                    yield candidate, None, found
            view.release()
            yield position - 1, position, None


def _candidates(
    matcher: Matcher,
    buffer: bytearray,
    size: int,
    base: int,
    starts: object,
    ends: object,
    first: int,
    stop: int,
) -> list[int]:
    """Positions in [first, stop) whose bytes hold one of the needles, in file order."""
    needles = matcher.needles
    if needles is None:
        return list(range(first, stop))
    haystack = buffer.lower() if matcher.lower else buffer
    found: set[int] = set()
    for needle in needles:
        at = haystack.find(needle, 0, size)
        while at >= 0:
            position = bisect_right(starts, base + at, first, stop) - 1  # type: ignore[call-overload]
            found.add(position)
            at = haystack.find(needle, ends[position] - base, size)  # type: ignore[index]
    return sorted(found)


def _confirm(matcher: Matcher, data: bytes) -> Found | None:
    found = matcher.match(data)
    if found is None:
        return None
    name, match = found
    return name, match.string, match
