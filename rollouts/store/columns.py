"""Compact per-step columns of the scalar fields, for sorting, filtering and statistics.

One row per record (non-blank line) of a step. Numbers live in `array("d")` with NaN for
"missing or not a number", strings in small categorical code arrays: 8192 samples with a
dozen columns take well under a megabyte, whatever the size of the sample bodies.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Iterable
from typing import Any

from .jsonio import DecodedLine

NAN = math.nan

# Strings worth a categorical column: few distinct values, used to filter and group.
CATEGORICAL_KEYS = ("status", "dataset")
# Long values would blow the budget; a preview is enough for lists and the terminal table.
LABEL_PREVIEW_CHARS = 200
# A top-level string longer than this is a text body (prompt, response), never a column.
_MAX_NUMBER_TEXT = 64
_OPEN_ARRAY, _OPEN_OBJECT, _QUOTE = b'[{"'


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


class Columns:
    """Column store; rows are appended in file order and may be truncated (a tentative tail)."""

    def __init__(self) -> None:
        self.rows = 0
        self.numeric: dict[str, array] = {}
        self.categorical: dict[str, array] = {}
        self.categories: dict[str, list[str]] = {}
        self._codes: dict[str, dict[str, int]] = {}
        self.labels: list[str | None] = []
        self.keys: dict[str, None] = {}  # insertion-ordered set of every top-level key seen

    # -- building ------------------------------------------------------------------------
    def append(self, decoded: DecodedLine | None) -> None:
        """Add one row; `None` is an unreadable line (all values missing)."""
        row = self.rows
        numbers: dict[str, float] = {}
        strings: dict[str, str] = {}
        label: str | None = None
        if decoded is not None:
            for key in decoded.field_names():
                self.keys.setdefault(key, None)
            for key, value in self._scalars(decoded):
                if key == "label":
                    label = _label_preview(value)
                    continue
                num = _number(value)
                if num is not None:
                    numbers[key] = num
                elif key in CATEGORICAL_KEYS and isinstance(value, str):
                    strings[key] = value
                elif key == "reward" and isinstance(value, dict):
                    for part, part_value in value.items():
                        part_num = _number(part_value)
                        if part_num is not None:
                            numbers[f"reward.{part}"] = part_num
        for key, num in numbers.items():
            if key not in self.numeric:
                self.numeric[key] = array("d", [NAN]) * row
            self.numeric[key].append(num)
        for col in self.numeric.values():
            if len(col) == row:
                col.append(NAN)
        for key, text in strings.items():
            if key not in self.categorical:
                self.categorical[key] = array("i", [-1]) * row
                self.categories[key] = []
                self._codes[key] = {}
            codes = self._codes[key]
            code = codes.get(text)
            if code is None:
                code = codes[text] = len(self.categories[key])
                self.categories[key].append(text)
            self.categorical[key].append(code)
        for col in self.categorical.values():
            if len(col) == row:
                col.append(-1)
        self.labels.append(label)
        self.rows = row + 1

    @staticmethod
    def _scalars(decoded: DecodedLine) -> Iterable[tuple[str, Any]]:
        """Top-level values that can be columns, decoding nothing large."""
        if not decoded.strict:
            yield from decoded.obj.items()
            return
        for key, raw in decoded.raw.items():
            head = memoryview(raw)[0]
            if head == _OPEN_ARRAY:
                continue  # token ids, log-probs: never a column
            if head == _QUOTE and key != "label" and key not in CATEGORICAL_KEYS:
                continue  # prompt, response and other text bodies
            if head == _OPEN_OBJECT and key != "reward":
                continue
            if head not in (_QUOTE, _OPEN_OBJECT) and len(raw) > _MAX_NUMBER_TEXT:
                continue
            yield key, decoded.value(key)

    def truncate(self, rows: int) -> None:
        """Drop rows from `rows` on (a tentative last line that has since changed)."""
        if rows >= self.rows:
            return
        for col in self.numeric.values():
            del col[rows:]
        for col in self.categorical.values():
            del col[rows:]
        del self.labels[rows:]
        self.rows = rows

    # -- reading -------------------------------------------------------------------------
    def names(self) -> list[str]:
        return [*self.numeric, *self.categorical]

    def value(self, name: str, row: int) -> float | str | None:
        if name in self.numeric:
            num = self.numeric[name][row]
            return None if math.isnan(num) else num
        if name in self.categorical:
            code = self.categorical[name][row]
            return None if code < 0 else self.categories[name][code]
        raise KeyError(name)

    def nbytes(self) -> int:
        total = sum(col.itemsize * len(col) for col in self.numeric.values())
        total += sum(col.itemsize * len(col) for col in self.categorical.values())
        total += sum(64 + len(label) * 2 for label in self.labels if label is not None)
        total += 8 * len(self.labels)
        return total


def _label_preview(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:LABEL_PREVIEW_CHARS]
