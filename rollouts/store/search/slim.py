"""A line's searchable fields decoded without its token arrays, when that is provably the same.

Confirming a search hit decodes the line's prompt, response and label (and its reward and
status, which the hit shows). msgspec builds only those, but it still has to read past everything
else, and most of a Relax line is its token arrays
(`response_token_ids`, `response_rollout_log_probs`, its mask: numbers, thousands of them). A
search whose needle is in most lines spends most of its time there. So each of those arrays is
found by its key, its value replaced by `null`, and the shorter line decoded instead.

That is exact, not a guess: a cut is made only where the key occurs once in the line and its
value is a flat array (no string, array or object inside it, so the first `]` closes it), and the
decoded result is used only if every key that was cut reads back as that `null` at the top level
of the line. A key found inside another value (a label or a message that holds such a key) leaves
the top-level field unset, and the whole line is decoded as before. The needle cannot be in the
removed numbers: a search looks in prompt, response and label only.
"""

from __future__ import annotations

from typing import Any

import msgspec

ARRAY_KEYS = (
    b'"response_token_ids"',
    b'"response_rollout_log_probs"',
    b'"response_rollout_log_probs_mask"',
)
MIN_CUT_BYTES = 4096  # a shorter array is not worth the cut
MIN_LINE_BYTES = 16 * 1024  # a shorter line is decoded whole: looking for arrays costs more
_SPACE = b" \t\r\n"


class _Slim(msgspec.Struct):
    prompt: Any = None
    response: Any = None
    label: Any = None
    reward: Any = None
    status: Any = None
    response_token_ids: Any = msgspec.UNSET
    response_rollout_log_probs: Any = msgspec.UNSET
    response_rollout_log_probs_mask: Any = msgspec.UNSET


_slim_decoder = msgspec.json.Decoder(_Slim)


def _array_value(data: bytes, key: bytes) -> tuple[int, int] | None:
    """(start, end) of the flat array after the first `key:` in `data`, end past its `]`."""
    at = data.find(key)
    if at < 0 or data.find(key, at + 1) >= 0:  # one key of that name in the line, or no cut
        return None
    i, size = at + len(key), len(data)
    while i < size and data[i] in _SPACE:
        i += 1
    if i >= size or data[i] != 0x3A:  # ':'
        return None
    i += 1
    while i < size and data[i] in _SPACE:
        i += 1
    if i >= size or data[i] != 0x5B:  # '['
        return None
    end = data.find(b"]", i)
    if end < 0 or end - i < MIN_CUT_BYTES:
        return None
    for nested in (b'"', b"[", b"{"):  # only numbers, booleans, null, NaN in between
        if data.find(nested, i + 1, end) >= 0:
            return None
    return i, end + 1


def slim_fields(data: bytes) -> dict[str, Any] | None:
    """prompt, response, label, reward and status decoded from `data` without its token arrays;
    None when no array could be cut or the cut line does not prove itself (decode it whole)."""
    if len(data) < MIN_LINE_BYTES:
        return None
    cuts = sorted(
        (*span, key[1:-1].decode())
        for key in ARRAY_KEYS
        if (span := _array_value(data, key)) is not None
    )
    if not cuts:
        return None
    pieces, last = [], 0
    for start, end, _ in cuts:
        if start < last:  # overlapping finds: something odd, decode it all
            return None
        pieces += [data[last:start], b"null"]
        last = end
    pieces.append(data[last:])
    try:
        slim = _slim_decoder.decode(b"".join(pieces))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if any(getattr(slim, name) is not None for _, _, name in cuts):
        return None  # a cut array was not the top-level one: it may sit inside a field
    return {
        "prompt": slim.prompt,
        "response": slim.response,
        "label": slim.label,
        "reward": slim.reward,
        "status": slim.status,
    }
