"""A decoded sample as the parts a page shows: info rows, text sections, value trees.

Plain Python (no Django), so the web pages, their JSON twins and the terminal UI agree on
what a sample looks like. Values stay values here: escaping is the template's job.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ..store import format_number, format_scalar
from .render import Rendered, render_value
from .verdict import Verdict, judge_sample

# The Sample Info card, in this order, when present: what the sample is and how it did first,
# then its sizes (a second row), where a newer writer's token count equal to its length is
# folded into the length's row instead of repeating it.
INFO_FIELDS = ("rollout_id", "sample_index", "reward", "status", "group_index", "dataset")
LENGTH_FIELDS = ("response_length", "total_length", "prompt_length")
TOKEN_COUNT_FIELDS = (
    "prompt_token_count",
    "response_token_count",
    "total_token_count",
    "image_count",
    "image_token_count",
    "multimodal_token_count",
    "agent_turns",
)
SAME_AS = {  # a token count and the length it repeats
    "response_token_count": "response_length",
    "total_token_count": "total_length",
    "prompt_token_count": "prompt_length",
}
TEXT_FIELDS = ("prompt", "response", "label")


@dataclass(slots=True)
class Node:
    """One JSON value as a tree the templates walk; arrays of scalars stay one text."""

    type: str  # "scalar" | "string" | "array" | "object"
    display: str = ""  # scalar and string: what to show; scalar array: the items joined
    count: int = 0  # array and object: number of items
    children: list[tuple[str, Node]] = field(default_factory=list)  # (key or index, node)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        if self.type in ("scalar", "string") or not self.children:
            data["display"] = self.display
        if self.type in ("array", "object"):
            data["count"] = self.count
            data["children"] = [[key, child.as_json()] for key, child in self.children]
        return data


def _flat_text(value: list[Any]) -> str | None:
    """A flat array's items as one text (None when an item is an array or object). Token ids and
    log-probs, thousands of them, are written at C speed: ints as `str`, finite floats as `repr`
    (what `format_scalar` writes for them); other items go one by one."""
    kinds = set(map(type, value))
    if kinds <= {int}:
        return ", ".join(map(str, value))
    if kinds == {float} and all(map(math.isfinite, value)):
        return ", ".join(map(repr, value))
    if any(isinstance(v, dict | list) for v in value):
        return None
    return ", ".join(
        json.dumps(v, ensure_ascii=False) if isinstance(v, str) else format_scalar(v) for v in value
    )


def value_node(value: Any) -> Node:
    if isinstance(value, str):
        return Node("string", display=value)
    if isinstance(value, dict):
        return Node(
            "object",
            count=len(value),
            children=[(str(k), value_node(v)) for k, v in value.items()],
        )
    if isinstance(value, list):
        flat = _flat_text(value)
        if flat is not None:
            return Node("array", display=flat, count=len(value))
        return Node(
            "array",
            count=len(value),
            children=[(str(i), value_node(v)) for i, v in enumerate(value)],
        )
    return Node("scalar", display=format_scalar(value))


@dataclass(slots=True)
class Section:
    """One field below the info card: formatted text, or a value tree."""

    name: str
    rendered: Rendered | None = None  # text (or a list of chat messages)
    cut: str | None = None  # where a truncated response stops: "cut at 4,096 tokens"
    raw: str = ""  # the exact text, for the raw view and the copy button
    node: Node | None = None  # any other value

    @property
    def is_text(self) -> bool:
        return self.rendered is not None

    @property
    def empty(self) -> bool:
        return self.rendered is not None and self.raw == ""


@dataclass(slots=True)
class InfoRow:
    name: str
    display: str
    kind: str  # "number" | "string" | "null" | "other"
    group: str = "outcome"  # "outcome" (the first row) | "length"
    also: tuple[str, ...] = ()  # fields with the same value, folded into this row


@dataclass(slots=True)
class PresentedSample:
    info: list[InfoRow]
    texts: list[Section]
    others: list[Section]
    warnings: list[str] = field(default_factory=list)  # what was replaced to show it
    verdict: Verdict | None = None

    @property
    def outcome_rows(self) -> list[InfoRow]:
        """The info card's first row, less what the header's chips already say (each reward,
        the status, shown the same): the page says each thing once. The twin and the terminal
        keep `info`."""
        verdict = self.verdict
        chips = {} if verdict is None else {badge.name: badge.display for badge in verdict.rewards}
        if verdict is not None and verdict.status is not None:
            chips["status"] = verdict.status.display
        # A chip that shows something else ("not a number" for a reward kept as text) leaves
        # the value itself to the card.
        return [
            row
            for row in self.info
            if row.group == "outcome" and chips.get(row.name) != row.display
        ]

    @property
    def length_rows(self) -> list[InfoRow]:
        return [row for row in self.info if row.group == "length"]


def info_rows(sample: dict[str, Any]) -> list[InfoRow]:
    rows: list[InfoRow] = []
    for name in INFO_FIELDS:
        if name not in sample:
            continue
        value = sample[name]
        if name == "reward" and isinstance(value, dict):
            rows.extend(_info_row(f"reward.{k}", v) for k, v in value.items())
        else:
            rows.append(_info_row(name, value))
    lengths: dict[str, InfoRow] = {}
    for name in (*LENGTH_FIELDS, *TOKEN_COUNT_FIELDS):
        if name not in sample:
            continue
        twin = lengths.get(SAME_AS.get(name, ""))
        if twin is not None and _same_number(sample[name], sample[twin.name]):
            twin.also = (*twin.also, name)
            continue
        lengths[name] = _info_row(name, sample[name])
        lengths[name].group = "length"
    return rows + list(lengths.values())


def _same_number(a: Any, b: Any) -> bool:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
    return numbers and a == b


def _info_row(name: str, value: Any) -> InfoRow:
    if value is None:
        return InfoRow(name, "null", "null")
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str):
            return InfoRow(name, value, "string")
        return InfoRow(name, json.dumps(value, ensure_ascii=False), "other")
    return InfoRow(name, format_number(value), "number")


def present_sample(
    sample: dict[str, Any],
    mask: re.Pattern[str] | None,
    warnings: Sequence[str] = (),
    scale: tuple[float, float] | None = None,
) -> PresentedSample:
    """``scale``: the step's reward range, on which a continuous reward is coloured."""
    shown = {*INFO_FIELDS, *LENGTH_FIELDS, *TOKEN_COUNT_FIELDS}
    verdict = judge_sample(sample, scale)
    texts = [_section(name, sample[name], mask) for name in TEXT_FIELDS if name in sample]
    for section in texts:
        if section.name == "response" and section.is_text:
            section.cut = verdict.cut
    others = [
        _section(name, value, mask)
        for name, value in sample.items()
        if name not in shown and name not in TEXT_FIELDS
    ]
    return PresentedSample(info_rows(sample), texts, others, list(warnings), verdict)


class SampleIdentity(TypedDict):
    """`sample_identity`: what the sample page's header and its twin's `identity` say."""

    rank: int
    total: int
    order: str
    line: int
    file: str
    position: int
    sample_index: int | None


def sample_identity(
    sample: dict[str, Any],
    *,
    rank: int,
    total: int,
    order: str,
    line: int,
    file: str,
    position: int,
) -> SampleIdentity:
    """The one sample's numbers side by side, so none is mistaken for another: its rank in the
    page's ordering ("45 of 64"), its line in the file, its position in the URL (lines counted
    from 0) and its own `sample_index` (which restarts per dataset in eval steps)."""
    index = sample.get("sample_index")
    number = isinstance(index, int) and not isinstance(index, bool)
    return {
        "rank": rank,
        "total": total,
        "order": order,
        "line": line,
        "file": file,
        "position": position,
        "sample_index": index if number else None,
    }


def _section(name: str, value: Any, mask: re.Pattern[str] | None) -> Section:
    if name in TEXT_FIELDS:
        rendered = render_value(value, mask)
        if rendered is not None:
            return Section(name, rendered=rendered, raw=rendered.raw)
    return Section(name, node=value_node(value))
