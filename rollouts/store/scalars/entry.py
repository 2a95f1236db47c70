"""An event file's disk cache entry: what was read of it, so a restarted viewer reads nothing.

msgpack: the file's identity when read, the offset reached, the fingerprints before it, and
each tag's steps, values and wall times as raw arrays. Checked in full on load (array lengths,
the offset within the file, the fingerprints against the file's bytes now): anything off is a
miss and the file is read again. An entry of a file that has grown since is still good: the
read goes on from its offset.
"""

from __future__ import annotations

import os
import stat
from array import array

import msgspec

from ..files import FileIdentity
from .eventfile import OPEN_FLAGS, EventFile, TagValues

FORMAT_VERSION = 1
KIND = "scalars"  # the disk cache's name for these entries (beside the steps')


class _Tag(msgspec.Struct, frozen=True):
    steps: bytes
    values: bytes
    walls: bytes


class _Entry(msgspec.Struct, frozen=True):
    version: int
    identity: tuple[int, int, int, int]
    offset: int
    records: int
    head: bytes
    tail: bytes
    error: str | None
    tags: dict[str, _Tag]


_decoder = msgspec.msgpack.Decoder(_Entry)
_encoder = msgspec.msgpack.Encoder()


def encode_event_file(state: EventFile) -> bytes | None:
    if state.identity is None:
        return None
    return _encoder.encode(
        _Entry(
            FORMAT_VERSION,
            state.identity.as_tuple(),
            state.offset,
            state.records,
            state.head,
            state.tail,
            state.error,
            {
                tag: _Tag(v.steps.tobytes(), v.values.tobytes(), v.walls.tobytes())
                for tag, v in state.tags.items()
            },
        )
    )


def restore_event_file(state: EventFile, blob: bytes) -> str | None:
    """Fill `state` (a file not read yet) from the entry; why it cannot be used, or None."""
    try:
        entry = _decoder.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"it does not decode ({exc})"
    if entry.version != FORMAT_VERSION:
        return "it is of another format"
    try:
        fd = os.open(state.path, OPEN_FLAGS)  # never blocks, even on a FIFO
    except OSError:
        return "the file cannot be read"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return "it is not a regular file"
        if st.st_size < entry.offset or entry.offset < 0:
            return "the file is shorter than what it says was read"
        head = os.pread(fd, len(entry.head), 0)
        tail = os.pread(fd, len(entry.tail), entry.offset - len(entry.tail))
    except OSError:
        return "the file cannot be read"
    finally:
        os.close(fd)
    if head != entry.head or tail != entry.tail:
        return "the file's bytes changed"
    tags: dict[str, TagValues] = {}
    for tag, raw in entry.tags.items():
        if not len(raw.steps) == len(raw.values) == len(raw.walls) or len(raw.steps) % 8:
            return f"tag {tag!r} has arrays of different or odd lengths"
        tags[tag] = TagValues(array("q", raw.steps), array("d", raw.values), array("d", raw.walls))
    state.offset, state.records, state.head, state.tail = (
        entry.offset,
        entry.records,
        entry.head,
        entry.tail,
    )
    state.error, state.tags = entry.error, tags
    # The identity it was read at: an unchanged file is then not read at all; a grown one is
    # read from the offset on.
    state.identity = FileIdentity(*entry.identity)
    state.inode = (state.identity.dev, state.identity.ino)
    return None
