"""TFRecord framing of an event file, read from a byte offset on (never from the start again).

A record is `length (u64 LE) | masked crc32c of length (u32) | data | masked crc32c of data
(u32)`; the checksums are tensorboard's own (`tensorboard.compat.tensorflow_stub`). A record cut
short at the end of the file is a writer still writing: the read stops before it, and the next
read starts there. A checksum that does not match is damage: the read stops there and says so.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

HEADER = 12  # length + its crc
FOOTER = 4  # the data's crc
MAX_RECORD = 64 * 1024 * 1024  # bytes; a "length" beyond this is damage, not a record
CHUNK = 8 * 1024 * 1024  # bytes read at once


@dataclass(slots=True)
class RecordRead:
    """What one read found: complete records, where the next read starts, and any damage."""

    records: list[bytes] = field(default_factory=list)
    offset: int = 0
    error: str | None = None  # a damaged record at `offset`: reads stop there


def _crc() -> Callable[[bytes], int]:
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import (
        masked_crc32c,
    )

    return masked_crc32c


def read_records(fd: int, offset: int, size: int) -> RecordRead:
    """The complete records between `offset` and `size` of the open file `fd`."""
    crc = _crc()
    result = RecordRead(offset=offset)
    buffer, base = b"", offset  # buffer holds the file's bytes from `base` on
    position = offset
    while position < size:
        if len(buffer) - (position - base) < HEADER:
            buffer, base = _more(fd, buffer, base, position, size)
        at = position - base
        if len(buffer) - at < HEADER:
            break  # a header cut short: the writer is still writing it
        header = buffer[at : at + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack_from("<I", buffer, at + 8)
        if crc(header) != header_crc or length > MAX_RECORD:
            result.error = f"a damaged record header at byte {position}"
            break
        end = at + HEADER + length + FOOTER
        if end > len(buffer):
            buffer, base = _more(fd, buffer, base, position, size, HEADER + length + FOOTER)
            at = position - base
            end = at + HEADER + length + FOOTER
            if end > len(buffer):
                break  # the record's data is not all written yet
        data = buffer[at + HEADER : at + HEADER + length]
        (data_crc,) = struct.unpack_from("<I", buffer, at + HEADER + length)
        if crc(data) != data_crc:
            result.error = f"a damaged record (checksum) at byte {position}"
            break
        result.records.append(data)
        position += HEADER + length + FOOTER
    result.offset = position
    return result


def _more(
    fd: int, buffer: bytes, base: int, position: int, size: int, need: int = 0
) -> tuple[bytes, int]:
    """The buffer from `position` on, with the next chunk (or `need` bytes) of the file."""
    kept = buffer[position - base :]
    wanted = max(CHUNK, need - len(kept))
    start = position + len(kept)
    chunk = os.pread(fd, min(wanted, max(0, size - start)), start) if start < size else b""
    return kept + chunk, position
