"""Decoding one JSONL line, fast when it is strict JSON and lenient when it is not.

The Relax writer uses Python's `json.dumps`, so a line may hold bare `NaN`/`Infinity`, lone
surrogate escapes (`"caf\\udcc3"`, text decoded with `surrogateescape`), and a file cut or
corrupted on disk may hold bytes that are not UTF-8. msgspec rejects all three; the standard
library accepts them, and what it returns is cleaned here so that nothing downstream ever sees a
lone surrogate (they become U+FFFD) and the sample says what was replaced. Numbers JSON allows
but Python cannot hold (`1e999`, a 5,000-digit integer) never raise: they become `RawText`.
Whatever we send out is strict JSON: non-finite numbers become `null`; what we write ourselves
has integers beyond 64 bits as strings of their digits (`store.wire`), and so has one sample's
answer (`without_wide_ints`), while a stream of a whole step sends strict lines as they are.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .wire import finite_or_none as finite_or_none  # re-exported: the store's face has it
from .wire import is_wide, may_hold_wide_int, wire_value

# Top-level values stay undecoded (msgspec.Raw) until asked for, so a line's multi-MB token-id
# array is validated and skipped but never turned into Python objects.
_raw_object_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_value_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()
# What msgspec raises for values it cannot hold (int beyond 64 bits, 1e999) or nest (depth).
VALUE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
# Python's int() refuses longer digit strings (sys.get_int_max_str_digits' default).
MAX_INT_DIGITS = 4300
# Deeper values are shown as text (lenient lines: unreadable); the parsers stop near 1,000.
MAX_DEPTH = 128
TEXT_CHARS = 10_000  # a value shown as its text is cut here
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACED_SURROGATES = "lone surrogate escapes (invalid Unicode) replaced with U+FFFD"
NON_FINITE = "non-finite numbers (NaN, Infinity, 1e999) are shown as null"


class RawText(str):
    """A JSON value Python cannot hold as itself (a number out of float range or with more
    digits than int() takes, nesting deeper than MAX_DEPTH), kept as its text: shown as text,
    never a column value."""


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
            if raw is None:
                return None
            value, replaced = decode_value(raw)
            if replaced:
                note = (
                    f"{key}: numbers beyond 64 bits or float range, and nesting deeper than "
                    f"{MAX_DEPTH} levels, are shown as written"
                )
                if note not in self.warnings:
                    self.warnings.append(note)
            return value
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
        # (It rejects lone surrogate escapes even in skipped values, so a strict line has none.)
        if data.isascii() or _is_utf8(data):
            return DecodedLine(strict=True, raw=raw)
    except (msgspec.DecodeError, RecursionError):
        pass
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        warnings.append(f"invalid UTF-8 at byte {exc.start} replaced with U+FFFD")
    obj = _lenient_loads(text)
    if not isinstance(obj, dict):
        raise LineError(f"valid JSON but not an object (it is {_json_type(obj)})")
    # A lone surrogate only ever arrives as an escape (the UTF-8 decoder replaces encoded ones).
    surrogates, non_finite = _clean(obj, b"\\u" in data)
    if surrogates:
        warnings.append(REPLACED_SURROGATES)
    if non_finite:
        warnings.append(NON_FINITE)
    return DecodedLine(strict=False, obj=obj, warnings=warnings)


def decode_value(raw: bytes | msgspec.Raw) -> tuple[Any, bool]:
    """One value of a strict line, and whether part of it had to be kept as text.

    msgspec holds 64-bit integers and finite floats only; the rare value it refuses is decoded
    again by the standard library, with the numbers it cannot hold kept as `RawText`. A value
    nested deeper than MAX_DEPTH is its text too (every later step would recurse that deep).
    """
    try:
        value = _value_decoder.decode(raw)
        fallback = False
    except VALUE_ERRORS:
        try:
            value = json.loads(bytes(raw), parse_int=_parse_int, parse_float=_parse_float)
        except RecursionError:
            return _as_text(raw), True
        fallback = True
    if isinstance(value, dict | list):
        text = bytes(raw)  # a copy, but a cheap one next to the decode
        if text.count(b"[") + text.count(b"{") > MAX_DEPTH and _too_deep(value):
            return _as_text(raw), True
    return value, fallback


def _as_text(raw: bytes | msgspec.Raw) -> RawText:
    text = memoryview(raw)[: TEXT_CHARS + 1].tobytes().decode("utf-8", "replace")
    return RawText(text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "\u2026")


def _too_deep(value: dict[Any, Any] | list[Any]) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def _lenient_loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise LineError(f"malformed JSON at column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise LineError("JSON nested too deeply") from None
    except ValueError:
        pass  # an integer with more digits than int() takes: rare, so hooks only now
    try:
        return json.loads(text, parse_int=_parse_int)
    except RecursionError:
        raise LineError("JSON nested too deeply") from None


def _parse_int(text: str) -> int | RawText:
    return RawText(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def _parse_float(text: str) -> float | RawText:
    value = float(text)
    return value if math.isfinite(value) else RawText(text)


def _clean(obj: dict[str, Any], surrogates: bool) -> tuple[bool, bool]:
    """Replace lone surrogates in every string and key of `obj`, in place (when `surrogates`
    may be there); return (any replaced, any non-finite number). Iterative: a line nested up
    to the parser's limit must not overflow Python's stack here, and one nested deeper than
    MAX_DEPTH is refused (re-encoding it would overflow the encoder's)."""
    replaced = non_finite = False
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise LineError(f"JSON nested deeper than {MAX_DEPTH} levels")
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in pairs:
            kind = type(value)
            if kind is str:
                if surrogates and _SURROGATE.search(value):
                    node[key] = _SURROGATE.sub("\ufffd", value)
                    replaced = True
            elif kind is float:
                non_finite = non_finite or not math.isfinite(value)
            elif kind is dict or kind is list:
                stack.append((value, depth + 1))
        if surrogates and isinstance(node, dict) and any(_SURROGATE.search(k) for k in node):
            items = [(_SURROGATE.sub("\ufffd", k), v) for k, v in node.items()]
            node.clear()
            node.update(items)
            replaced = True
    return replaced, non_finite


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


def without_surrogates(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (text we parsed from a sample's own
    text, such as a tool call's JSON, can hold `\\udcc3` escapes too)."""
    return _SURROGATE.sub("\ufffd", text)


def dumps_strict(value: Any) -> bytes:
    """Strict JSON bytes, the one encoder of every JSON response: NaN/Infinity become null,
    integers beyond 64 bits strings, and a lone surrogate (from a file name read with
    `surrogateescape`, say) U+FFFD.

    msgspec writes the usual value 5-10x faster than `json` (and NaN as null already); what it
    cannot write (a lone surrogate, a str subclass) or may have written as a wide number (a run
    of 19 digits) is written again the careful way."""
    try:
        data = _encoder.encode(value)
    except (TypeError, ValueError, OverflowError, RecursionError):  # a lone surrogate: ValueError
        data = None
    if data is not None and not may_hold_wide_int(data):
        return data
    text = json.dumps(wire_value(value), ensure_ascii=False, allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return without_surrogates(text).encode("utf-8")


def line_as_json(decoded: DecodedLine, data: bytes) -> bytes:
    """The line as strict JSON bytes, reusing the file's own bytes when they already are (its
    numbers as written: `without_wide_ints` for an answer about one sample)."""
    return data if decoded.strict else dumps_strict(decoded.obj)


def without_wide_ints(data: bytes) -> bytes:
    """Strict JSON text `data` as it is, or, when it holds an integer beyond 64 bits, parsed
    and written again with those integers as strings (`dumps_strict`). One pass over the bytes
    checks (about 600 MB/s: for one sample, not for a stream of a whole step)."""
    if not may_hold_wide_int(data):
        return data
    found: list[str] = []

    def parse_int(text: str) -> int | RawText:
        value = _parse_int(text)  # past 4,300 digits: RawText
        if isinstance(value, RawText) or is_wide(value):
            found.append(text)
        return value

    try:
        value = json.loads(data, parse_int=parse_int)
    except (ValueError, RecursionError):  # nested past Python's limit: sent as written
        return data
    return dumps_strict(value) if found else data
