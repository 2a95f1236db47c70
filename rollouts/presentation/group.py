"""One GRPO group as a table: a row per member (reward, status, length, answer, its match with
the label), sorted by any column, and the group's summary and label, shown once.

Plain data from decoded samples (no Django, no HTML), so the group page and its JSON twin carry
the same table. Sorting follows the sample pages' rule: a missing value sorts last whichever way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..store import SUCCESS_ABOVE, TRUNCATED, answers_match, extract_answer, format_number

# sort key -> the order its header link asks for first (the interesting end on top)
SORTS = {
    "position": "asc",
    "reward": "desc",
    "status": "asc",
    "length": "desc",
    "answer": "asc",
    "match": "desc",
}
LENGTH_FIELDS = ("response_length", "response_token_count")


def member_row(position: int, line: int, values: Mapping[str, Any]) -> dict[str, Any]:
    """A member's row from its decoded record; `reward` is a number, an object of components,
    or None (NaN and missing alike)."""
    reward = values.get("reward")
    if not (isinstance(reward, dict) or _is_shown(reward)):
        reward = None
    length = next((values[f] for f in LENGTH_FIELDS if _is_shown(values.get(f))), None)
    status = values.get("status")
    answer = extract_answer(values.get("response"))
    label = values.get("label")
    return {
        "position": position,
        "line": line,
        "reward": reward,
        "reward_text": _reward_text(reward),
        "status": status if isinstance(status, str) else None,
        "response_length": length,
        "answer": answer,
        "match": answers_match(answer, label),
        "label": label,
    }


def _is_shown(value: Any) -> bool:
    """A number worth a cell: any integer, or a finite float (NaN reads as no value)."""
    return (isinstance(value, int) and not isinstance(value, bool)) or _is_number(value)


def _is_number(value: Any) -> bool:
    """A finite number a float can hold (a 400-digit integer is shown, never averaged)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _reward_text(reward: Any) -> str:
    if isinstance(reward, dict):  # an object reward, by component
        return ", ".join(f"{k} {format_number(v)}" for k, v in reward.items()) or "{}"
    return "null" if reward is None else format_number(reward)


def _sort_value(row: Mapping[str, Any], key: str) -> Any:
    if key == "reward":
        return row["reward"] if _is_number(row["reward"]) else None
    if key == "length":
        length = row["response_length"]
        return length if _is_number(length) else None
    return row[key]


def sort_rows(rows: Sequence[dict[str, Any]], key: str, order: str) -> list[dict[str, Any]]:
    """The rows by `key` ("asc" or "desc"), stable, ties in file order, missing values last."""
    present = [r for r in rows if _sort_value(r, key) is not None]
    missing = [r for r in rows if _sort_value(r, key) is None]
    present.sort(key=lambda r: r["position"])
    present.sort(key=lambda r: _sort_value(r, key), reverse=order == "desc")
    return present + sorted(missing, key=lambda r: r["position"])


class GroupSummary(TypedDict):
    members: int
    with_reward: int
    mean_reward: float | None
    solved: int
    solved_share: float | None
    truncated: int
    matched: int
    judged: int


class SharedLabel(TypedDict):
    same: bool
    label: Any  # as the file wrote it; None when the members' labels differ
    labels: list[Any]
    text: list[str]


def summarize_rows(rows: Sequence[Mapping[str, Any]]) -> GroupSummary:
    """Members, mean reward, solved (a reward above SUCCESS_ABOVE) of those with a reward,
    truncated, and matched of those with both an answer and a label."""
    rewards = [r["reward"] for r in rows if _is_number(r["reward"])]
    solved = sum(1 for v in rewards if v > SUCCESS_ABOVE)
    judged = [r["match"] for r in rows if r["match"] is not None]
    return {
        "members": len(rows),
        "with_reward": len(rewards),
        "mean_reward": math.fsum(rewards) / len(rewards) if rewards else None,
        "solved": solved,
        "solved_share": solved / len(rewards) if rewards else None,
        "truncated": sum(1 for r in rows if r["status"] == TRUNCATED),
        "matched": sum(judged),
        "judged": len(judged),
    }


def shared_label(rows: Sequence[Mapping[str, Any]]) -> SharedLabel:
    """The label the members share (`same` true), or each distinct one when they differ."""
    distinct: list[Any] = []
    for row in rows:
        if row["label"] not in distinct:
            distinct.append(row["label"])
    return {
        "same": len(distinct) <= 1,
        "label": distinct[0] if len(distinct) == 1 else None,
        "labels": distinct,
        "text": [_label_text(v) for v in distinct],
    }


def _label_text(label: Any) -> str:
    if isinstance(label, str):
        return label
    if _is_number(label) or label is None:
        return format_number(label)
    return json.dumps(label, ensure_ascii=False)
