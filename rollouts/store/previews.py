"""Some values of some samples' lines (a table of a step: response and label), or the first
characters of their prompts (the prompts two steps compare).

Only the lines asked for are read (one `pread` each, in the order asked), and of each only the
one value is decoded: a table page of 200 rows costs 200 small reads whatever the size of the
step, and never the token arrays a line may carry. A prompt is previewed by its last user turn:
every prompt of a run usually opens with the same system text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from .errors import unreadable
from .index import StepIndex
from .jsonio import LineError, decode_line

PREVIEW_CHARS = 120  # of a prompt, whitespace runs collapsed to one space


# The last user turn of a chat-template prompt: `<|im_start|>user\n ... <|im_end|>`.
_USER_TURN = re.compile(r"<\|im_start\|>user\s*(.*?)(?:<\|im_end\|>|\Z)", re.DOTALL)
_VISION = re.compile(r"<\|vision_start\|>.*?<\|vision_end\|>", re.DOTALL)  # pad runs: [image]


def line_values(
    index: StepIndex, positions: Iterable[int], keys: tuple[str, ...]
) -> dict[int, dict[str, Any] | None]:
    """position -> the values of `keys` in its line (None for a key it lacks, as for null), or
    None when the line cannot be read: a table's rows read their response and label this way,
    the rest of the line (its token arrays) never decoded."""
    return _previews(index, positions, lambda data: _values(data, keys))


def _values(data: bytes, keys: tuple[str, ...]) -> dict[str, Any] | None:
    try:
        decoded = decode_line(data)
    except LineError:
        return None
    return {key: decoded.value(key) for key in keys}


def prompt_previews(
    index: StepIndex, positions: Iterable[int], chars: int = PREVIEW_CHARS
) -> dict[int, str | None]:
    """position -> the first `chars` characters of the prompt's last user turn (of the whole
    prompt when it has no turns), or None when the line has no prompt or cannot be read."""
    return _previews(index, positions, lambda data: _preview(data, "prompt", chars, _question))


def _question(value: Any) -> Any:
    if isinstance(value, list):  # [{role, content}, ...]
        users = [m.get("content") for m in value if isinstance(m, dict) and m.get("role") == "user"]
        return users[-1] if users else value
    if isinstance(value, str):
        turns = _USER_TURN.findall(value)
        return _VISION.sub("[image] ", turns[-1] if turns else value)
    return value


def _previews(
    index: StepIndex, positions: Iterable[int], preview: Callable[[bytes], Any]
) -> dict[int, Any]:
    wanted = [p for p in positions if 0 <= p < len(index)]
    previews: dict[int, Any] = {}
    if not wanted:
        return previews
    try:
        f = open(index.path, "rb")  # noqa: SIM115 (closed below, after the check)
    except OSError as exc:
        raise unreadable(index.name, exc) from None
    with f:
        fd = f.fileno()
        for position in wanted:
            start, end = index.starts[position], index.ends[position]
            previews[position] = preview(os.pread(fd, end - start, start))
        index.check_same(f)  # a rewritten file would have given us other lines' bytes
    return previews


def _preview(
    data: bytes, key: str, chars: int, pick: Callable[[Any], Any] = lambda value: value
) -> str | None:
    try:
        value = decode_line(data).value(key)
    except LineError:
        return None
    if value is None:
        return None
    value = pick(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # Enough of the text to fill `chars` after collapsing whitespace, without splitting it all.
    head = " ".join(text[: chars * 4].split())
    return head if len(head) <= chars else head[: chars - 1] + "\u2026"
