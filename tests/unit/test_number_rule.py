"""The number rule, server side: every case of the table the scripts' node test checks too
(tests/js/numbers.cases.json), so a value prints the same in the HTML, in JSON labels, in the
terminal and in what the scripts draw; plus what only the server prints (NaN by name, exact
array items)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rollouts.store.numbers import (
    format_compact,
    format_delta,
    format_number,
    format_scalar,
    format_share,
    format_share_delta,
    format_stat,
    format_unit,
)

CASES = json.loads((Path(__file__).parents[1] / "js" / "numbers.cases.json").read_text())
FORMATS = {
    "number": format_number,
    "delta": format_delta,
    "share": format_share,
    "share_delta": format_share_delta,
}


@pytest.mark.parametrize(
    ("kind", "value", "text"),
    [(kind, value, text) for kind in FORMATS for value, text in CASES[kind]],
)
def test_each_value_of_the_shared_table_prints_as_listed(kind, value, text):
    assert FORMATS[kind](value) == text


@pytest.mark.parametrize(("value", "unit", "text"), CASES["unit"])
def test_a_unit_is_held_to_its_number(value, unit, text):
    assert format_unit(value, unit) == text


def test_the_table_covers_whole_floats_and_every_range():
    # JSON 4096.0 must reach Python as a float, or the "whole float" case would test an int.
    values = [v for v, _ in CASES["number"]]
    assert any(isinstance(v, float) and v.is_integer() for v in values)
    sizes = [abs(v) for v in values if v]
    assert min(sizes) < 1e-3 and max(sizes) >= 1e6 and any(1e4 <= s < 1e6 for s in sizes)


def test_no_value_and_infinities_print_by_name():
    assert [format_number(v) for v in (math.nan, math.inf, -math.inf, None, True)] == [
        "NaN", "Infinity", "-Infinity", "null", "true"
    ]  # fmt: skip
    assert format_delta(math.nan) == "NaN" and format_delta(None) == "null"


def test_array_items_stay_exact():
    assert format_scalar(-0.123456789012) == "-0.123456789012"
    assert format_scalar(2206.2031) == "2206.2031"


def test_statistics_and_chart_labels_follow_the_same_rule():
    assert format_stat(388.34375) == "388.3" and format_stat(4096.0) == "4096"
    assert format_compact(204.8) == "204.8" and format_compact(12345.678) == "12346"
    assert format_compact(204.8, integral=True) == "205"
