"""A flat array shows as one text: token ids and log-probs at C speed, anything else item by
item, and both ways write every item as `format_scalar` (or JSON, for a string) would."""

from __future__ import annotations

import json
import math
from typing import Any

from rollouts.presentation.sample import value_node
from rollouts.store.numbers import format_scalar


def one_by_one(values: list) -> str:
    return ", ".join(
        json.dumps(v, ensure_ascii=False) if isinstance(v, str) else format_scalar(v)
        for v in values
    )


def test_every_kind_of_flat_array_reads_as_its_items_one_by_one():
    arrays: list[list[Any]] = [
        [151644, 0, -3, 2**70],  # ints, one beyond 64 bits
        [-0.0353, -1e-300, -1e308, 0.1, -0.0, 2.5],  # finite floats: repr
        [-0.5, math.nan, math.inf],  # not all finite: one by one
        [1, 2.5, True, None, "é\\"],  # mixed
        [True, False],
        [],
    ]
    for values in arrays:
        node = value_node(values)
        assert node.type == "array" and node.count == len(values)
        assert node.display == one_by_one(values), values


def test_an_array_holding_an_array_or_an_object_is_a_tree():
    for values in ([1, [2]], [{"a": 1}, 2]):
        node = value_node(values)
        assert node.display == "" and [key for key, _ in node.children] == ["0", "1"]
