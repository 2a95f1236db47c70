"""A decoded sample as the parts a page shows: info rows, text sections, value trees.

Plain Python (no Django), so the web pages, their JSON twins and the terminal UI agree on
what a sample looks like. Values stay values here: escaping is the template's job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .formatting import format_number, format_scalar
from .render import Rendered, render_value

# The Sample Info card, in this order, when present.
INFO_FIELDS = (
    "rollout_id",
    "sample_index",
    "reward",
    "response_length",
    "total_length",
    "status",
    "group_index",
    "dataset",
)
TOKEN_COUNT_FIELDS = (
    "prompt_length",
    "prompt_token_count",
    "response_token_count",
    "total_token_count",
    "image_count",
    "image_token_count",
    "multimodal_token_count",
    "agent_turns",
)
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
        if all(not isinstance(v, dict | list) for v in value):
            # Token ids and log-probs: tens of thousands of items, one text node, all of them.
            items = (
                json.dumps(v, ensure_ascii=False) if isinstance(v, str) else format_scalar(v)
                for v in value
            )
            return Node("array", display=", ".join(items), count=len(value))
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


@dataclass(slots=True)
class PresentedSample:
    info: list[InfoRow]
    texts: list[Section]
    others: list[Section]
    warnings: list[str] = field(default_factory=list)  # what was replaced to show it


def info_rows(sample: dict[str, Any]) -> list[InfoRow]:
    rows: list[InfoRow] = []
    for name in (*INFO_FIELDS, *TOKEN_COUNT_FIELDS):
        if name not in sample:
            continue
        value = sample[name]
        if name == "reward" and isinstance(value, dict):
            rows.extend(_info_row(f"reward.{k}", v) for k, v in value.items())
        else:
            rows.append(_info_row(name, value))
    return rows


def _info_row(name: str, value: Any) -> InfoRow:
    if value is None:
        return InfoRow(name, "null", "null")
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str):
            return InfoRow(name, value, "string")
        return InfoRow(name, json.dumps(value, ensure_ascii=False), "other")
    return InfoRow(name, format_number(value), "number")


def present_sample(
    sample: dict[str, Any], mask: re.Pattern[str] | None, warnings: Sequence[str] = ()
) -> PresentedSample:
    shown = {*INFO_FIELDS, *TOKEN_COUNT_FIELDS}
    texts = [_section(name, sample[name], mask) for name in TEXT_FIELDS if name in sample]
    others = [
        _section(name, value, mask)
        for name, value in sample.items()
        if name not in shown and name not in TEXT_FIELDS
    ]
    return PresentedSample(info_rows(sample), texts, others, list(warnings))


def _section(name: str, value: Any, mask: re.Pattern[str] | None) -> Section:
    if name in TEXT_FIELDS:
        rendered = render_value(value, mask)
        if rendered is not None:
            return Section(name, rendered=rendered, raw=rendered.raw)
    return Section(name, node=value_node(value))
