"""Two samples' responses side by side, compared word by word (the prompt page and compare).

Each side is what its heading shows (a title, a link, reward, status, length) and its response
as `worddiff` runs; plain data, so the template escapes every character of it.
"""

from __future__ import annotations

from typing import Any

from ..store import format_number
from .worddiff import word_diff


def side(title: str, url: str, values: dict[str, Any]) -> dict[str, Any]:
    """A side's heading from its decoded sample (the response is compared by `paired`)."""
    reward = values.get("reward")
    length = values.get("response_length")
    status = values.get("status")
    response = values.get("response")
    return {
        "title": title,
        "url": url,
        "reward_text": format_number(reward) if not isinstance(reward, dict) else str(reward),
        "status": status if isinstance(status, str) else None,
        "response_length": length if isinstance(length, int | float) else None,
        "response": response if isinstance(response, str) else "",
    }


def paired(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """`{"a", "b", "diff", "sides"}`: `sides` pairs each heading with its runs for the template."""
    diff = word_diff(a["response"], b["response"])
    return {
        "a": a,
        "b": b,
        "diff": diff,
        "sides": [{"name": n, "head": s, "runs": diff[n]} for n, s in (("a", a), ("b", b))],
    }
