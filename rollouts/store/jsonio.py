"""Decoding one JSONL line, fast when it is strict JSON and lenient when it is not.

The Relax writer uses Python's `json.dumps`, so a line may hold bare `NaN`/`Infinity`, and a
file cut or corrupted on disk may hold bytes that are not UTF-8. msgspec rejects both; the
standard library accepts the first and, after replacing bad bytes, the second. Whatever we send
out is strict JSON: non-finite numbers become `null`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import msgspec

# Top-level values stay undecoded (msgspec.Raw) until asked for, so a line's multi-MB token-id
# array is validated and skipped but never turned into Python objects.
_raw_object_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_value_decoder = msgspec.json.Decoder()


@dataclass(slots=True)
class DecodedLine:
    """A line split into top-level fields.

    `raw` maps keys to undecoded values when the line is strict JSON (`strict` is True); then
    the line's bytes can be sent as they are. Otherwise `obj` holds the lenient parse.
    """

    strict: bool
    raw: dict[str, msgspec.Raw] = field(default_factory=dict)
    obj: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def field_names(self) -> list[str]:
        return list(self.raw if self.strict else self.obj)

    def value(self, key: str) -> Any:
        if self.strict:
            raw = self.raw.get(key)
            return None if raw is None else _value_decoder.decode(raw)
        return self.obj.get(key)

    def values(self) -> dict[str, Any]:
        """Every top-level value, decoded (a whole sample: only for the one being shown)."""
        return {key: self.value(key) for key in self.field_names()}

    def raw_value(self, key: str) -> bytes | None:
        """The value's JSON text, when cheap to get (strict lines only)."""
        if self.strict:
            raw = self.raw.get(key)
            return None if raw is None else bytes(raw)
        return None


class LineError(ValueError):
    """The line is not a JSON object, even to the lenient parser."""


def decode_line(data: bytes) -> DecodedLine:
    try:
        raw = _raw_object_decoder.decode(data)
        # msgspec checks UTF-8 only in the strings it decodes, not in the values it skips.
        if data.isascii() or _is_utf8(data):
            return DecodedLine(strict=True, raw=raw)
    except msgspec.DecodeError:
        pass
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(f"invalid UTF-8 at byte {exc.start} replaced with U+FFFD")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(f"malformed JSON at column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise LineError("JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise LineError(f"valid JSON but not an object (it is {_json_type(obj)})")
    if _has_non_finite(obj):
        warnings.append("non-finite numbers (NaN/Infinity) are shown as null")
    return DecodedLine(strict=False, obj=obj, warnings=warnings)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_non_finite(v) for v in value)
    return False


def finite_or_none(value: Any) -> Any:
    """The value with every NaN/Infinity replaced by None, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_or_none(v) for v in value]
    return value


def dumps_strict(value: Any) -> bytes:
    """Strict JSON bytes: NaN/Infinity become null, lone surrogates become escapes."""
    value = finite_or_none(value)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (`"\ud800"` in the file) cannot be UTF-8; escaped, it is valid JSON.
        return json.dumps(value, ensure_ascii=True, allow_nan=False).encode("ascii")


def line_as_json(decoded: DecodedLine, data: bytes) -> bytes:
    """The line as strict JSON bytes, reusing the file's own bytes when they already are."""
    return data if decoded.strict else dumps_strict(decoded.obj)
