"""The step index: where every line of a step file starts and ends, then its scalar columns.

Opening a step never parses it. A newline scan finds the records (a 1 GB step in
a fraction of a second), so any sample can be read at once with one `pread`. The scalar columns
(rewards, lengths, status, ...) come from a second pass that decodes only small top-level values;
it runs once, in the background or on demand, and is extended, not redone, when the file grows.
"""

from __future__ import annotations

import math
import os
import re
import threading
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .columns import Columns
from .errors import BadRequest, NotFound, UnreadableLine
from .jsonio import DecodedLine, LineError, decode_line

# Bytes compared before and after the last indexed newline to tell growth from a rewrite.
FINGERPRINT_BYTES = 4096
SCAN_CHUNK_BYTES = 512 * 1024
READ_BLOCK_BYTES = 4 * 1024 * 1024
_BLANK = b" \t\r\f\v"


@dataclass(frozen=True, slots=True)
class FileIdentity:
    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileIdentity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_RANGE = re.compile(r"^([\w.]+):([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])$")


@dataclass(frozen=True, slots=True)
class ValueRange:
    """A numeric filter, `reward:[0.5,0.75)`: low included, high included only with `]`.

    A histogram bar is one: its bins are half-open except the last, which holds the maximum.
    """

    column: str
    low: float
    high: float
    closed: bool = False

    @classmethod
    def parse(cls, text: str) -> ValueRange:
        match = _RANGE.match(text.strip())
        if match is None:
            raise BadRequest(f"range must look like reward:[0.5,0.75), got {text!r}")
        column, opening, low, high, closing = match.groups()
        if opening != "[":
            raise BadRequest("a range includes its low end: write it with '['")
        try:
            lo, hi = float(low), float(high)
        except ValueError:
            raise BadRequest(f"range bounds must be numbers, got {low!r} and {high!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise BadRequest(f"range bounds must be finite with low <= high, got {text!r}")
        return cls(column, lo, hi, closing == "]")

    def __str__(self) -> str:
        return f"{self.column}:[{_short(self.low)},{_short(self.high)}{']' if self.closed else ')'}"

    def describe(self) -> str:
        """In words: "reward = 1" or "reward in [0.5,0.75)"."""
        if self.low == self.high and self.closed:
            return f"{self.column} = {_short(self.low)}"
        return f"{self.column} in {str(self).partition(':')[2]}"

    def contains(self, value: float) -> bool:
        return self.low <= value and (value <= self.high if self.closed else value < self.high)


def _short(number: float) -> str:
    """The shortest text that reads back as `number` (10, not 10.0)."""
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


@dataclass(slots=True)
class Sample:
    """One record read from disk."""

    position: int
    line: int  # 1-based line number in the file, for messages
    data: bytes
    decoded: DecodedLine


class StepIndex:
    """Index of one step file. Readers never block on the column pass; writers hold `lock`."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name  # "train/3.jsonl": what messages call it, never the absolute path
        self.identity = FileIdentity(0, 0, 0, 0)
        self.starts = array("q")
        self.ends = array("q")
        self.lines = array("q")
        self.committed = 0  # bytes indexed up to and including the last newline
        self.committed_lines = 0
        self.tentative_tail = False  # the last record is an unterminated, parseable last line
        self.partial_tail_bytes = 0  # an unterminated last line that does not parse (yet)
        self.head_fingerprint = b""
        self.tail_fingerprint = b""
        self.columns: Columns | None = None
        self.invalid: dict[int, str] = {}
        self.generation = 0
        self.lock = threading.RLock()
        self.cache_key = ""  # set by the catalog that caches this index
        self.accounted_nbytes = -1  # the size the cache last saw
        self.columns_building = False  # a background column pass is under way
        self._columns_rows = 0
        self._orderings: dict[tuple, array] = {}
        self.stats_memo: tuple[tuple[int, int], dict] | None = None  # see Catalog.stats

    # -- building ------------------------------------------------------------------------
    @classmethod
    def build(cls, path: Path, name: str) -> StepIndex:
        index = cls(path, name)
        with open(path, "rb") as f:
            index._scan(f, FileIdentity.of(os.fstat(f.fileno())))
        return index

    def refresh(self) -> StepIndex:
        """This index brought up to date with the file: itself (extended) or a new one."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise NotFound(f"step {self.name} no longer exists") from None
        identity = FileIdentity.of(st)
        if identity == self.identity:
            return self
        with self.lock:
            if identity == self.identity:
                return self
            with open(self.path, "rb") as f:
                identity = FileIdentity.of(os.fstat(f.fileno()))
                if self._is_growth_of_self(f, identity):
                    self._scan(f, identity)
                    if self.columns is not None:
                        self._extend_columns(f)
                    return self
        return StepIndex.build(self.path, self.name)

    def _is_growth_of_self(self, f, identity: FileIdentity) -> bool:
        old = self.identity
        if (identity.dev, identity.ino) != (old.dev, old.ino) or identity.size < self.committed:
            return False
        fd = f.fileno()
        head = os.pread(fd, len(self.head_fingerprint), 0)
        start = self.committed - len(self.tail_fingerprint)
        tail = os.pread(fd, len(self.tail_fingerprint), start)
        return head == self.head_fingerprint and tail == self.tail_fingerprint

    def _scan(self, f, identity: FileIdentity) -> None:
        """Index the lines between `committed` and the end of the file."""
        if self.tentative_tail:
            self._drop_last_record()
        size = identity.size
        fd = f.fileno()
        pos = self.committed  # start of the line being scanned
        line_no = self.committed_lines
        starts, ends, lines = self.starts, self.ends, self.lines
        base = pos  # file offset of buf[0]
        # Plain reads rather than an mmap: a file truncated under an mmap (a resumed run
        # rewriting the step) kills the process with SIGBUS; a short read is harmless. One
        # small reused buffer stays in the CPU cache: 1 GB scans in ~0.15 s from page cache.
        buf = bytearray(SCAN_CHUNK_BYTES)
        find = buf.find
        f.seek(base)
        blank_so_far = True
        while base < size:
            filled = f.readinto(memoryview(buf)[: min(SCAN_CHUNK_BYTES, size - base)])
            if not filled:
                break
            i = max(pos - base, 0)
            while True:
                nl = find(b"\n", i, filled)
                if nl < 0:
                    blank_so_far = blank_so_far and _is_blank(buf, i, filled)
                    break
                line_no += 1
                if not (blank_so_far and _is_blank(buf, i, nl)):
                    starts.append(pos)
                    ends.append(base + nl)
                    lines.append(line_no)
                pos = base + nl + 1
                i = nl + 1
                blank_so_far = True
            base += filled
        self.committed = pos
        self.committed_lines = line_no
        self.partial_tail_bytes = 0
        if size > pos:
            tail = os.pread(fd, size - pos, pos)
            if tail.strip(_BLANK):
                try:
                    decode_line(tail)
                except LineError:
                    self.partial_tail_bytes = len(tail)
                else:
                    # A finished file without its final newline: the record is real, but it
                    # is re-read when the file changes, in case it was only half-written.
                    self.starts.append(pos)
                    self.ends.append(size)
                    self.lines.append(line_no + 1)
                    self.tentative_tail = True
        self.head_fingerprint = os.pread(fd, min(FINGERPRINT_BYTES, self.committed), 0)
        fp_start = max(0, self.committed - FINGERPRINT_BYTES)
        self.tail_fingerprint = os.pread(fd, self.committed - fp_start, fp_start)
        self.identity = identity
        self.generation += 1
        self._orderings.clear()

    def _drop_last_record(self) -> None:
        last = len(self.starts) - 1
        for arr in (self.lines, self.ends, self.starts):
            del arr[last:]
        self.invalid.pop(last, None)
        if self.columns is not None and self._columns_rows > last:
            self.columns.truncate(last)
            self._columns_rows = last
        self.tentative_tail = False

    # -- columns -------------------------------------------------------------------------
    @property
    def columns_ready(self) -> bool:
        return self.columns is not None and self._columns_rows == len(self.starts)

    @property
    def columns_rows(self) -> int:
        """Records decoded into the columns so far: the progress of the column pass."""
        return self._columns_rows

    def adopt_columns(self, columns: Columns, invalid: dict[int, str]) -> bool:
        """Take columns computed earlier for this very file (the disk cache), if they fit."""
        with self.lock:
            if self.columns is not None or columns.rows != len(self.starts):
                return False
            self.columns, self.invalid, self._columns_rows = columns, dict(invalid), columns.rows
            self._orderings.clear()
            return True

    def ensure_columns(self) -> Columns:
        """Decode the scalar fields of every record not yet in the columns (once)."""
        columns = self.columns
        if columns is not None and self._columns_rows == len(self.starts):
            return columns
        with self.lock:
            if self.columns is None:
                self.columns = Columns()
            if self._columns_rows < len(self.starts):
                with open(self.path, "rb") as f:
                    self._extend_columns(f)
            return self.columns

    def _extend_columns(self, f) -> None:
        assert self.columns is not None
        columns = self.columns
        try:
            for position, data in _read_lines(
                f.fileno(), self, range(self._columns_rows, len(self))
            ):
                try:
                    columns.append(decode_line(data))
                except LineError as exc:
                    self.invalid[position] = str(exc)
                    columns.append(None)
                self._columns_rows = position + 1
        finally:
            columns.pad()
            self._orderings.clear()

    # -- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        # `lines` is appended last and truncated first, so every position below its length
        # has its start and end too, even while another thread extends the index.
        return len(self.lines)

    def read(self, position: int) -> Sample:
        if not 0 <= position < len(self):
            raise NotFound(f"{self.name} has no sample at position {position}")
        start, end, line = self.starts[position], self.ends[position], self.lines[position]
        with open(self.path, "rb") as f:
            data = os.pread(f.fileno(), end - start, start)
        try:
            decoded = decode_line(data)
        except LineError as exc:
            raise UnreadableLine(line, str(exc)) from None
        return Sample(position, line, data, decoded)

    def iter_readable(self) -> Iterator[tuple[int, DecodedLine, bytes]]:
        """(position, decoded, bytes) of every readable record in file order, read in blocks.

        Unreadable lines are skipped: they are listed in `invalid` once the columns exist.
        """
        with open(self.path, "rb") as f:
            for position, data in _read_lines(f.fileno(), self, range(len(self))):
                try:
                    yield position, decode_line(data), data
                except LineError:
                    continue

    def invalid_lines(self) -> list[dict[str, int | str]]:
        """Unreadable records found by the column pass, in file order, for messages."""
        return [
            {"position": p, "line": self.lines[p], "error": msg}
            for p, msg in sorted(self.invalid.items())
        ]

    def valid_positions(self) -> array:
        """Every readable record in file order."""
        return self.ordering(None, "asc", {})

    def ordering(
        self,
        sort: str | None,
        order: str,
        filters: dict[str, str],
        value_range: ValueRange | None = None,
    ) -> array:
        """Positions of readable records, filtered, then stably sorted by one column.

        Records whose value is missing or not a number sort last in both directions, and are
        outside every `value_range`.
        """
        if order not in ("asc", "desc"):
            raise BadRequest("order must be 'asc' or 'desc'")
        columns = self.ensure_columns()
        key = (
            self.generation,
            self._columns_rows,
            sort,
            order,
            tuple(sorted(filters.items())),
            value_range,
        )
        cached = self._orderings.get(key)
        if cached is not None:
            return cached
        if sort is not None and sort not in columns.numeric and sort not in columns.categorical:
            raise BadRequest(
                f"unknown column {sort!r}; this step has: {', '.join(columns.names())}"
            )
        positions = [p for p in range(columns.rows) if p not in self.invalid]
        for name, wanted in filters.items():
            if name not in columns.categorical:
                raise BadRequest(
                    f"cannot filter on {name!r}: only on {', '.join(columns.categorical)}"
                )
            codes, values = columns.categorical[name], columns.categories[name]
            positions = [p for p in positions if codes[p] >= 0 and values[codes[p]] == wanted]
        if value_range is not None:
            col = columns.numeric.get(value_range.column)
            if col is None:
                raise BadRequest(
                    f"cannot filter on a range of {value_range.column!r}: only on "
                    f"{', '.join(columns.numeric)}"
                )
            inside = value_range.contains
            positions = [p for p in positions if inside(col[p])]
        if sort is not None:
            positions = _sorted_missing_last(columns, sort, positions, order == "desc")
        result = array("q", positions)
        if len(self._orderings) > 32:
            self._orderings.clear()
        self._orderings[key] = result
        return result

    def cache_nbytes(self) -> int:
        total = 1024 + 24 * len(self.starts) + len(self.head_fingerprint) * 2
        total += sum(96 + len(msg) for msg in self.invalid.values())
        total += sum(8 * len(order) + 128 for order in self._orderings.values())
        if self.columns is not None:
            total += self.columns.nbytes()
        return total


def _read_lines(fd: int, index: StepIndex, positions: range) -> Iterator[tuple[int, bytes]]:
    """(position, line bytes) for `positions`, reading runs of records with one pread each.

    Small lines cost a syscall each when read one by one; a block of up to READ_BLOCK_BYTES
    (or one record, if it is larger) is read at once instead.
    """
    starts, ends = index.starts, index.ends
    position, stop = positions.start, positions.stop
    while position < stop:
        first, block_start = position, starts[position]
        position += 1
        while position < stop and ends[position] - block_start <= READ_BLOCK_BYTES:
            position += 1
        block = os.pread(fd, ends[position - 1] - block_start, block_start)
        for p in range(first, position):
            yield p, block[starts[p] - block_start : ends[p] - block_start]


def _sorted_missing_last(columns: Columns, sort: str, positions: list[int], desc: bool) -> list:
    if sort in columns.numeric:
        col = columns.numeric[sort]
        present = [p for p in positions if not math.isnan(col[p])]
        missing = [p for p in positions if math.isnan(col[p])]
        present.sort(key=col.__getitem__, reverse=desc)
    else:
        codes, values = columns.categorical[sort], columns.categories[sort]
        present = [p for p in positions if codes[p] >= 0]
        missing = [p for p in positions if codes[p] < 0]
        present.sort(key=lambda p: values[codes[p]], reverse=desc)
    return present + missing


def _is_blank(chunk: bytearray, start: int, end: int) -> bool:
    """Whether chunk[start:end] is whitespace, without copying a long line to find out."""
    if start >= end:
        return True
    if chunk[start] not in _BLANK:
        return False
    return not chunk[start:end].strip(_BLANK)
