"""The disk cache's entry format, and the checks an entry passes before anything uses it.

An entry is msgpack: the step file's identity, its columns as raw array bytes, its unreadable
lines and its statistics (`stats.step_stats`). A file that decodes is not yet an entry we can
use: a foreign or damaged one may hold columns of the wrong length, category codes past the
end of their list or statistics of another shape, and each of those would fail a page later,
far from here. So every entry is checked in full on load, and anything off makes it a miss.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import msgspec

from .columns import CATEGORICAL_KEYS, Columns
from .files import FileIdentity

FORMAT_VERSION = 1
_NUMERIC_ITEMSIZE = array("d").itemsize
_CODE_ITEMSIZE = array("i").itemsize


class _Entry(msgspec.Struct, frozen=True):
    version: int
    identity: tuple[int, int, int, int]
    rows: int
    numeric: dict[str, bytes]
    categorical: dict[str, bytes]
    categories: dict[str, list[str]]
    labels: list[str | None]
    keys: list[str]
    invalid: dict[int, str]
    stats: msgspec.Raw  # checked against _Stats, then handed out as plain data


class _Head(msgspec.Struct, frozen=True):
    """An entry without its columns: msgspec skips them undecoded, so reading stays cheap."""

    version: int
    identity: tuple[int, int, int, int]
    rows: int
    invalid: dict[int, str]
    stats: msgspec.Raw


# The shape of `stats.step_stats`'s result, key for key (tests check the two agree).
Count = Annotated[int, msgspec.Meta(ge=0)]
Number = float | None


class _Strict(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _Summary(_Strict):
    n: Count
    mean: Number
    std: Number
    min: Number
    max: Number


class _Lengths(_Strict):
    n: Count
    mean: Number
    p50: Number
    p90: Number
    max: Number


class _Groups(_Strict):
    groups: Count
    zero_signal_share: Number
    success_share: Number
    mean_std: Number


class _Histogram(_Strict):
    kind: Literal["values", "bins"]
    counts: list[Count]
    values: list[float] | None = None
    edges: list[float] | None = None


class _Histograms(_Strict):
    reward: _Histogram
    response_length: _Histogram


class _Stats(_Strict):
    samples: Count
    invalid: Count
    status: dict[str, Count]
    truncation_rate: Number
    reward: _Summary
    reward_by_dataset: dict[str, _Summary]
    reward_components: dict[str, _Summary]
    response_length: _Lengths
    groups: _Groups
    histograms: _Histograms


_stats_decoder = msgspec.msgpack.Decoder(_Stats)
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


def encode_entry(
    identity: FileIdentity,
    columns: Columns,
    invalid: dict[int, str],
    stats: dict[str, Any],
) -> bytes:
    """The entry's bytes. Raises ValueError (UnicodeEncodeError) for text msgpack cannot hold."""
    return _encoder.encode(
        {
            "version": FORMAT_VERSION,
            "identity": identity.as_tuple(),
            "rows": columns.rows,
            "numeric": {name: col.tobytes() for name, col in columns.numeric.items()},
            "categorical": {name: col.tobytes() for name, col in columns.categorical.items()},
            "categories": columns.categories,
            "labels": columns.labels,
            "keys": list(columns.keys),
            "invalid": invalid,
            "stats": stats,
        }
    )


def decode_entry(blob: bytes, identity: FileIdentity) -> CachedStep | str | None:
    """The step, or None for an entry of another file version, or why the entry is unusable."""
    try:
        entry = _entry_decoder.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"it does not decode ({exc})"
    if entry.version != FORMAT_VERSION or entry.identity != identity.as_tuple():
        return None
    columns = _columns_of(entry)
    if isinstance(columns, str):
        return columns
    stats = _stats_of(entry.stats, entry.rows, entry.invalid)
    if isinstance(stats, str):
        return stats
    return CachedStep(columns, dict(entry.invalid), stats)


def decode_stats(blob: bytes, identity: FileIdentity) -> dict[str, Any] | str | None:
    """Just the statistics (what the trends need), as `decode_entry` says it."""
    try:
        head = _head_decoder.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"it does not decode ({exc})"
    if head.version != FORMAT_VERSION or head.identity != identity.as_tuple():
        return None
    if not _invalid_in_range(head.invalid, head.rows):
        return "an unreadable line lies outside the step"
    return _stats_of(head.stats, head.rows, head.invalid)


def _stats_of(raw: msgspec.Raw, rows: int, invalid: dict[int, str]) -> dict[str, Any] | str:
    try:
        stats = _plain_decoder.decode(raw)
    except msgspec.DecodeError as exc:
        return f"its statistics do not decode ({exc})"
    why = validate_stats(stats, rows, len(invalid))
    return why if why is not None else stats


def validate_stats(stats: Any, rows: int, invalid: int) -> str | None:
    """Why `stats` is not what `step_stats` makes for `rows` records, `invalid` unreadable."""
    try:
        checked = _stats_decoder.decode(_encoder.encode(stats))
    except (msgspec.ValidationError, msgspec.DecodeError, TypeError) as exc:
        return f"its statistics have another shape ({exc})"
    if not _all_finite(stats):
        return "its statistics hold a number that is not finite"
    if checked.invalid != invalid or checked.samples != rows - invalid:
        return "its statistics count other samples than its columns"
    for name, histogram in (
        ("reward", checked.histograms.reward),
        ("response_length", checked.histograms.response_length),
    ):
        if histogram.kind == "values":
            fits = histogram.values is not None and len(histogram.values) == len(histogram.counts)
        else:
            edges = histogram.edges
            fits = edges is not None and len(edges) == len(histogram.counts) + 1
        if not fits:
            return f"its {name} histogram has bars without edges or values"
    return None


def _columns_of(entry: _Entry) -> Columns | str:
    rows = entry.rows
    if rows < 0:
        return "its row count is negative"
    columns = Columns()
    columns.rows = rows
    for name, raw in entry.numeric.items():
        if len(raw) != rows * _NUMERIC_ITEMSIZE:
            return f"its {name!r} column does not hold {rows} numbers"
        columns.numeric[name] = array("d", raw)
    if set(entry.categorical) != set(entry.categories):
        return "its string columns and their categories disagree"
    for name, raw in entry.categorical.items():
        values = entry.categories[name]
        if name not in CATEGORICAL_KEYS or len(set(values)) != len(values):
            return f"its {name!r} column is not a column the viewer makes"
        if len(raw) != rows * _CODE_ITEMSIZE:
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
    columns.keys = dict.fromkeys(entry.keys)
    if not _invalid_in_range(entry.invalid, rows):
        return "an unreadable line lies outside the step"
    return columns


def _invalid_in_range(invalid: dict[int, str], rows: int) -> bool:
    return all(0 <= position < rows for position in invalid)


def _all_finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_finite(v) for v in value)
    return True
