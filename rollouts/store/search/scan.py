"""The scanning part of a search: one step's bytes in chunks, the candidate lines a chunk's raw
bytes show (`searchquery.Matcher.needles`), each confirmed on its decoded fields; and the time
(or line) budget that ends a slice. `search.py` walks the steps and keeps the cursor.

Chunks are small (they stay in the CPU cache between the read and the search) and read into one
reused buffer: plain reads rather than an mmap, since a step rewritten under an mmap kills the
process (SIGBUS), while a short read is only a changed file. A needle is found by looking for
its rarest byte with `memchr` (what `bytes.find` of one byte is) and comparing the rest there,
which is several times faster than `bytes.find` of the whole needle on text whose other bytes
are common; when that byte turns out common in this file, plain `find` takes over.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BufferedReader

from ..errors import StepChanged
from ..index import StepIndex
from .query import Found, Matcher

CHUNK_BYTES = 256 * 1024  # searched at once: fits the CPU's cache, so the search reads it there
BLOCK_BYTES = 1024 * 1024  # lines decoded at once when every line is a candidate
# Bytes of text and JSON from the most common to the less common (English letter frequencies,
# the digits and separators of token arrays, JSON's punctuation); bytes not listed are rare.
COMMON_BYTES = b' ,0123456789."etaoinshrdlcumwfgypb:vk\\-_\nTASIMCBPDRHWEFLNOGjxqz'
# A probe byte seen more often than once in this many bytes is no help: use plain find (the
# Python loop costs ~0.3 us a probe). A case-insensitive plain find lower-cases the chunk first
# (~2 ns a byte), so it takes over only from a denser probe.
PROBE_MIN_SPACING = 256
CASELESS_PROBE_MIN_SPACING = 128
DEFAULT_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class Budget:
    """How much one answer may scan: seconds of wall-clock time, and at most `lines` lines
    (a test's deterministic slices); at least one block is always scanned."""

    seconds: float | None = DEFAULT_SECONDS
    lines: int | None = None


class Clock:
    """What one answer has spent, and the state its steps' scans share."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.started = time.monotonic()
        self.lines = 0  # scanned so far
        self.bytes = 0
        self.needles: list[_Needle] | None = None  # the scan's probes, once chosen

    def lines_left(self) -> int | None:
        limit = self.budget.lines
        return None if limit is None else max(1, limit - self.lines)

    def spent(self) -> bool:
        budget = self.budget
        if budget.lines is not None and self.lines >= budget.lines:
            return True
        return budget.seconds is not None and time.monotonic() - self.started >= budget.seconds


def scan_lines(
    index: StepIndex,
    matcher: Matcher,
    first: int,
    stop: int,
    clock: Clock,
) -> Iterator[tuple[int, int | None, Found | None]]:
    """(position, None, match) of each matching line of positions [first, stop), in order, and
    (position, resume, None) after each chunk: where a caller that stops there goes on."""
    if first >= stop:
        return
    with open(index.path, "rb") as f:
        if matcher.needles is None:
            yield from _scan_every_line(index, matcher, first, stop, clock, f)
        else:
            yield from _scan_chunks(index, matcher, first, stop, clock, f)


@dataclass(slots=True)
class _Needle:
    """A needle and its probe: its rarest byte (both cases of it when the needle is lower-cased
    for a case-insensitive search, and the chunk is not)."""

    text: bytes
    caseless: bool
    probes: tuple[bytes, ...]
    at: int  # where the probe is in the needle
    probing: bool = True  # False once the probe proved common in these files
    misses: int = 0
    scanned: int = 0

    @classmethod
    def of(cls, text: bytes, caseless: bool, sample: bytes) -> _Needle:
        """The needle, probed by the byte of it that `sample` (the search's first chunk) holds
        least often; the usual frequencies of text decide between equals."""
        rank = {byte: i for i, byte in enumerate(COMMON_BYTES)}
        counts: dict[int, int] = {}
        for byte in set(text):
            forms = {bytes([byte]), bytes([byte]).upper()} if caseless else {bytes([byte])}
            counts[byte] = sum(sample.count(form) for form in forms)

        def rarity(i: int) -> tuple[int, int, int]:
            return (-counts[text[i]], rank.get(text[i], len(COMMON_BYTES)), i)

        at = max(range(len(text)), key=rarity)
        probe = text[at : at + 1]
        probes = tuple(dict.fromkeys((probe, probe.upper()))) if caseless else (probe,)
        return cls(text, caseless, probes, at)

    def find(self, hay: bytearray, start: int, end: int, lowered: Callable[[], bytes]) -> int:
        """The first whole occurrence in hay[start:end], or -1 (`lowered`: the chunk
        lower-cased, for a case-insensitive plain find)."""
        if not self.probing:
            return (lowered() if self.caseless else hay).find(self.text, start, end)
        text, at, size, caseless = self.text, self.at, len(self.text), self.caseless
        first = self.probes[0]
        second = self.probes[-1]  # the other case of a letter, or the same byte
        a = hay.find(first, start + at, end)
        b = hay.find(second, start + at, end) if second != first else -1
        misses = 0
        while a >= 0 or b >= 0:
            if b < 0 or 0 <= a < b:
                found, a = a, hay.find(first, a + 1, end)
            else:
                found, b = b, hay.find(second, b + 1, end)
            begin = found - at
            if caseless:
                hit = begin + size <= end and hay[begin : begin + size].lower() == text
            else:
                hit = hay.startswith(text, begin, end)
            if hit:
                self.misses += misses
                return begin
            misses += 1
        self.misses += misses
        return -1

    def check(self, scanned: int) -> None:
        self.scanned += scanned
        spacing = CASELESS_PROBE_MIN_SPACING if self.caseless else PROBE_MIN_SPACING
        if self.probing and self.misses * spacing > self.scanned:
            self.probing = False


class _Lowered:
    """The chunk lower-cased, made when a case-insensitive plain find first asks for it."""

    def __init__(self, view: memoryview) -> None:
        self.view = view
        self.value: bytes | None = None

    def __call__(self) -> bytes:
        if self.value is None:
            self.value = bytes(self.view).lower()
        return self.value


def _scan_chunks(
    index: StepIndex, matcher: Matcher, first: int, stop: int, clock: Clock, f: BufferedReader
) -> Iterator[tuple[int, int | None, Found | None]]:
    starts, ends = index.starts, index.ends
    assert matcher.needles is not None
    overlap = max(len(text) for text in matcher.needles) - 1
    buffer = bytearray(CHUNK_BYTES + overlap)
    fd = f.fileno()
    position, offset, last_end = first, starts[first], ends[stop - 1]
    while position < stop:
        limit = last_end
        lines_left = clock.lines_left()
        if lines_left is not None:
            limit = min(limit, ends[min(stop, position + lines_left) - 1])
        chunk_end = min(offset + CHUNK_BYTES + overlap, limit)
        size = chunk_end - offset
        view = memoryview(buffer)[:size]
        if os.preadv(fd, [view], offset) < size:
            raise StepChanged(f"{index.name} shrank while it was searched")
        index.check_same(f)  # rewritten meanwhile: StepChanged (growth is fine)
        if clock.needles is None:  # chosen on the answer's first chunk, kept for its steps
            sample = bytes(view)
            clock.needles = [_Needle.of(text, matcher.lower, sample) for text in matcher.needles]
        needles = clock.needles
        # Every match starting before `done` is in this chunk; later ones, in the next.
        done = chunk_end if chunk_end == limit else chunk_end - overlap
        lowered = _Lowered(view)
        candidates: set[int] = set()
        for needle in needles:
            at = needle.find(buffer, 0, size, lowered)
            while 0 <= at < done - offset:
                line = bisect_right(starts, offset + at, position, stop) - 1
                candidates.add(line)
                at = needle.find(buffer, max(ends[line] - offset, at + 1), size, lowered)
            needle.check(size)
        following = bisect_right(ends, done, position, stop)
        for line in sorted(candidates):
            following = max(following, line + 1)
            start, end = starts[line], ends[line]
            if offset <= start and end <= chunk_end:
                data = bytes(view[start - offset : end - offset])
            else:  # begins in an earlier chunk or ends in a later one
                data = os.pread(fd, end - start, start)
            found = matcher.match(data)
            if found is not None:
                yield line, None, found
        view.release()
        clock.lines += following - position
        clock.bytes += done - offset
        if following > position:
            yield following - 1, following, None
        position = following
        if position < stop:
            offset = max(done, starts[position])


def _scan_every_line(
    index: StepIndex, matcher: Matcher, first: int, stop: int, clock: Clock, f: BufferedReader
) -> Iterator[tuple[int, int | None, Found | None]]:
    """Nothing to look for in the raw bytes (a regex without a literal): decode every line,
    a block of whole lines at a time."""
    starts, ends = index.starts, index.ends
    buffer = bytearray(BLOCK_BYTES)
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
        index.check_same(f)
        clock.lines += position - block_first
        clock.bytes += size
        for line in range(block_first, position):
            found = matcher.match(bytes(view[starts[line] - base : ends[line] - base]))
            if found is not None:
                yield line, None, found
        view.release()
        yield position - 1, position, None
