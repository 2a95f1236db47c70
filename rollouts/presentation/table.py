"""A step as a table: one row per sample from the step's columns (reward, status, length,
dataset, group), plus the first characters of its response, read for the shown rows only.

Plain data (no Django, no HTML): the table page and its JSON twin carry the same rows. The
header's sort keys are the sample pages' `sort` values (column names), so a table's order and
the order ←/→ follow on a sample page opened from it are the same ordering.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from ..store import Columns
from .formatting import format_number

ROWS_PER_PAGE = 200  # a page of an 8,000-row step: 200 small reads, well under 0.1 s


@dataclass(frozen=True, slots=True)
class TableColumn:
    key: str  # what the row and the JSON call it
    label: str  # the header's text
    candidates: tuple[str, ...]  # step columns it may be sorted by, the first present wins
    first_order: str  # the order a header link asks for first: the interesting end on top


COLUMNS = (
    TableColumn("position", "sample", (), "asc"),
    TableColumn("reward", "reward", ("reward",), "desc"),
    TableColumn("status", "status", ("status",), "asc"),
    TableColumn("response_length", "length", ("response_length", "response_token_count"), "desc"),
    TableColumn("dataset", "dataset", ("dataset",), "asc"),
    TableColumn("group_index", "group", ("group_index",), "asc"),
)


def sort_column(columns: Columns, column: TableColumn) -> str | None:
    """The step column a header sorts by ("position" for file order), or None: not sortable."""
    if not column.candidates:
        return "position"
    names = {*columns.numeric, *columns.categorical}
    return next((name for name in column.candidates if name in names), None)


def next_order(sort: str | None, descending: bool, column: str, first_order: str) -> str:
    """A header link's order: the column's own first order, or the other one when it is the
    column sorted already."""
    current = sort or "position"
    if column != current:
        return first_order
    return "asc" if descending else "desc"


class TableRow(TypedDict):
    position: int
    line: int
    reward: float | None
    reward_parts: dict[str, float] | None  # an object reward's components
    reward_text: str
    status: str | None
    response_length: float | int | None
    dataset: str | None
    group_index: float | int | None
    response: str | None


def table_row(
    columns: Columns, position: int, line: int, response: str | None, lengths: tuple[str, ...]
) -> TableRow:
    """One sample's row from the columns; `response` is its preview (None: it has none)."""
    reward = _number(columns, "reward", position)
    parts = {
        name.removeprefix("reward."): value
        for name in columns.numeric
        if name.startswith("reward.") and (value := _number(columns, name, position)) is not None
    }
    length = next(
        (v for name in lengths if (v := _number(columns, name, position)) is not None), None
    )
    group = _number(columns, "group_index", position)
    return {
        "position": position,
        "line": line,
        "reward": reward,
        "reward_parts": parts or None,
        "reward_text": reward_text(reward, parts),
        "status": _text(columns, "status", position),
        "response_length": _whole(length),
        "dataset": _text(columns, "dataset", position),
        "group_index": _whole(group),
        "response": response,
    }


def reward_text(reward: float | None, parts: Mapping[str, float]) -> str:
    if reward is not None:
        return format_number(_whole(reward))
    if parts:  # an object reward, by component
        return ", ".join(f"{name} {format_number(_whole(v))}" for name, v in parts.items())
    return "null"


def page_window(total: int, page: int, size: int) -> tuple[int, int, int]:
    """(start, stop, pages) of 1-based `page`, clamped to the last page (0 rows: one page)."""
    pages = max(1, math.ceil(total / size))
    page = min(max(page, 1), pages)
    start = (page - 1) * size
    return start, min(start + size, total), pages


def _number(columns: Columns, name: str, position: int) -> float | None:
    column = columns.numeric.get(name)
    if column is None or position >= len(column):
        return None
    value = column[position]
    return None if math.isnan(value) else value


def _text(columns: Columns, name: str, position: int) -> str | None:
    codes = columns.categorical.get(name)
    if codes is None or position >= len(codes) or codes[position] < 0:
        return None
    return columns.categories[name][codes[position]]


def _whole(value: float | None) -> float | int | None:
    """A count or index as an int (4096, not 4096.0); other numbers as they are."""
    if value is not None and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def page_numbers(current: int, pages: int) -> list[int | None]:
    """The page links shown: the first, the last, and two around the current (None: a gap)."""
    near = {1, pages, *range(current - 2, current + 3)}
    numbers: list[int | None] = []
    for n in sorted(n for n in near if 1 <= n <= pages):
        if numbers and n - (numbers[-1] or 0) > 1:
            numbers.append(None)
        numbers.append(n)
    return numbers
