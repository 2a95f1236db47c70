"""Which samples of a step, in which order: sorting and filtering on the step's columns.

A `Selection` is what a page's query string (`sort`, `order`, `status`, `dataset`, `range`) and
the terminal UI's sort and dataset selectors both say; `order_positions` turns it into the
line positions of the samples it selects, in order. Positions, not ranks, name samples, so a
link survives a re-sort; `rank_of` finds a position's place in an ordering.
"""

from __future__ import annotations

import dataclasses
import math
import re
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from .columns import CATEGORICAL_KEYS
from .errors import BadRequest
from .flags import FLAG_BIT, parse_flag
from .stats import ADVANTAGE, group_advantages, has_advantage

if TYPE_CHECKING:
    from .index import StepIndex

ORDERS = ("asc", "desc")
_RANGE = re.compile(r"^([\w.]+):([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])$")


class SelectionJson(TypedDict):
    """A selection as every JSON answer about a step's samples states it."""

    sort: str
    order: str
    filters: dict[str, str]
    range: str | None
    flag: str | None


@dataclass(frozen=True, slots=True)
class ValueRange:
    """A numeric filter, `reward:[0.5,0.75)`: low included, high included only with `]`.

    A histogram bar is one: its bins are half-open except the last, which holds the maximum.
    """

    column: str
    low: float
    high: float
    closed: bool = False

    @classmethod
    def parse(cls, text: str) -> ValueRange:
        match = _RANGE.match(text.strip())
        if match is None:
            raise BadRequest(f"range must look like reward:[0.5,0.75), got {text!r}")
        column, opening, low, high, closing = match.groups()
        if opening != "[":
            raise BadRequest("a range includes its low end: write it with '['")
        try:
            lo, hi = float(low), float(high)
        except ValueError:
            raise BadRequest(f"range bounds must be numbers, got {low!r} and {high!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            raise BadRequest(f"range bounds must be finite with low <= high, got {text!r}")
        return cls(column, lo, hi, closing == "]")

    def __str__(self) -> str:
        return f"{self.column}:[{_short(self.low)},{_short(self.high)}{']' if self.closed else ')'}"

    def describe(self) -> str:
        """In words: "reward = 1" or "reward in [0.5,0.75)"."""
        if self.low == self.high and self.closed:
            return f"{self.column} = {_short(self.low)}"
        return f"{self.column} in {str(self).partition(':')[2]}"

    def contains(self, value: float) -> bool:
        return self.low <= value and (value <= self.high if self.closed else value < self.high)


def _short(number: float) -> str:
    """The shortest text that reads back as `number` (10, not 10.0)."""
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else repr(number)


@dataclass(frozen=True, slots=True)
class Selection:
    """A sort column and direction, equality filters on categorical columns, a value range.

    The default selects every readable sample in file order.
    """

    sort: str | None = None  # a column; None: file order
    descending: bool = False
    filters: tuple[tuple[str, str], ...] = ()  # (categorical column, wanted value), by column
    range: ValueRange | None = None
    flag: str | None = None  # only the samples with this flag (`flags.FLAGS`)

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Selection:
        """From a query string's parameters; BadRequest when one cannot be understood."""
        sort = params.get("sort") or None
        order = params.get("order") or "asc"
        if order not in ORDERS:
            raise BadRequest(f"order must be 'asc' or 'desc', got {order!r}")
        raw_range = params.get("range")
        return cls(
            sort=None if sort == "position" else sort,
            descending=order == "desc",
            filters=tuple((name, params[name]) for name in CATEGORICAL_KEYS if params.get(name)),
            range=ValueRange.parse(raw_range) if raw_range else None,
            flag=parse_flag(params.get("flag")),
        )

    @property
    def order(self) -> str:
        return "desc" if self.descending else "asc"

    @property
    def filter_values(self) -> dict[str, str]:
        return dict(self.filters)

    @property
    def is_file_order(self) -> bool:
        return self.sort is None and not self.filters and self.range is None and not self.flag

    @property
    def sort_label(self) -> str:
        """ "file order", or "reward desc"."""
        return "file order" if self.sort is None else f"{self.sort} {self.order}"

    @property
    def sort_key(self) -> str:
        """The sort as one string, "" or "reward:desc" (a selector's value)."""
        return "" if self.sort is None else f"{self.sort}:{self.order}"

    def sorted_by(self, sort_key: str) -> Selection:
        """This selection with the sort of a `sort_key`."""
        if not sort_key:
            return dataclasses.replace(self, sort=None, descending=False)
        column, _, order = sort_key.rpartition(":")
        return dataclasses.replace(self, sort=column, descending=order == "desc")

    def filtered(self, name: str, value: str | None) -> Selection:
        """This selection with the filter on `name` set to `value` (None: removed)."""
        kept = tuple((n, v) for n, v in self.filters if n != name)
        return dataclasses.replace(self, filters=kept if value is None else (*kept, (name, value)))

    def params(self, **extra: Any) -> dict[str, str]:
        """As query parameters (defaults left out); `extra` adds some, and name="" drops one."""
        params: dict[str, str] = {}
        if self.sort:
            params["sort"] = self.sort
        if self.descending:
            params["order"] = "desc"
        params.update(self.filters)
        if self.range is not None:
            params["range"] = str(self.range)
        if self.flag:
            params["flag"] = self.flag
        params.update({k: str(v) for k, v in extra.items()})
        return {k: v for k, v in params.items() if v != ""}

    def conditions(self) -> list[str]:
        """The filters in words: ["status = truncated", "reward in [0.5,0.75)"]."""
        words = [f"{name} = {value}" for name, value in self.filters]
        if self.range is not None:
            words.append(self.range.describe())
        if self.flag:
            words.append(f"flagged {self.flag}")
        return words

    def as_json(self) -> SelectionJson:
        return {
            "sort": self.sort or "position",
            "order": self.order,
            "filters": self.filter_values,
            "range": str(self.range) if self.range else None,
            "flag": self.flag,
        }


EVERYTHING = Selection()
ORDERINGS_KEPT = 32  # orderings memoised per step index (each is 8 bytes a sample)


def order_positions(
    index: StepIndex, selection: Selection = EVERYTHING, marks: Sequence[int] | None = None
) -> array:
    """Positions of the readable records `selection` picks, stably sorted by its column.

    Records whose value is missing or not a number sort last in both directions, and are
    outside every value range. A flag filter needs the step's `marks` (`Catalog.flag_marks`).
    Memoised on the index until the file or its columns change.
    """
    columns = index.ensure_columns()
    key = (index.generation, index.columns_rows, selection)
    cached = index.orderings.get(key)
    if cached is not None:
        return cached
    sort = selection.sort
    known = {*columns.numeric, *columns.categorical}
    if has_advantage(columns):
        known.add(ADVANTAGE)  # derived when the step has no column of that name
    if sort is not None and sort not in known:
        raise BadRequest(f"unknown column {sort!r}; this step has: {', '.join(columns.names())}")
    invalid = index.invalid
    positions = [p for p in range(columns.rows) if p not in invalid]
    for name, wanted in selection.filters:
        if name not in columns.categorical:
            raise BadRequest(f"cannot filter on {name!r}: only on {', '.join(columns.categorical)}")
        codes, values = columns.categorical[name], columns.categories[name]
        positions = [p for p in positions if codes[p] >= 0 and values[codes[p]] == wanted]
    value_range = selection.range
    if value_range is not None:
        col = columns.numeric.get(value_range.column)
        if col is None:
            raise BadRequest(
                f"cannot filter on a range of {value_range.column!r}: only on "
                f"{', '.join(columns.numeric)}"
            )
        inside = value_range.contains
        positions = [p for p in positions if inside(col[p])]
    if selection.flag is not None:
        if marks is None:
            raise ValueError("a flag filter needs the step's flag marks")
        bit = FLAG_BIT[selection.flag]
        positions = [p for p in positions if marks[p] & bit]
    if sort is not None:
        positions = _sorted_missing_last(index, sort, positions, selection.descending)
    return remember(index, key, array("q", positions))


def remember(index: StepIndex, key: tuple, value: array) -> array:
    """`value` kept beside the step's orderings under `key` (every per-order array the store
    derives: orderings, advantages, flag marks and masks), at most ORDERINGS_KEPT of them."""
    if len(index.orderings) > ORDERINGS_KEPT:
        index.orderings.clear()
    index.orderings[key] = value
    return value


def rank_of(ordering: Sequence[int], position: int) -> int | None:
    """The 0-based place of `position` in `ordering`, or None when it is not in it."""
    if isinstance(ordering, range):
        return ordering.index(position) if position in ordering else None
    try:
        return ordering.index(position)
    except ValueError:
        return None


def advantages(index: StepIndex) -> array:
    """`stats.group_advantages` of the step, kept beside its orderings (built once a version)."""
    columns = index.ensure_columns()
    key = (index.generation, index.columns_rows, ADVANTAGE)
    cached = index.orderings.get(key)
    if cached is None:
        cached = remember(index, key, group_advantages(columns, index.invalid))
    return cached


def _sorted_missing_last(
    index: StepIndex, sort: str, positions: list[int], desc: bool
) -> list[int]:
    columns = index.ensure_columns()
    if sort in columns.numeric or sort == ADVANTAGE:
        col = columns.numeric[sort] if sort in columns.numeric else advantages(index)
        present = [p for p in positions if not math.isnan(col[p])]
        missing = [p for p in positions if math.isnan(col[p])]
        present.sort(key=col.__getitem__, reverse=desc)
    else:
        codes, values = columns.categorical[sort], columns.categories[sort]
        present = [p for p in positions if codes[p] >= 0]
        missing = [p for p in positions if codes[p] < 0]
        present.sort(key=lambda p: values[codes[p]], reverse=desc)
    return present + missing
