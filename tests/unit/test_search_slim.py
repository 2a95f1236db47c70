"""Search confirms a hit from the line without its token arrays only when that gives exactly what
decoding the whole line gives (rollouts/store/search/slim.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rollouts.store.search.query import Query
from rollouts.store.search.slim import MIN_LINE_BYTES, slim_fields

IDS = list(range(5000))  # ~24 KB of numbers: a line long enough to be cut


def line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode()


def relax(**extra: Any) -> dict[str, Any]:
    return {
        "rollout_id": 1,
        "prompt": "<|im_start|>user\nWhat is [1, 2]?<|im_end|>",
        "response": 'It is "[3]" \\ 答',
        "reward": 1.0,
        "response_token_ids": IDS,
        "response_rollout_log_probs": [-0.5] * 3000,
        "response_rollout_log_probs_mask": [True] * 3000,
        "label": {"answer": "[3]", "n": 0},
        **extra,
    }


def without_label(**extra: Any) -> dict[str, Any]:
    return {k: v for k, v in relax(**extra).items() if k != "label"}


def fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("prompt", "response", "label", "reward", "status")}


def test_a_relax_line_is_read_without_its_arrays_and_gives_the_same_fields():
    record = relax()
    assert len(line(record)) > MIN_LINE_BYTES
    assert slim_fields(line(record)) == fields(record)
    # Python's writer puts NaN in the log-probs: the cut line is strict JSON again.
    nan = line(relax(response_rollout_log_probs=[float("nan")] * 3000))
    assert b"NaN" in nan
    assert slim_fields(nan) == fields(relax())


@pytest.mark.parametrize(
    "record",
    [
        # The same key inside the label, before the top-level one: the first find is nested.
        {"label": {"response_token_ids": IDS}, **without_label()},
        # ... and the top-level one null: the nested array must still not be cut.
        {"label": {"response_token_ids": IDS}, **without_label(response_token_ids=None)},
        # Only nested: no top-level array at all.
        {"prompt": "p", "response": "r", "label": {"response_token_ids": IDS}},
        # Inside a message of a list prompt.
        {"prompt": [{"role": "user", "content": "x", "response_token_ids": IDS}], "response": "r"},
    ],
    ids=["nested, then top-level", "top-level null", "only nested", "in a message"],
)
def test_an_array_inside_a_field_is_never_cut_away_from_it(record):
    """Whatever is cut, the fields are those of the whole line: the nested array stays in its
    label or message (a key found twice is not cut; one found only nested fails the check)."""
    got = slim_fields(line(record))
    assert got is None or got == fields(record)
    if "response_token_ids" not in {k for k in record if k != "label"}:  # only nested
        assert got is None


@pytest.mark.parametrize(
    "record",
    [
        # strings: the first ] is not the end
        {"prompt": "p", "response": "r", "response_token_ids": ["a]b"] * 4000},
        {"prompt": "p", "response": "r", "response_token_ids": [[1, 2]] * 4000},  # nested
        {"prompt": "p", "response": "r", "response_token_ids": IDS[:10]},  # a short line
    ],
    ids=["strings", "nested arrays", "short line"],
)
def test_what_is_not_a_long_flat_array_is_not_cut(record):
    assert slim_fields(line(record)) is None


def test_a_line_with_one_flat_array_and_one_that_is_not_cuts_only_the_flat_one():
    record = relax(response_token_ids=["a]b"] * 2000)
    assert slim_fields(line(record)) == fields(record)


def test_a_search_finds_the_same_in_a_cut_line_as_in_the_whole(tmp_path):
    """The label comes after the arrays in a Relax line: a match there is still found, and a
    needle that is only among the numbers is not."""
    record = relax()
    data = line(record)
    assert Query("[3]", field="label").matcher().match(data) is not None
    assert Query('"[3]" \\ 答', field="response").matcher().match(data) is not None
    assert Query("4999", field="any").matcher().match(data) is None  # a token id, not text
    found = Query("is [1, 2]", field="any").matcher().match(data)
    assert found is not None and found[0] == "prompt"
