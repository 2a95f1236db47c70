"""Compact per-step columns of the scalar fields, for sorting, filtering and statistics.

One row per record (non-blank line) of a step. Numbers live in `array("d")` with NaN for
"missing or not a number", strings in small categorical code arrays: 8192 samples with a
dozen columns take well under a megabyte, whatever the size of the sample bodies.
"""

from __future__ import annotations

import contextlib
import json
import math
from array import array
from typing import Any

import msgspec

from .jsonio import VALUE_ERRORS, DecodedLine, decode_value
from .measures import NOT_TEXT, measure_response
from .promptid import NO_PROMPT, prompt_id_of_raw, prompt_id_of_value

NAN = math.nan

# Strings worth a categorical column: few distinct values, used to filter and group.
CATEGORICAL_KEYS = ("status", "dataset")
# Long values would blow the budget; a preview is enough for lists and the terminal table.
LABEL_PREVIEW_CHARS = 200
# Top-level values that are never columns: text bodies, token arrays, multimodal summaries.
BODY_KEYS = frozenset(
    {
        "prompt",
        "response",
        "response_token_ids",
        "response_rollout_log_probs",
        "response_rollout_log_probs_mask",
        "multimodal_inputs",
        "multimodal_train_inputs",
        "latency_trace",
        "metadata",
        "extra_info",
        "weight_versions",
    }
)
# Other keys: a value longer than this (in JSON bytes) is a body too, and is not decoded.
_MAX_SCALAR_BYTES = 256
_ALWAYS_DECODED = frozenset({"label", "reward", *CATEGORICAL_KEYS})
_array_decoder = msgspec.json.Decoder(list)


class Columns:
    """Column store; rows are appended in file order and may be truncated (a tentative tail).

    Columns are padded lazily (a missing value costs nothing until `pad`), which keeps the
    per-row work small: a 1 GB step of 3 KB lines has 300,000 rows.
    """

    measure_text = True  # False: no response measures (the flags bench's "without")

    def __init__(self) -> None:
        self.rows = 0
        self.numeric: dict[str, array] = {}
        self.categorical: dict[str, array] = {}
        self.categories: dict[str, list[str]] = {}
        self._codes: dict[str, dict[str, int]] = {}
        self.labels: list[str | None] = []
        # One 64-bit prompt id per row (`promptid.py`; 0: no prompt or an unreadable line).
        self.prompt_ids = array("Q")
        # The last row's prompt (JSON text) and id: a GRPO group's samples sit side by side
        # and share their prompt, so most rows hash nothing.
        self._last_prompt: tuple[Any, int] = (None, NO_PROMPT)
        self.keys: dict[str, None] = {}  # insertion-ordered set of every top-level key seen
        # What the flags judge each response by (`measures.py`): one byte of bits a row, and
        # the few rows' measures that passed a floor (a loop, repeats, a second script).
        self.text_bits = array("B")
        self.measures: dict[int, dict[str, list]] = {}
        self._plans: dict[tuple[str, ...], list[str]] = {}

    # -- building ------------------------------------------------------------------------
    def append(self, decoded: DecodedLine | None) -> None:
        """Add one row; `None` is an unreadable line (all values missing)."""
        label = label_value = None
        prompt_id = NO_PROMPT
        text_bits = NOT_TEXT
        if decoded is not None:
            prompt_id = self._prompt_id(decoded)
            row, numeric = self.rows, self.numeric
            for key, value in self._scalars(decoded):
                kind = type(value)
                if key == "label":
                    label, label_value = _label_preview(value), value
                elif kind is float or kind is int:  # not bool: True is no number
                    # Inlined (no helper call): this line runs for every number of every row.
                    col = numeric.get(key)
                    if col is None or len(col) != row:
                        col = self._numeric_column(key)
                    try:  # noqa: SIM105 (a `with suppress` costs a call per number here)
                        col.append(value)
                    except OverflowError:  # a 400-digit integer: no float, so missing
                        pass
                elif kind is str and key in CATEGORICAL_KEYS:
                    self._put_string(key, value)
                elif kind is dict and key == "reward":
                    for part, part_value in value.items():
                        if type(part_value) in (float, int):
                            col = self._numeric_column(f"reward.{part}")
                            with contextlib.suppress(OverflowError):  # as above
                                col.append(part_value)
            if self.measure_text:
                response = (
                    decoded.raw.get("response") if decoded.strict else decoded.obj.get("response")
                )
                text_bits, measures = measure_response(response, label_value)
                if measures is not None:
                    self.measures[self.rows] = measures
        self.text_bits.append(text_bits)
        self.labels.append(label)
        self.prompt_ids.append(prompt_id)
        self.rows += 1

    def _scalars(self, decoded: DecodedLine) -> list[tuple[str, Any]]:
        """(key, value) of the top-level values that can be columns, decoding nothing large."""
        if not decoded.strict:
            for key in decoded.obj:
                self.keys.setdefault(key, None)
            # Infinity (or 1e999) is no usable number: missing (NaN), as in strict lines.
            return [
                (k, NAN if type(v) is float and math.isinf(v) else v)
                for k, v in decoded.obj.items()
                if k not in BODY_KEYS
            ]
        raw = decoded.raw
        names = tuple(raw)
        plan = self._plans.get(names)
        if plan is None:  # a new key order: most steps have one or two
            for key in names:
                self.keys.setdefault(key, None)
            plan = self._plans[names] = [key for key in names if key not in BODY_KEYS]
        wanted = [k for k in plan if len(raw[k]) <= _MAX_SCALAR_BYTES]
        # One decode call per line for all its small values, instead of one per value.
        try:
            values = _array_decoder.decode(b"[" + b",".join([raw[k] for k in wanted]) + b"]")
        except VALUE_ERRORS:  # a number msgspec cannot hold: those values one by one
            values = [decode_value(raw[k])[0] for k in wanted]
        pairs = list(zip(wanted, values, strict=True))
        # Long values of the keys always wanted (a long label) may nest deep: one by one.
        pairs += [
            (k, decode_value(raw[k])[0])
            for k in plan
            if len(raw[k]) > _MAX_SCALAR_BYTES and k in _ALWAYS_DECODED
        ]
        return pairs

    def _prompt_id(self, decoded: DecodedLine) -> int:
        if not decoded.strict:
            return prompt_id_of_value(decoded.obj.get("prompt"))
        raw = decoded.raw.get("prompt")
        if raw is None:
            return NO_PROMPT
        last_raw, last_id = self._last_prompt
        if raw == last_raw:  # msgspec.Raw compares its bytes
            return last_id
        prompt_id = prompt_id_of_raw(raw)
        self._last_prompt = (raw, prompt_id)
        return prompt_id

    def _numeric_column(self, key: str) -> array:
        """The column for `key`, created and padded with NaN up to the current row."""
        col = self.numeric.get(key)
        if col is None:
            col = self.numeric[key] = array("d")
        _pad_to(col, self.rows, NAN)
        return col

    def _put_string(self, key: str, value: str) -> None:
        col = self.categorical.get(key)
        if col is None:
            col = self.categorical[key] = array("i")
            self.categories[key] = []
            self._codes[key] = {}
        codes = self._codes[key]
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(self.categories[key])
            self.categories[key].append(value)
        _pad_to(col, self.rows, -1)
        col.append(code)

    def pad(self) -> None:
        """Give every column a value (NaN / -1) for every row; call before reading."""
        for col in self.numeric.values():
            _pad_to(col, self.rows, NAN)
        for col in self.categorical.values():
            _pad_to(col, self.rows, -1)

    def truncate(self, rows: int) -> None:
        """Drop rows from `rows` on (a tentative last line that has since changed)."""
        if rows >= self.rows:
            return
        for col in self.numeric.values():
            del col[rows:]
        for col in self.categorical.values():
            del col[rows:]
        del self.labels[rows:]
        del self.prompt_ids[rows:]
        del self.text_bits[rows:]
        self.measures = {row: m for row, m in self.measures.items() if row < rows}
        self.rows = rows

    def restore_codes(self) -> None:
        """Rebuild the string -> code maps after `categories` was loaded from elsewhere."""
        self._codes = {
            name: {value: code for code, value in enumerate(values)}
            for name, values in self.categories.items()
        }

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
        total += sum(49 + len(label) for label in self.labels if label is not None)
        total += 8 * len(self.labels)
        total += self.prompt_ids.itemsize * len(self.prompt_ids)
        total += len(self.text_bits) + 320 * len(self.measures)
        return total


def _pad_to(col: array, rows: int, missing: float) -> None:
    """Extend `col` with the missing-value marker until it has `rows` values."""
    if len(col) < rows:
        col.extend(array(col.typecode, [missing]) * (rows - len(col)))


def _label_preview(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:LABEL_PREVIEW_CHARS]
