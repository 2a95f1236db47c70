"""The disk cache's entry format, and the checks an entry passes before anything uses it.

An entry is msgpack: the step file's identity, where its lines start and end (so a restart
needs no newline scan), its columns as raw array bytes, its unreadable lines and its statistics
(`stats.step_stats`). A file that decodes is not yet an entry we can
use: a foreign or damaged one may hold columns of the wrong length, category codes past the
end of their list or statistics of another shape, and each of those would fail a page later,
far from here. So every entry is checked in full on load, and anything off makes it a miss.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ..columns import CATEGORICAL_KEYS, Columns
from ..files import FileIdentity
from ..index import FINGERPRINT_BYTES, StepIndex
from ..statsshape import validate_stats
from .format import (
    CODE_ITEMSIZE,
    FORMAT_VERSION,
    MEASURES,
    NUMERIC_ITEMSIZE,
    PROMPT_ID_ITEMSIZE,
    ColumnsEntry,
    LineTable,
    Measures,
    decoded_entry,
    invalid_in_range,
)


class _Entry(ColumnsEntry, frozen=True):
    labels: list[str | None]
    keys: list[str]
    stats: msgspec.Raw  # checked against _Stats, then handed out as plain data
    # Format 4's (the flags' response measures). Defaults, so an entry of an older format
    # decodes far enough to be told apart by its version (a quiet miss, then rewritten),
    # rather than failing as damaged; a format 4 entry without them fails its checks.
    text_bits: bytes = b""
    measures: dict[int, Measures] = msgspec.field(default_factory=dict)


class _Head(msgspec.Struct, frozen=True):
    """An entry without its columns: msgspec skips them undecoded, so reading stays cheap."""

    version: int
    identity: tuple[int, int, int, int]
    rows: int
    invalid: dict[int, str]
    stats: msgspec.Raw


_plain_decoder = msgspec.msgpack.Decoder()
_entry_decoder = msgspec.msgpack.Decoder(_Entry)
_head_decoder = msgspec.msgpack.Decoder(_Head)
_encoder = msgspec.msgpack.Encoder()


@dataclass(frozen=True, slots=True)
class CachedStep:
    """What the disk held for one step: its columns, unreadable lines and statistics."""

    columns: Columns
    invalid: dict[int, str]
    stats: dict[str, Any]
    lines: LineTable


def encode_entry(index: StepIndex, columns: Columns, stats: dict[str, Any]) -> bytes:
    """The entry's bytes. Raises ValueError (UnicodeEncodeError) for text msgpack cannot hold.

    The caller holds `index.lock`, so the line table and the columns are of one file version.
    """
    invalid = index.invalid
    return _encoder.encode(
        {
            "version": FORMAT_VERSION,
            "identity": index.identity.as_tuple(),
            "rows": columns.rows,
            "lines": {
                "starts": index.starts.tobytes(),
                "ends": index.ends.tobytes(),
                "lines": index.lines.tobytes(),
                "committed": index.committed,
                "committed_lines": index.committed_lines,
                "tentative_tail": index.tentative_tail,
                "partial_tail_bytes": index.partial_tail_bytes,
                "head_fingerprint": index.fingerprint[1],
                "tail_fingerprint": index.fingerprint[2],
            },
            "numeric": {name: col.tobytes() for name, col in columns.numeric.items()},
            "categorical": {name: col.tobytes() for name, col in columns.categorical.items()},
            "categories": columns.categories,
            "labels": columns.labels,
            "prompt_ids": columns.prompt_ids.tobytes(),
            "text_bits": columns.text_bits.tobytes(),
            "measures": columns.measures,
            "keys": list(columns.keys),
            "invalid": invalid,
            "stats": stats,
        }
    )


def decode_entry(blob: bytes, identity: FileIdentity) -> CachedStep | str | None:
    """The step, or None for an entry of another file version, or why the entry is unusable."""
    entry = decoded_entry(_entry_decoder, blob, identity)
    if entry is None or isinstance(entry, str):
        return entry
    columns = _columns_of(entry)
    if isinstance(columns, str):
        return columns
    stats = _stats_of(entry.stats, entry.rows, entry.invalid)
    if isinstance(stats, str):
        return stats
    return CachedStep(columns, dict(entry.invalid), stats, entry.lines)


def restore_index(
    path: Path, name: str, identity: FileIdentity, cached: CachedStep
) -> StepIndex | None:
    """The step's index as the newline scan would build it, from the entry's line table, with
    the entry's columns; None when the table does not fit the file as it is now."""
    table = cached.lines
    starts, ends, lines = (array("q", raw) for raw in (table.starts, table.ends, table.lines))
    rows, size, committed = cached.columns.rows, identity.size, table.committed
    if not (len(starts) == len(ends) == len(lines) == rows and 0 <= committed <= size):
        return None
    if rows and not _ordered(starts, ends, lines, committed if not table.tentative_tail else size):
        return None
    if table.partial_tail_bytes not in (0, size - committed):
        return None
    head_length = min(FINGERPRINT_BYTES, committed)
    tail_start = committed - min(FINGERPRINT_BYTES, committed)
    try:
        with open(path, "rb") as f:
            head = os.pread(f.fileno(), head_length, 0)
            tail = os.pread(f.fileno(), committed - tail_start, tail_start)
    except OSError:
        return None
    if head != table.head_fingerprint or tail != table.tail_fingerprint:
        return None  # same identity, other bytes: scan it
    index = StepIndex(path, name)
    index.starts, index.ends, index.lines = starts, ends, lines
    index.committed, index.committed_lines = committed, table.committed_lines
    index.tentative_tail, index.partial_tail_bytes = table.tentative_tail, table.partial_tail_bytes
    index.fingerprint = (committed, head, tail)
    index.identity, index.generation = identity, 1
    if not index.adopt_columns(cached.columns, cached.invalid):
        return None
    index.stats_memo = ((index.generation, index.columns_rows), cached.stats)
    return index


def _ordered(starts: array, ends: array, lines: array, end_limit: int) -> bool:
    """Each record inside the file, not empty, after the one before it, on a later line."""
    if starts[0] < 0 or lines[0] < 1 or ends[-1] > end_limit:
        return False
    if any(start >= end for start, end in zip(starts, ends, strict=True)):  # never empty
        return False
    following = zip(ends, starts[1:], lines, lines[1:], strict=False)
    return all(end < start and line < later for end, start, line, later in following)


def decode_stats(blob: bytes, identity: FileIdentity) -> dict[str, Any] | str | None:
    """Just the statistics (what the trends need), as `decode_entry` says it."""
    head = decoded_entry(_head_decoder, blob, identity)
    if head is None or isinstance(head, str):
        return head
    if not invalid_in_range(head.invalid, head.rows):
        return "an unreadable line lies outside the step"
    return _stats_of(head.stats, head.rows, head.invalid)


def _stats_of(raw: msgspec.Raw, rows: int, invalid: dict[int, str]) -> dict[str, Any] | str:
    try:
        stats = _plain_decoder.decode(raw)
    except msgspec.DecodeError as exc:
        return f"its statistics do not decode ({exc})"
    why = validate_stats(stats, rows, len(invalid))
    return why if why is not None else stats


def _columns_of(entry: _Entry) -> Columns | str:
    rows = entry.rows
    if rows < 0:
        return "its row count is negative"
    columns = Columns()
    columns.rows = rows
    for name, raw in entry.numeric.items():
        if len(raw) != rows * NUMERIC_ITEMSIZE:
            return f"its {name!r} column does not hold {rows} numbers"
        columns.numeric[name] = array("d", raw)
    if set(entry.categorical) != set(entry.categories):
        return "its string columns and their categories disagree"
    for name, raw in entry.categorical.items():
        values = entry.categories[name]
        if name not in CATEGORICAL_KEYS or len(set(values)) != len(values):
            return f"its {name!r} column is not a column the viewer makes"
        if len(raw) != rows * CODE_ITEMSIZE:
            return f"its {name!r} column does not hold {rows} codes"
        codes = array("i", raw)
        if rows and not (min(codes) >= -1 and max(codes) < len(values)):
            return f"its {name!r} column has codes outside its {len(values)} categories"
        columns.categorical[name] = codes
        columns.categories[name] = list(values)
    columns.restore_codes()
    if len(entry.labels) != rows:
        return f"it has {len(entry.labels)} labels for {rows} rows"
    columns.labels = list(entry.labels)
    if len(entry.prompt_ids) != rows * PROMPT_ID_ITEMSIZE:
        return f"its prompt ids do not number {rows}"
    columns.prompt_ids = array("Q", entry.prompt_ids)
    columns.keys = dict.fromkeys(entry.keys)
    if len(entry.text_bits) != rows:
        return f"its response measures do not number {rows}"
    columns.text_bits = array("B", entry.text_bits)
    if not all(0 <= row < rows for row in entry.measures):
        return "a response measure lies outside the step"
    columns.measures = {
        row: {k: list(v) for k in MEASURES if (v := getattr(measures, k)) is not None}
        for row, measures in entry.measures.items()
    }
    if not invalid_in_range(entry.invalid, rows):
        return "an unreadable line lies outside the step"
    return columns
