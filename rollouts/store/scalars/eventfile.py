"""One event file as read so far: where the next read starts, and the scalars it held.

A file that grew is read from the stored offset on, once the bytes before it are seen to be
unchanged (a head and a tail fingerprint); one that shrank, was replaced or changed before the
offset is read again from the start. Nothing is ever read twice otherwise: `records_read` and
`bytes_read` count what was, so tests can tell.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import os_reason
from ..files import FileIdentity
from .decode import Scalar, decode_scalars
from .records import read_records

FINGERPRINT = 64  # bytes at the head and before the offset, compared before reading on


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


@dataclass(slots=True, eq=False)  # compared by identity: its scalars can be many
class EventFile:
    name: str  # relative to the TensorBoard directory
    path: Path
    identity: FileIdentity | None = None
    offset: int = 0
    records: int = 0  # records read from this file, in all
    head: bytes = b""
    tail: bytes = b""
    error: str | None = None
    tags: dict[str, TagValues] = field(default_factory=dict)
    records_read: int = 0  # by this process (a restart from the disk cache reads none)
    bytes_read: int = 0
    fresh: list[Scalar] = field(default_factory=list)  # what the last read found

    def refresh(self) -> tuple[bool, bool]:
        """Read what is new. (changed, restarted): whether new scalars came, and whether the
        file had to be read again from the start (what was known of it is gone)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            return self._failed(f"cannot be opened: {os_reason(exc)}")
        try:
            identity = FileIdentity.of(os.fstat(fd))
            if identity == self.identity:
                return False, False
            restarted = not self._continues(fd, identity)
            if restarted:
                self._forget()
            before = self.records
            self._read(fd, identity)
            return self.records > before or restarted, restarted
        except OSError as exc:
            return self._failed(f"cannot be read: {os_reason(exc)}")
        finally:
            os.close(fd)

    def _failed(self, message: str) -> tuple[bool, bool]:
        changed = self.error != message
        self.error, self.identity = message, None
        return changed, False

    def _continues(self, fd: int, identity: FileIdentity) -> bool:
        """Whether the bytes read so far are still the file's first bytes."""
        if self.identity is None and self.offset == 0:
            return True
        if identity.size < self.offset:
            return False
        head = os.pread(fd, len(self.head), 0)
        tail = os.pread(fd, len(self.tail), self.offset - len(self.tail))
        return head == self.head and tail == self.tail

    def _forget(self) -> None:
        self.offset, self.records, self.head, self.tail = 0, 0, b"", b""
        self.tags, self.error = {}, None

    def _read(self, fd: int, identity: FileIdentity) -> None:
        read = read_records(fd, self.offset, identity.size)
        self.bytes_read += read.offset - self.offset
        self.records_read += len(read.records)
        self.records += len(read.records)
        tags = self.tags
        self.fresh = list(decode_scalars(read.records))
        for tag, step, value, wall in self.fresh:
            values = tags.get(tag)
            if values is None:
                values = tags[tag] = TagValues()
            values.add(step, value, wall)
        self.offset = read.offset
        self.error = read.error
        self.identity = identity
        self.head = os.pread(fd, min(FINGERPRINT, self.offset), 0)
        start = max(0, self.offset - FINGERPRINT)
        self.tail = os.pread(fd, self.offset - start, start)

    def scalar_count(self) -> int:
        return sum(len(v.steps) for v in self.tags.values())
