"""Two steps side by side, from their columns: per dataset and overall, and the prompts that
flipped between solved and failed.

A prompt's group in a step is its samples there (same `prompt_id`); it is solved when the
group's mean finite reward is above the threshold (default `SOLVED_ABOVE`, 0.5: most samples
right with 0/1 rewards), failed when it is at or below it. A prompt flips when it is solved in
one step and failed in the other; the largest change of the group mean comes first.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from .columns import Columns
from .promptid import NO_PROMPT, format_prompt_id
from .stats import TRUNCATED

SOLVED_ABOVE = 0.5
OVERALL = None  # the dataset key of the whole step


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _finite(col: Any, row: int) -> float | None:
    if col is None:
        return None
    value = col[row]
    return value if math.isfinite(value) else None


def summaries(columns: Columns, invalid: Collection[int]) -> dict[str | None, dict[str, Any]]:
    """Per dataset (and `OVERALL`): samples, mean reward, truncation rate, mean length."""
    reward = columns.numeric.get("reward")
    length = columns.numeric.get("response_length")
    status = columns.categorical.get("status")
    statuses = columns.categories.get("status", [])
    truncated = statuses.index(TRUNCATED) if TRUNCATED in statuses else None
    dataset = columns.categorical.get("dataset")
    datasets = columns.categories.get("dataset", [])
    parts: dict[str | None, tuple[list[float], list[float], list[bool]]] = {}
    for row in range(columns.rows):
        if row in invalid:
            continue
        keys: list[str | None] = [OVERALL]
        if dataset is not None and dataset[row] >= 0:
            keys.append(datasets[dataset[row]])
        r, n = _finite(reward, row), _finite(length, row)
        cut = status is not None and truncated is not None and status[row] == truncated
        for key in keys:
            rewards, lengths, cuts = parts.setdefault(key, ([], [], []))
            if r is not None:
                rewards.append(r)
            if n is not None:
                lengths.append(n)
            cuts.append(cut)
    if OVERALL not in parts:
        parts[OVERALL] = ([], [], [])
    return {
        key: {
            "samples": len(cuts),
            "mean_reward": _mean(rewards),
            "truncation_rate": sum(cuts) / len(cuts) if cuts else None,
            "mean_response_length": _mean(lengths),
        }
        for key, (rewards, lengths, cuts) in parts.items()
    }


def prompt_groups(columns: Columns, invalid: Collection[int]) -> dict[int, dict[str, Any]]:
    """Per prompt id: its readable rows (file order) and their mean finite reward."""
    reward = columns.numeric.get("reward")
    rows_of: dict[int, list[int]] = {}
    for row, prompt_id in enumerate(columns.prompt_ids):
        if prompt_id != NO_PROMPT and row not in invalid:
            rows_of.setdefault(prompt_id, []).append(row)
    groups = {}
    for prompt_id, rows in rows_of.items():
        rewards = [v for v in (_finite(reward, r) for r in rows) if v is not None]
        groups[prompt_id] = {"rows": rows, "mean_reward": _mean(rewards)}
    return groups


def first_row_of(columns: Columns, invalid: Collection[int], prompt_id: int) -> int | None:
    """The prompt's first readable row in the step (file order), or None: not in it."""
    ids = columns.prompt_ids
    if prompt_id == NO_PROMPT:
        return None
    row = -1
    while True:
        try:
            row = ids.index(prompt_id, row + 1)
        except ValueError:
            return None
        if row not in invalid:
            return row


def _difference(a: float | None, b: float | None) -> float | None:
    return b - a if a is not None and b is not None else None


METRICS = ("mean_reward", "truncation_rate", "mean_response_length")


def compare_steps(
    a: tuple[Columns, Collection[int]],
    b: tuple[Columns, Collection[int]],
    threshold: float = SOLVED_ABOVE,
) -> dict[str, Any]:
    """`{"rows": [overall, then each dataset], "flipped": [...], "prompts_in_both": n}`.

    A row is `{"dataset", "a", "b", "difference"}` (a side: `summaries`' numbers, None when the
    step has no such dataset; a difference is b - a). A flipped prompt is `{"prompt_id", "a",
    "b", "change", "solved_in"}`, each side `{"samples", "mean_reward", "position"}` (its first
    sample), `change` the group mean's b - a, `solved_in` "a" or "b"."""
    sums_a, sums_b = summaries(*a), summaries(*b)
    keys = [OVERALL, *sorted(k for k in {*sums_a, *sums_b} if k is not OVERALL)]
    rows = []
    for key in keys:
        side_a, side_b = sums_a.get(key), sums_b.get(key)
        rows.append(
            {
                "dataset": key,
                "a": side_a,
                "b": side_b,
                "difference": {
                    m: _difference(side_a[m] if side_a else None, side_b[m] if side_b else None)
                    for m in METRICS
                },
            }
        )
    groups_a, groups_b = prompt_groups(*a), prompt_groups(*b)
    both = groups_a.keys() & groups_b.keys()
    flipped = []
    for prompt_id in both:
        mean_a, mean_b = groups_a[prompt_id]["mean_reward"], groups_b[prompt_id]["mean_reward"]
        if mean_a is None or mean_b is None or (mean_a > threshold) == (mean_b > threshold):
            continue
        flipped.append(
            {
                "prompt_id": format_prompt_id(prompt_id),
                "a": _side(groups_a[prompt_id]),
                "b": _side(groups_b[prompt_id]),
                "change": mean_b - mean_a,
                "solved_in": "b" if mean_b > threshold else "a",
            }
        )
    flipped.sort(key=lambda f: (-abs(f["change"]), f["prompt_id"]))
    return {"rows": rows, "flipped": flipped, "prompts_in_both": len(both)}


def _side(group: dict[str, Any]) -> dict[str, Any]:
    return {
        "samples": len(group["rows"]),
        "mean_reward": group["mean_reward"],
        "position": group["rows"][0],
    }
