"""Two texts compared word by word, each side as runs marked same or changed.

Words keep their trailing whitespace, so a run joins back into the exact text and a change of
spacing alone does not mark a word. The runs are data, never HTML: the template escapes them.
Long responses are compared over their first WORDS_COMPARED words (difflib is quadratic in the
worst case); the rest is shown unmarked and the result says so.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Any

WORDS_COMPARED = 4000  # per side; beyond this the tail is shown unmarked (`cut`)
_WORD = re.compile(r"\s+|\S+\s*")  # leading whitespace alone, then each word with its spacing


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def word_diff(a: str, b: str, limit: int = WORDS_COMPARED) -> dict[str, Any]:
    """`{"a": runs, "b": runs, "changed_a", "changed_b", "cut"}`; a run is `{"text",
    "changed"}`, and `changed_*` count the changed words of each side."""
    words_a, words_b = words(a), words(b)
    head_a, head_b = words_a[:limit], words_b[:limit]
    runs_a: list[dict[str, Any]] = []
    runs_b: list[dict[str, Any]] = []
    changed_a = changed_b = 0
    matcher = SequenceMatcher(
        None, [w.rstrip() for w in head_a], [w.rstrip() for w in head_b], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        same = tag == "equal"
        _append(runs_a, "".join(head_a[i1:i2]), not same)
        _append(runs_b, "".join(head_b[j1:j2]), not same)
        if not same:
            changed_a += i2 - i1
            changed_b += j2 - j1
    _append(runs_a, "".join(words_a[limit:]), False)
    _append(runs_b, "".join(words_b[limit:]), False)
    return {
        "a": runs_a,
        "b": runs_b,
        "changed_a": changed_a,
        "changed_b": changed_b,
        "cut": len(words_a) > limit or len(words_b) > limit,
    }


def _append(runs: list[dict[str, Any]], text: str, changed: bool) -> None:
    if not text:
        return
    if runs and runs[-1]["changed"] == changed:
        runs[-1]["text"] += text
    else:
        runs.append({"text": text, "changed": changed})
