"""One event file as read so far: where the next read starts, and the scalars it held.

A file that grew is read from the stored offset on, once the bytes before it are seen to be
unchanged (the same inode, a head and a tail fingerprint); one that shrank, was replaced or
changed before the offset is read again from the start. Nothing is ever read twice otherwise:
`records_read` and `bytes_read` count what was, so tests can tell.

A read counts only once the file is seen not to have changed under it: after reading, the bytes
it consumed are read again and compared (a CRC-32), and the fingerprints of what was read before
are checked again. A file rewritten while it was read is read again from the start (at most
`READ_ATTEMPTS` times); until a read passes, the previous complete version stays, so an answer
never holds part of one version and part of another.

Only regular files are opened, and never in a way that can block: `O_NONBLOCK`, then `fstat`
(a FIFO named like an event file would otherwise hang the reader until someone wrote to it).
"""

from __future__ import annotations

import os
import stat
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import os_reason
from ..files import FileIdentity
from .decode import Scalar, decode_scalars
from .records import FINGERPRINT, RecordRead, crc_of, read_records

READ_ATTEMPTS = 3  # reads of a file that keeps changing under them, before waiting for a poll
OPEN_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK

# For tests: called with ("checked" | "chunk" | "read", path) between the phases of a read,
# where a rewrite by another process could fall. None in use.
phase_hook: Callable[[str, Path], None] | None = None


@dataclass(slots=True)
class TagValues:
    """One tag's points in one file, in the order written."""

    steps: array = field(default_factory=lambda: array("q"))
    values: array = field(default_factory=lambda: array("d"))
    walls: array = field(default_factory=lambda: array("d"))

    def add(self, step: int, value: float, wall: float) -> None:
        self.steps.append(step)
        self.values.append(value)
        self.walls.append(wall)


def _phase(name: str, path: Path) -> None:
    if phase_hook is not None:
        phase_hook(name, path)


@dataclass(slots=True, eq=False)  # compared by identity: its scalars can be many
class EventFile:
    name: str  # relative to the TensorBoard directory
    path: Path
    identity: FileIdentity | None = None  # the file's when the last read counted
    inode: tuple[int, int] | None = None  # (device, inode) of the file the offset is in
    offset: int = 0
    records: int = 0  # records read from this file, in all
    head: bytes = b""
    tail: bytes = b""
    error: str | None = None
    tags: dict[str, TagValues] = field(default_factory=dict)
    records_read: int = 0  # by this process (a restart from the disk cache reads none)
    bytes_read: int = 0
    fresh: list[Scalar] = field(default_factory=list)  # what the last read found
    pending: bool = False  # the file changed under every attempt: look again next time

    def refresh(self, quick: bool = False) -> tuple[bool, bool]:
        """Read what is new. (changed, restarted): whether scalars (or the error) changed, and
        whether the file was read again from the start (what was known of it is gone).

        `quick`: a `stat` first, and nothing opened when it shows the file unchanged (a sweep
        over files nobody is writing); otherwise the file is opened, which also revalidates
        what a network filesystem caches of it."""
        if quick and self.identity is not None and not self.pending:
            try:
                st = os.stat(self.path)
            except OSError:
                pass  # the open below says why
            else:
                if stat.S_ISREG(st.st_mode) and FileIdentity.of(st) == self.identity:
                    return False, False
        try:
            fd = os.open(self.path, OPEN_FLAGS)
        except OSError as exc:
            return self._failed(f"cannot be opened: {os_reason(exc)}")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return self._failed("is not a regular file")
            identity = FileIdentity.of(st)
            if identity == self.identity and not self.pending:
                return False, False
            return self._read_checked(fd, identity)
        except OSError as exc:
            return self._failed(f"cannot be read: {os_reason(exc)}")
        finally:
            os.close(fd)

    def _failed(self, message: str) -> tuple[bool, bool]:
        changed = self.error != message
        self.error, self.identity = message, None
        return changed, False

    def _read_checked(self, fd: int, identity: FileIdentity) -> tuple[bool, bool]:
        continuing = self._continues(fd, identity)
        for _ in range(READ_ATTEMPTS):
            _phase("checked", self.path)
            start = self.offset if continuing else 0
            read = read_records(fd, start, identity.size, lambda: _phase("chunk", self.path))
            self.bytes_read += read.offset - start
            self.records_read += len(read.records)
            _phase("read", self.path)
            if self._unchanged_under(fd, read, continuing):
                return self._commit(read, identity, continuing)
            identity = FileIdentity.of(os.fstat(fd))  # rewritten meanwhile: all of it again
            continuing = False
        self.pending = True  # what was read before stays until a read passes
        return False, False

    def _continues(self, fd: int, identity: FileIdentity) -> bool:
        """Whether the bytes read so far are still the file's first bytes."""
        if self.offset == 0:
            return True  # nothing read yet, or nothing but an empty file
        if self.inode != (identity.dev, identity.ino):
            return False  # another file under the same name (replaced, not rewritten)
        if identity.size < self.offset:
            return False
        return self._prefix_holds(fd)

    def _prefix_holds(self, fd: int) -> bool:
        head = os.pread(fd, len(self.head), 0)
        tail = os.pread(fd, len(self.tail), self.offset - len(self.tail))
        return head == self.head and tail == self.tail

    def _unchanged_under(self, fd: int, read: RecordRead, continuing: bool) -> bool:
        """Whether the file still holds, now that the read is done, the bytes it read (and,
        when it went on from an offset, the bytes it went on from)."""
        if os.fstat(fd).st_size < read.offset:
            return False
        if continuing and self.offset and not self._prefix_holds(fd):
            return False
        return crc_of(fd, read.start, read.offset) == read.crc

    def _commit(
        self, read: RecordRead, identity: FileIdentity, continuing: bool
    ) -> tuple[bool, bool]:
        restarted = not continuing and bool(self.offset or self.tags)
        if continuing:
            head, tail = self.head + read.first, self.tail + read.last
        else:
            self.tags, self.records = {}, 0
            head, tail = read.first, read.last
        self.head, self.tail = head[:FINGERPRINT], tail[-FINGERPRINT:]
        self.fresh = list(decode_scalars(read.records))
        tags = self.tags
        for tag, step, value, wall in self.fresh:
            values = tags.get(tag)
            if values is None:
                values = tags[tag] = TagValues()
            values.add(step, value, wall)
        error_changed = read.error != self.error
        self.records += len(read.records)
        self.offset, self.error = read.offset, read.error
        self.identity, self.inode, self.pending = identity, (identity.dev, identity.ino), False
        return bool(read.records) or restarted or error_changed, restarted

    def scalar_count(self) -> int:
        return sum(len(v.steps) for v in self.tags.values())
