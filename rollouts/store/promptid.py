"""A prompt's identity: a 64-bit hash of its decoded text, the same in every step and process.

Hashing the decoded text, not the line's bytes, makes the id independent of how the writer
escaped it (`ensure_ascii=True` writes `\\u4e2d`, the Relax writer writes the raw character).
A string prompt is hashed as its UTF-8 text; a list of messages (or any other JSON value) as
its canonical JSON (keys sorted, no spaces, raw UTF-8). A one-byte tag before the text keeps the
string `[...]` and the list it spells apart. blake2b, never Python's `hash()`, which is salted
per process. 0 means "no prompt" (missing, or null).

The column pass decodes only the prompt (msgspec, from the line's buffer, never copied), and
not at all when a row has the previous row's prompt (`Columns`).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import msgspec

from .jsonio import VALUE_ERRORS, decode_value, without_surrogates

NO_PROMPT = 0
PROMPT_ID = re.compile(r"[0-9a-f]{16}")  # 64 bits in hex
_STRING_TAG = b"s\0"
_JSON_TAG = b"j\0"
_string_decoder = msgspec.json.Decoder(str)
_canonical_encoder = msgspec.json.Encoder(order="sorted")


def _digest(tag: bytes, text: bytes) -> int:
    hasher = hashlib.blake2b(tag, digest_size=8)
    hasher.update(text)  # no concatenated copy of a long prompt
    return int.from_bytes(hasher.digest(), "big") or 1  # 0 is "no prompt" (1 in 2**64)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (decoded lines have none; other callers may)
        return without_surrogates(text).encode("utf-8")


def prompt_id_of_value(value: Any) -> int:
    """The id of a decoded prompt (a string, a list of messages, ...); 0 for None."""
    if value is None:
        return NO_PROMPT
    if isinstance(value, str):
        return _digest(_STRING_TAG, _utf8(value))
    return _digest(_JSON_TAG, _canonical(value))


def prompt_id_of_raw(raw: bytes | msgspec.Raw) -> int:
    """The id of a prompt given as the JSON text of a strict line (msgspec.Raw, not copied)."""
    if memoryview(raw)[:1] == b'"':
        try:
            return _digest(_STRING_TAG, _utf8(_string_decoder.decode(raw)))
        except VALUE_ERRORS:
            pass
    value, _ = decode_value(raw)
    return prompt_id_of_value(value)


def _canonical(value: Any) -> bytes:
    try:
        return _canonical_encoder.encode(value)
    except (TypeError, OverflowError, ValueError, UnicodeEncodeError):
        # An integer beyond 64 bits or a lone surrogate: the standard library's canonical form.
        text = json.dumps(
            value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str
        )
        return without_surrogates(text).encode("utf-8")


def format_prompt_id(value: int) -> str:
    return f"{value:016x}"


def parse_prompt_id(text: str) -> int | None:
    """The id a URL names (16 lowercase hex digits), or None when it is not one."""
    if not PROMPT_ID.fullmatch(text):
        return None
    return int(text, 16)
