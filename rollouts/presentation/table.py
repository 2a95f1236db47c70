"""A step as a table: one row per sample from the step's columns (the chosen ones: reward,
advantage, status, length, dataset, group by default, or any numeric field), plus what its line
says, read for the shown rows only: the final answer with its check against the label, and a
preview of the response around that answer.

Plain data (no Django, no HTML): the table page and its JSON twin carry the same rows. The
header's sort keys are the sample pages' `sort` values (column names), so a table's order and
the order ←/→ follow on a sample page opened from it are the same ordering.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from ..store import ADVANTAGE, Columns, format_number, has_advantage, locate_answer
from .preview import response_preview
from .verdict import Answer, label_check

ROWS_PER_PAGE = 200  # a page of an 8,000-row step: 200 small reads, well under 0.1 s


@dataclass(frozen=True, slots=True)
class TableColumn:
    key: str  # what the row and the JSON call it
    label: str  # the header's text
    candidates: tuple[str, ...]  # step columns it may be sorted by, the first present wins
    first_order: str  # the order a header link asks for first: the interesting end on top


POSITION = TableColumn("position", "sample", (), "asc")
ANSWER = TableColumn("answer", "answer", (), "asc")  # not sortable: read for shown rows only
# The row's flags (`store.flags`), judged for the shown rows only; filtered by `flag=`, not sorted.
FLAGS_COLUMN = TableColumn("flags", "flags", (), "asc")
# The columns a table knows by name (others: a numeric field, labelled by its name).
NAMED = {
    "reward": TableColumn("reward", "reward", ("reward",), "desc"),
    ADVANTAGE: TableColumn(ADVANTAGE, "advantage", (ADVANTAGE,), "desc"),
    "status": TableColumn("status", "status", ("status",), "asc"),
    "response_length": TableColumn(
        "response_length", "length", ("response_length", "response_token_count"), "desc"
    ),
    "dataset": TableColumn("dataset", "dataset", ("dataset",), "asc"),
    "group_index": TableColumn("group_index", "group", ("group_index",), "asc"),
}
COLUMNS = (POSITION, *NAMED.values())  # every known column (a step shows those it has)
# What a table shows unless `cols` says otherwise: each the first of its names the step has.
DEFAULT_COLUMNS = (
    ("reward",),
    (ADVANTAGE,),
    ("status",),
    ("response_length", "response_token_count"),
    ("dataset",),
    ("group_index",),
)
CATEGORICAL_CHOICES = ("status", "dataset")
MAX_COLUMNS = 40  # chosen columns kept; more are ignored
MAX_NAME_CHARS = 100  # a longer name is no column of any step
NO_COLUMNS = "none"  # `cols=none`: only the fixed columns (an empty value is dropped from URLs)
TEXT_FIELDS = ("response", "label")  # what a row reads from its line


def column_choices(columns: Columns) -> list[str]:
    """The columns a step's table may show, as the chooser lists them: status and dataset
    (when present), reward and advantage, then every other numeric field in first-seen order."""
    names = [name for name in CATEGORICAL_CHOICES if name in columns.categorical]
    if "reward" in columns.numeric:
        names.append("reward")
    if has_advantage(columns):
        names.append(ADVANTAGE)
    names += [name for name in columns.numeric if name not in names]
    return names


def default_columns(columns: Columns) -> list[str]:
    choices = set(column_choices(columns))
    return [
        name
        for names in DEFAULT_COLUMNS
        if (name := next((n for n in names if n in choices), None)) is not None
    ]


def chosen_columns(columns: Columns, asked: Sequence[str] | None) -> list[str]:
    """The columns to show: `asked` (the values of `cols`, each a comma-separated list of
    names) in its order, unknown names, repeats and names past MAX_COLUMNS left out; the
    defaults when nothing was asked (None)."""
    if asked is None:
        return default_columns(columns)
    choices = set(column_choices(columns))
    chosen: list[str] = []
    for value in asked[:MAX_COLUMNS]:
        for name in value.split(",")[:MAX_COLUMNS]:
            name = name.strip()
            if len(name) <= MAX_NAME_CHARS and name in choices and name not in chosen:
                chosen.append(name)
    return chosen[:MAX_COLUMNS]


def cols_param(columns: Columns, chosen: Sequence[str]) -> str:
    """`cols` as URLs carry it: "" for the defaults (left out), "none" for no column."""
    if list(chosen) == default_columns(columns):
        return ""
    return ",".join(chosen) or NO_COLUMNS


def table_column(name: str) -> TableColumn:
    return NAMED.get(name) or TableColumn(name, name, (name,), "desc")


def sort_column(columns: Columns, column: TableColumn) -> str | None:
    """The step column a header sorts by ("position" for file order), or None: not sortable."""
    if column is ANSWER or column is FLAGS_COLUMN:
        return None
    if not column.candidates:
        return "position"
    names = {*columns.numeric, *columns.categorical}
    if has_advantage(columns):
        names.add(ADVANTAGE)
    return next((name for name in column.candidates if name in names), None)


def next_order(sort: str | None, descending: bool, column: str, first_order: str) -> str:
    """A header link's order: the column's own first order, or the other one when it is the
    column sorted already."""
    current = sort or "position"
    if column != current:
        return first_order
    return "asc" if descending else "desc"


class TableCell(TypedDict):
    key: str  # the column's name
    value: float | int | str | None  # as the columns hold it (None: missing)
    text: str  # as shown: a dash for a missing value, a sign on an advantage ("+0.2500")
    tone: str | None  # an advantage's direction: "up", "down" or "even"; else None


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
    advantage: float | None  # reward minus its group's mean (or the file's own advantage)
    answer: str | None  # the response's final answer (`\boxed{}` or `<answer>`)
    match: bool | None  # the answer against the label, as the sample header checks it
    response: str | None  # the preview: the text around the answer, without boilerplate
    cells: list[TableCell]  # the chosen columns' values, in their order


def table_row(
    columns: Columns,
    position: int,
    line: int,
    texts: Mapping[str, Any] | None,
    lengths: tuple[str, ...],
    chosen: Sequence[str] = (),
    advantages: Sequence[float] = (),
) -> TableRow:
    """One sample's row from the columns, and from `texts` (its line's `TEXT_FIELDS`; None:
    unreadable) its answer, the answer's check and the response's preview."""
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
    advantage = _at(advantages, position)
    response = None if texts is None else texts.get("response")
    found = locate_answer(response)
    answer = None if found is None else Answer(found[0], found[1])
    text = reward_text(reward, parts)
    cells: list[TableCell] = []
    for name in chosen:
        if name == "reward":
            cells.append(_cell(name, reward, text))
        elif name == ADVANTAGE:
            cells.append(_signed(advantage))
        elif name in columns.categorical:
            cells.append(_cell(name, _text(columns, name, position)))
        else:
            cells.append(_cell(name, _whole(_number(columns, name, position))))
    return {
        "position": position,
        "line": line,
        "reward": reward,
        "reward_parts": parts or None,
        "reward_text": text,
        "status": _text(columns, "status", position),
        "response_length": _whole(length),
        "dataset": _text(columns, "dataset", position),
        "group_index": _whole(group),
        "advantage": advantage,
        "answer": None if answer is None else answer.text,
        "match": None if texts is None else _check(answer, texts.get("label")),
        "response": response_preview(response, None if found is None else found[2:]),
        "cells": cells,
    }


def _check(answer: Answer | None, label: Any) -> bool | None:
    """`label_check`, remembered for a text or number label: a group's rows share their label
    and most of their answers, so a page compares each pair once."""
    if answer is None or label is None:
        return None
    if isinstance(label, str | int | float) and not isinstance(label, bool):
        return _remembered_check(answer, type(label).__name__, label)
    return label_check(answer, label)


@functools.lru_cache(maxsize=4096)
def _remembered_check(answer: Answer, kind: str, label: str | int | float) -> bool | None:
    return label_check(answer, label)  # `kind` keeps 1, 1.0 and True apart


def _at(values: Sequence[float], position: int) -> float | None:
    if position >= len(values) or math.isnan(values[position]):
        return None
    return values[position]


def _cell(key: str, value: float | int | str | None, text: str | None = None) -> TableCell:
    shown = text if text is not None else "\u2013" if value is None else format_number(value)
    return {"key": key, "value": value, "text": shown, "tone": None}


def _signed(value: float | None) -> TableCell:
    """An advantage with its sign in the text (+ above the group's mean, - below), so the
    direction never rests on its colour alone."""
    if value is None:
        return _cell(ADVANTAGE, None)
    if value == 0:
        return {"key": ADVANTAGE, "value": value, "text": "0", "tone": "even"}
    shown = format_number(_whole(abs(value)))
    if value > 0:
        return {"key": ADVANTAGE, "value": value, "text": "+" + shown, "tone": "up"}
    return {"key": ADVANTAGE, "value": value, "text": "-" + shown, "tone": "down"}


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
