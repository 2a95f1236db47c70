"""What every reader of a disk cache entry shares: the format's version, the arrays' item sizes,
the line table's struct, and the first checks (the version and the file's identity, unreadable
lines inside the step). `entry` reads a whole entry, `prompts` only a step's prompt columns."""

from __future__ import annotations

from array import array
from typing import Annotated, Any

import msgspec

from ..files import FileIdentity

FORMAT_VERSION = 4  # 2: the line table; 3: prompt ids; 4: response measures (flags)
NUMERIC_ITEMSIZE = array("d").itemsize
CODE_ITEMSIZE = array("i").itemsize
PROMPT_ID_ITEMSIZE = array("Q").itemsize


class LineTable(msgspec.Struct, frozen=True):
    """`StepIndex`'s line table: what its newline scan found (arrays as raw bytes)."""

    starts: bytes
    ends: bytes
    lines: bytes
    committed: int
    committed_lines: int
    tentative_tail: bool
    partial_tail_bytes: int
    head_fingerprint: bytes
    tail_fingerprint: bytes


Share = Annotated[float, msgspec.Meta(ge=0, le=1)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class Measures(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One response's measures (`measures.measure_response`), each optional."""

    loop: tuple[Positive, Positive] | None = None
    repeat: tuple[Share, Positive, Positive] | None = None
    script: tuple[Share, str, str, Positive] | None = None


MEASURES = ("loop", "repeat", "script")


class ColumnsEntry(msgspec.Struct, frozen=True):
    """The part of an entry every reader of its columns decodes: which file version it is, its
    line table and columns, its unreadable lines. `entry` reads the labels, keys and statistics
    on top; `prompts` only the prompt ids (msgspec skips the fields a struct does not name)."""

    version: int
    identity: tuple[int, int, int, int]
    rows: int
    lines: LineTable
    numeric: dict[str, bytes]
    categorical: dict[str, bytes]
    categories: dict[str, list[str]]
    prompt_ids: bytes
    invalid: dict[int, str]


def invalid_in_range(invalid: dict[int, str], rows: int) -> bool:
    return all(0 <= position < rows for position in invalid)


def decoded_entry(decoder: msgspec.msgpack.Decoder, blob: bytes, identity: FileIdentity) -> Any:
    """The decoded entry (or its head), None when it is of another version of the file, or
    why it does not decode."""
    try:
        entry = decoder.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"it does not decode ({exc})"
    if entry.version != FORMAT_VERSION or entry.identity != identity.as_tuple():
        return None
    return entry
