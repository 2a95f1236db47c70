"""The step index: where every line of a step file starts and ends, then its scalar columns.

Opening a step never parses it. A newline scan finds the records (a 1 GB step in a fraction of
a second; a page may have it stop early, see `build`), so any sample is one `pread` away. The
scalar columns come from a second pass that decodes only small top-level values, once, in the
background or on demand, extended, not redone, when the file grows."""

from __future__ import annotations

import functools
import os
import threading
from array import array
from collections.abc import Iterator, Sequence
from io import BufferedReader
from pathlib import Path

from .columns import Columns
from .errors import NotFound, StepChanged, UnreadableLine, unreadable
from .files import FileIdentity
from .jsonio import DecodedLine, LineError, decode_line
from .lines import BLANK, Sample, read_lines, read_records, scan_lines
from .memory import release_freed_memory

# Bytes compared before and after the last indexed newline to tell growth from a rewrite.
FINGERPRINT_BYTES = 4096
Fingerprint = tuple[int, bytes, bytes]  # committed, its first and last bytes
# A step this big may open partly scanned (`build(..., records=N)`): a page need not wait for it.
PARTIAL_SCAN_MIN_BYTES = 32 * 1024 * 1024
SCAN_WAIT_SECONDS = 0.05  # a reader that finds `lock` taken looks again this often


class StepIndex:
    """Index of one step file. Readers never block on the column pass; writers hold `lock`."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.name = name  # "train/3.jsonl": what messages call it, never the absolute path
        self.identity = FileIdentity(0, 0, 0, 0)
        self.starts, self.ends, self.lines = array("q"), array("q"), array("q")
        self.committed = 0  # bytes indexed up to and including the last newline
        self.committed_lines = 0
        self.tentative_tail = False  # the last record is an unterminated, parseable last line
        self.partial_tail_bytes = 0  # an unterminated last line that does not parse (yet)
        self.complete = True  # False: scanned only up to `committed` so far (see `build`)
        self.scanned = threading.Event()  # set once `complete` is (see `finish_scan`)
        self.fingerprint: Fingerprint = (0, b"", b"")  # replaced whole by a scan: check_same
        self.columns: Columns | None = None
        self.invalid: dict[int, str] = {}
        self.generation = 0
        self.lock = threading.RLock()
        self.cache_key = ""  # set by the catalog that caches this index
        self.accounted_nbytes = -1  # the size the cache last saw
        self.columns_building = False  # a background column pass is under way
        self._columns_rows = 0
        self.orderings: dict[tuple, array] = {}  # see ordering.order_positions
        self.stats_memo: tuple[tuple[int, int], dict] | None = None  # see Catalog.stats

    def _open(self) -> BufferedReader:
        try:  # the store's error names the step, never the path
            return open(self.path, "rb")
        except OSError as exc:
            raise unreadable(self.name, exc) from None

    # -- building ------------------------------------------------------------------------
    @classmethod
    def build(cls, path: Path, name: str, records: int | None = None) -> StepIndex:
        """The index of the file. With `records`, a big file (PARTIAL_SCAN_MIN_BYTES) may be
        scanned only until more than `records` records are known: `complete` is then False
        until `finish_scan` (or a refresh that finds the file grown) scans the rest."""
        index = cls(path, name)
        with index._open() as f:
            identity = FileIdentity.of(os.fstat(f.fileno()))
            stop_after = -1  # the whole file, unless a big one may stop early
            if records is not None and identity.size >= PARTIAL_SCAN_MIN_BYTES:
                stop_after = records
            index._scan(f, identity, stop_after)
        return index

    def finish_scan(self) -> None:
        """Scan the rest of a partly scanned file (blocks; a no-op once complete). Never waits
        for a column pass, which holds `lock` for seconds but scans first (`ensure_columns`): a
        thread that finds the lock taken waits for `scanned`, the scan's end, then looks again."""
        while not self.complete:
            if not self.lock.acquire(blocking=False):  # an RLock: its holder gets it again
                self.scanned.wait(SCAN_WAIT_SECONDS)
                continue
            try:
                with self._open() as f:
                    identity = FileIdentity.of(os.fstat(f.fileno()))
                    if not self.complete and not self._grew(f, identity, self.fingerprint):
                        raise StepChanged(f"{self.name} changed while it was being indexed; reload")
                    if not self.complete:
                        self._scan(f, identity)
            finally:
                self.lock.release()

    def refresh(self) -> StepIndex:
        """This index brought up to date with the file: itself (extended) or a new one."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise unreadable(self.name, exc) from None
        identity = FileIdentity.of(st)
        if identity == self.identity:
            return self
        with self.lock:
            if identity == self.identity:
                return self
            with self._open() as f:
                identity = FileIdentity.of(os.fstat(f.fileno()))
                if self._grew(f, identity, self.fingerprint):
                    self._scan(f, identity)
                    if self.columns is not None:
                        self._extend_columns(f)
                    return self
        return StepIndex.build(self.path, self.name)

    def check_same(self, f: BufferedReader) -> None:
        """StepChanged unless the open file still holds the indexed bytes (perhaps grown). The
        index is looked at before the file: a scan meanwhile only knows less than the file."""
        known, fingerprint = self.identity, self.fingerprint
        identity = FileIdentity.of(os.fstat(f.fileno()))
        if identity != known and not self._grew(f, identity, fingerprint):
            raise StepChanged(f"{self.name} changed while being read (rewritten or truncated)")

    def _grew(self, f: BufferedReader, identity: FileIdentity, known: Fingerprint) -> bool:
        """The same file, grown: the first and last bytes of `known` (a snapshot) unchanged."""
        committed, head, tail = known
        old = self.identity
        if (identity.dev, identity.ino) != (old.dev, old.ino) or identity.size < committed:
            return False
        fd = f.fileno()
        start = committed - len(tail)
        return os.pread(fd, len(head), 0) == head and os.pread(fd, len(tail), start) == tail

    def _scan(self, f: BufferedReader, identity: FileIdentity, stop_after: int = -1) -> None:
        """Index the lines from `committed` on, to the end (or past `stop_after` records)."""
        if self.tentative_tail:
            self._drop_last_record()
        size = identity.size
        fd = f.fileno()
        pos, line_no, stopped = scan_lines(
            f,
            size,
            self.committed,
            self.committed_lines,
            self.starts,
            self.ends,
            self.lines,
            stop_after,
        )
        self.committed = pos
        self.committed_lines = line_no
        self.partial_tail_bytes = 0
        self.complete = not stopped
        if self.complete:
            self.scanned.set()  # for good: a complete index never becomes partial again
        if self.complete and size > pos:
            tail = os.pread(fd, size - pos, pos)
            if tail.strip(BLANK):
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
        head = os.pread(fd, min(FINGERPRINT_BYTES, pos), 0)
        fp_start = max(0, pos - FINGERPRINT_BYTES)
        self.fingerprint = (pos, head, os.pread(fd, pos - fp_start, fp_start))
        self.identity = identity
        self.generation += 1
        self.orderings.clear()

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
        columns = self.columns
        return columns is not None and self._columns_rows == len(self.starts) and self.complete

    @property
    def columns_rows(self) -> int:
        """Records decoded into the columns so far: the progress of the column pass."""
        return self._columns_rows

    def adopt_columns(self, columns: Columns, invalid: dict[int, str]) -> bool:
        """Take columns computed earlier for this very file (the disk cache), if they fit."""
        with self.lock:
            self.finish_scan()
            if self.columns is not None or columns.rows != len(self.starts):
                return False
            self.columns, self.invalid, self._columns_rows = columns, dict(invalid), columns.rows
            self.orderings.clear()
            return True

    def ensure_columns(self) -> Columns:
        """Decode the scalar fields of every record not yet in the columns (once)."""
        columns = self.columns
        if columns is not None and self._columns_rows == len(self.starts) and self.complete:
            return columns
        with self.lock:
            self.finish_scan()
            if self.columns is None:
                self.columns = Columns()
            first, last = self._columns_rows, len(self.starts) - 1
            if first <= last:
                with self._open() as f:
                    self._extend_columns(f)
                release_freed_memory(self.ends[last] - self.starts[first])
            return self.columns

    def _extend_columns(self, f: BufferedReader) -> None:
        assert self.columns is not None
        columns = self.columns
        try:
            rows = range(self._columns_rows, len(self))
            for position, data in read_lines(f.fileno(), self.starts, self.ends, rows):
                try:
                    columns.append(decode_line(data))
                except LineError as exc:
                    self.invalid[position] = str(exc)
                    columns.append(None)
                self._columns_rows = position + 1
        finally:
            columns.pad()
            self.orderings.clear()

    # -- reading -------------------------------------------------------------------------
    def __len__(self) -> int:
        # `lines` is appended last and truncated first, so every position below its length
        # has its start and end too, even while another thread extends the index.
        return len(self.lines)

    def read(self, position: int) -> Sample:
        (sample,) = self.read_many([position])
        if isinstance(sample, UnreadableLine):
            raise sample
        return sample

    def read_many(self, positions: Sequence[int]) -> Iterator[Sample | UnreadableLine]:
        """The records at `positions`, the file opened once and neighbours read together; an
        unreadable line comes as its UnreadableLine, not raised, and the others follow."""
        if positions and max(positions) >= len(self) and not self.complete:
            self.finish_scan()
        for position in positions:
            if not 0 <= position < len(self):
                raise NotFound(f"{self.name} has no sample at position {position}")
        with self._open() as f:
            check = functools.partial(self.check_same, f)
            for position, data in read_records(
                f.fileno(), self.starts, self.ends, positions, check
            ):
                line = self.lines[position]
                try:
                    yield Sample(position, line, data, decode_line(data))
                except LineError as exc:
                    yield UnreadableLine(line, str(exc))

    def iter_readable(self) -> Iterator[tuple[int, DecodedLine, bytes]]:
        """(position, decoded, bytes) of every readable record in file order, read in blocks.

        Unreadable lines are skipped (`invalid` lists them); StepChanged when the file is
        rewritten or truncated meanwhile (growth is fine: the indexed bytes stay as they were).
        """
        self.finish_scan()
        with self._open() as f:
            check = functools.partial(self.check_same, f)
            for position, data in read_lines(
                f.fileno(), self.starts, self.ends, range(len(self)), check
            ):
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

    def cache_nbytes(self) -> int:
        total = 1024 + 24 * len(self.starts) + len(self.fingerprint[1]) * 2
        total += sum(96 + len(msg) for msg in self.invalid.values())
        total += sum(8 * len(order) + 128 for order in self.orderings.values())
        if self.columns is not None:
            total += self.columns.nbytes()
        return total
