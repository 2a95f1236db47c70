"""TFRecord framing of an event file, read from a byte offset on (never from the start again).

A record is `length (u64 LE) | masked crc32c of length (u32) | data | masked crc32c of data
(u32)`; the checksums are tensorboard's own (`tensorboard.compat.tensorflow_stub`). A record cut
short at the end of the file is a writer still writing: the read stops before it, and the next
read starts there. A checksum that does not match is damage: the read stops there and says so.

A read also says what it took, so the caller can tell whether the file changed under it: the
CRC-32 of the bytes consumed and their first and last `FINGERPRINT` bytes (`eventfile.py` reads
the range again and compares before the read counts).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from .checksums import bad_records

HEADER = 12  # length + its crc
FOOTER = 4  # the data's crc
MAX_RECORD = 64 * 1024 * 1024  # bytes; a "length" beyond this is damage, not a record
CHUNK = 8 * 1024 * 1024  # bytes read at once
FINGERPRINT = 64  # bytes kept of the start and the end of what a read consumed


@dataclass(slots=True)
class RecordRead:
    """What one read found: complete records, where the next read starts, and any damage."""

    records: list[bytes] = field(default_factory=list)
    offset: int = 0
    error: str | None = None  # a damaged record at `offset`: reads stop there
    start: int = 0  # where the read started: it consumed the bytes [start, offset)
    crc: int = 0  # zlib.crc32 of those bytes
    first: bytes = b""  # their first FINGERPRINT bytes
    last: bytes = b""  # their last FINGERPRINT bytes


def _crc() -> Callable[[bytes], int]:
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    return masked_crc32c


def read_records(
    fd: int, offset: int, size: int, between_chunks: Callable[[], None] | None = None
) -> RecordRead:
    """The complete records between `offset` and `size` of the open file `fd`, a chunk at a
    time: each chunk's records are framed, then their data checksums checked together.
    `between_chunks` (tests) runs before every chunk read but the first."""
    result = RecordRead(offset=offset, start=offset)
    header_crcs: dict[bytes, int] = {}  # a writer's records have few distinct lengths
    buffer, base = b"", offset  # the file's bytes from `base` on, not yet taken
    while base + len(buffer) < size:
        want = max(CHUNK, _pending(buffer) - len(buffer))
        start = base + len(buffer)
        if between_chunks is not None and start > offset:
            between_chunks()
        chunk = os.pread(fd, min(want, size - start), start)
        if not chunk:  # shorter than it was a moment ago: the next read sees why
            break
        buffer += chunk
        spans, used, error = _frame(buffer, header_crcs)
        bad = bad_records(buffer, spans)
        if bad is not None:  # the records before it are good; the read stops at it
            at, _ = spans[bad]
            spans, used, error = spans[:bad], at - HEADER, "a damaged record (checksum)"
        result.records += [buffer[at : at + length] for at, length in spans]
        _took(result, memoryview(buffer)[:used])
        base += used
        buffer = buffer[used:]
        if error is not None:
            result.error = f"{error} at byte {base}"
            break
    result.offset = base
    return result


def _took(result: RecordRead, consumed: memoryview) -> None:
    result.crc = zlib.crc32(consumed, result.crc)
    if len(result.first) < FINGERPRINT:
        result.first += bytes(consumed[: FINGERPRINT - len(result.first)])
    result.last = (result.last + bytes(consumed[-FINGERPRINT:]))[-FINGERPRINT:]


def crc_of(fd: int, start: int, end: int) -> int | None:
    """zlib.crc32 of the bytes [start, end) of `fd` as they are now; None when it is shorter."""
    crc, at = 0, start
    while at < end:
        chunk = os.pread(fd, min(CHUNK, end - at), at)
        if not chunk:
            return None
        crc = zlib.crc32(chunk, crc)
        at += len(chunk)
    return crc


def _pending(buffer: bytes) -> int:
    """Bytes the first record in `buffer` needs in all (its header, when that is not whole)."""
    if len(buffer) < HEADER:
        return HEADER
    (length,) = struct.unpack_from("<Q", buffer)
    return HEADER + min(length, MAX_RECORD) + FOOTER


def _frame(
    buffer: bytes, header_crcs: dict[bytes, int]
) -> tuple[list[tuple[int, int]], int, str | None]:
    """(data offset, length) of every complete record in `buffer`, the bytes they take, and
    the damage that stopped the framing (a header whose checksum does not match), if any."""
    crc = _crc()
    spans: list[tuple[int, int]] = []
    at, end = 0, len(buffer)
    while at + HEADER <= end:
        header = buffer[at : at + 8]
        expected = header_crcs.get(header)
        if expected is None:
            expected = header_crcs[header] = crc(header)
        (length,) = struct.unpack_from("<Q", header)
        if expected != struct.unpack_from("<I", buffer, at + 8)[0] or length > MAX_RECORD:
            return spans, at, "a damaged record header"
        if at + HEADER + length + FOOTER > end:
            break  # not all written yet (or not all read: the next chunk brings it)
        spans.append((at + HEADER, length))
        at += HEADER + length + FOOTER
    return spans, at, None
