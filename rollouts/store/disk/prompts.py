"""The prompt columns of a step (`lineage.py`): from a disk cache entry, or from live columns.

Following a prompt through 300 steps must not decode 300 steps' labels and statistics: this
reads an entry through a struct that declares only the prompt ids, the line table and the few
columns an appearance shows (msgspec skips the rest undecoded), and checks each part it uses
the way `entry.decode_entry` checks it.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import msgspec

from ..columns import Columns
from ..files import FileIdentity
from .format import (
    CODE_ITEMSIZE,
    NUMERIC_ITEMSIZE,
    PROMPT_ID_ITEMSIZE,
    ColumnsEntry,
    decoded_entry,
    invalid_in_range,
)

_prompt_decoder = msgspec.msgpack.Decoder(ColumnsEntry)  # labels and statistics skipped undecoded
PROMPT_NUMERIC = ("reward", "response_length")
PROMPT_CATEGORICAL = ("status", "dataset")


@dataclass(frozen=True, slots=True)
class PromptColumns:
    """What following a prompt needs of a step, each array one value per row."""

    rows: int
    prompt_ids: array  # "Q"
    lines: array  # "q", 1-based line numbers
    numeric: dict[str, array]  # PROMPT_NUMERIC that the step has, "d"
    categorical: dict[str, array]  # PROMPT_CATEGORICAL that the step has, "i" codes
    categories: dict[str, list[str]]
    invalid: frozenset[int]


def decode_prompt_columns(blob: bytes, identity: FileIdentity) -> PromptColumns | str | None:
    """The prompt columns of an entry, as `decode_entry` says it; every part used is checked
    as `decode_entry` checks it (lengths, codes in range, unreadable lines inside the step)."""
    entry = decoded_entry(_prompt_decoder, blob, identity)
    if entry is None or isinstance(entry, str):
        return entry
    rows = entry.rows
    if rows < 0 or len(entry.prompt_ids) != rows * PROMPT_ID_ITEMSIZE:
        return f"its prompt ids do not number {rows}"
    lines = array("q", entry.lines.lines)
    if len(lines) != rows:
        return f"its line table does not hold {rows} lines"
    numeric = {}
    for name in PROMPT_NUMERIC:
        raw = entry.numeric.get(name)
        if raw is not None:
            if len(raw) != rows * NUMERIC_ITEMSIZE:
                return f"its {name!r} column does not hold {rows} numbers"
            numeric[name] = array("d", raw)
    categorical, categories = {}, {}
    for name in PROMPT_CATEGORICAL:
        raw = entry.categorical.get(name)
        if raw is None:
            continue
        values = entry.categories.get(name)
        if values is None or len(raw) != rows * CODE_ITEMSIZE:
            return f"its {name!r} column does not hold {rows} codes"
        codes = array("i", raw)
        if rows and not (min(codes) >= -1 and max(codes) < len(values)):
            return f"its {name!r} column has codes outside its {len(values)} categories"
        categorical[name], categories[name] = codes, list(values)
    if not invalid_in_range(entry.invalid, rows):
        return "an unreadable line lies outside the step"
    ids = array("Q", entry.prompt_ids)
    return PromptColumns(
        rows, ids, lines, numeric, categorical, categories, frozenset(entry.invalid)
    )


def prompt_columns_of(columns: Columns, lines: array, invalid: dict[int, str]) -> PromptColumns:
    """The same from a step's live columns (copies, so the step's index may change meanwhile)."""
    rows = columns.rows
    return PromptColumns(
        rows,
        array("Q", columns.prompt_ids[:rows]),
        array("q", lines[:rows]),
        {n: array("d", columns.numeric[n][:rows]) for n in PROMPT_NUMERIC if n in columns.numeric},
        {
            n: array("i", columns.categorical[n][:rows])
            for n in PROMPT_CATEGORICAL
            if n in columns.categorical
        },
        {n: list(columns.categories[n]) for n in PROMPT_CATEGORICAL if n in columns.categories},
        frozenset(invalid),
    )
