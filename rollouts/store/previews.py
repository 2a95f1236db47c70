"""The first characters of some samples' responses, for a table of a step.

Only the lines asked for are read (one `pread` each, in the order asked), and of each only its
`response` value is decoded: a table page of 200 rows costs 200 small reads whatever the size of
the step, and never the token arrays a line may carry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from .errors import unreadable
from .index import StepIndex
from .jsonio import LineError, decode_line

PREVIEW_CHARS = 120  # of a response, whitespace runs collapsed to one space


def response_previews(
    index: StepIndex, positions: Iterable[int], chars: int = PREVIEW_CHARS
) -> dict[int, str | None]:
    """position -> the response's first `chars` characters ("" for an empty one), or None when
    the line has no response or cannot be read."""
    wanted = [p for p in positions if 0 <= p < len(index)]
    previews: dict[int, str | None] = {}
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
            previews[position] = _preview(os.pread(fd, end - start, start), chars)
        index.check_same(f)  # a rewritten file would have given us other lines' bytes
    return previews


def _preview(data: bytes, chars: int) -> str | None:
    try:
        value = decode_line(data).value("response")
    except LineError:
        return None
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # Enough of the text to fill `chars` after collapsing whitespace, without splitting it all.
    head = " ".join(text[: chars * 4].split())
    return head if len(head) <= chars else head[: chars - 1] + "\u2026"
