"""The token view of one sample: numbers, lows and strip on fixtures worked out by hand, the odd
arrays a writer may leave (mismatched lengths, NaN, no mask, empty, huge), and the tokens as
text with a tokenizer trained here, on the spot."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rollouts.presentation.tokens import (
    LOW_LOGPROB,
    STRIP_CELLS,
    bucket_of,
    token_view,
)
from rollouts.web.tokenizer import load_tokenizer
from tests.support.tokenizer import encode, train_tokenizer

IDS, LPS, MASK = (
    "response_token_ids",
    "response_rollout_log_probs",
    "response_rollout_log_probs_mask",
)
# pos 0 counted (p > 90 %), 1 counted (5 %), 2 NaN, 3 masked, 4 counted (0.25 %)
FIXTURE = {
    IDS: [10, 11, 12, 13, 14],
    LPS: [-0.05, -3.0, math.nan, -0.5, -6.0],
    MASK: [True, True, True, False, True],
}


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tokenizer(tmp_path_factory.mktemp("tok") / "tokenizer.json")


def test_summary_lows_and_strip_of_a_fixture_worked_out_by_hand():
    view = token_view(FIXTURE)
    assert view is not None
    assert (view.tokens, view.counted, view.masked, view.missing) == (5, 3, 1, 1)
    assert view.mean_logprob == pytest.approx((-0.05 - 3.0 - 6.0) / 3)
    assert view.perplexity == pytest.approx(math.exp(9.05 / 3))
    assert (view.low_count, view.low_share) == (2, pytest.approx(2 / 3))  # -3 and -6 < log 0.1
    assert [(t.position, t.token_id, t.logprob) for t in view.lows] == [
        (4, 14, -6.0),
        (1, 11, -3.0),
        (0, 10, -0.05),
    ]
    assert view.tokens_per_cell == 1
    assert [c.kind for c in view.strip] == ["lp0", "lp3", "missing", "masked", "lp4"]
    # 2 + 38 * (log-prob / -10), full height (40) for a masked token, nothing for a missing one
    assert [c.height for c in view.strip] == [2.19, 13.4, 0.0, 40, 24.8]
    assert view.problems == ["1 log-prob is not a finite number"]
    assert view.text is None


def test_json_block_carries_the_summary_and_the_lowest_tokens():
    view = token_view(FIXTURE)
    assert view is not None
    data = view.as_json()
    assert data["low_threshold"] == LOW_LOGPROB == math.log(0.1)
    assert data["lowest"][0] == {
        "position": 4,
        "token_id": 14,
        "logprob": -6.0,
        "probability": pytest.approx(math.exp(-6.0)),
    }
    assert (data["tokens"], data["counted"], data["has_mask"], data["tokenizer"]) == (
        5, 3, True, False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("logprob", "bucket"),
    [(0.0, 0), (math.log(0.9), 0), (-0.2, 1), (math.log(0.5), 1), (-1.0, 2), (-2.31, 3), (-9, 4)],
)
def test_colour_buckets_by_probability(logprob: float, bucket: int):
    assert bucket_of(logprob) == bucket


def test_no_log_probs_means_no_view():
    assert token_view({IDS: [1, 2]}) is None
    assert token_view({IDS: [1], LPS: "oops"}) is None


def test_fewer_log_probs_than_tokens_leaves_the_rest_missing():
    view = token_view({IDS: [1, 2, 3], LPS: [-1.0]})
    assert view is not None
    assert (view.tokens, view.counted, view.missing, view.mean_logprob) == (3, 1, 2, -1.0)
    assert view.problems == ["1 log-probs for 3 tokens: tokens from 1 on have none"]
    assert not view.has_mask


def test_more_log_probs_than_tokens_leaves_the_extra_out():
    view = token_view({IDS: [7], LPS: [-1.0, -9.0]})
    assert view is not None
    assert (view.tokens, view.counted, view.mean_logprob, view.low_count) == (1, 1, -1.0, 0)
    assert view.problems == ["2 log-probs for 1 tokens: the last 1 are left out"]


def test_a_short_mask_counts_the_tokens_it_does_not_cover_and_odd_values_are_missing():
    view = token_view({IDS: [1, 2, 3, True], LPS: [-1.0, True, None, "x"], MASK: [False]})
    assert view is not None
    assert (view.masked, view.counted, view.missing) == (1, 0, 3)
    assert view.mean_logprob is None and view.low_share is None and view.perplexity is None
    assert view.lows == []
    assert view.problems == [
        "1 mask values for 4 tokens: tokens without one are counted",
        "3 log-probs are not a finite number",
    ]
    zeros = token_view({IDS: [1, 2, 3, True], LPS: [0, 0, 0, 0]})  # a bool is no token id
    assert zeros is not None and [t.token_id for t in zeros.lows] == [1, 2, 3, None]


def test_empty_arrays_and_missing_ids():
    view = token_view({IDS: [], LPS: [], MASK: []})
    assert view is not None
    assert (view.tokens, view.counted, view.strip, view.lows, view.mean_logprob) == (
        0, 0, [], [], None,
    )  # fmt: skip
    assert view.problems == []
    no_ids = token_view({LPS: [-0.5, -4.0]})
    assert no_ids is not None
    assert [t.token_id for t in no_ids.lows] == [None, None]
    assert no_ids.problems == ["no response_token_ids: tokens are numbered by their log-probs"]


def test_tens_of_thousands_of_tokens_share_strip_cells_but_keep_the_exact_lows():
    n = 20_000
    lps = [-0.01] * n
    lps[12_345], lps[7] = -20.0, -15.0
    view = token_view({IDS: list(range(n)), LPS: lps})
    assert view is not None
    per = math.ceil(n / STRIP_CELLS)  # 42 tokens a bar
    assert view.tokens_per_cell == per
    assert len(view.strip) == math.ceil(n / per) <= STRIP_CELLS
    assert [(t.position, t.logprob) for t in view.lows[:2]] == [(12_345, -20.0), (7, -15.0)]
    cell = view.strip[12_345 // per]
    assert (cell.logprob, cell.kind, cell.height) == (-20.0, "lp4", 40.0)
    assert view.strip[1].logprob == -0.01


def test_tokens_as_text_with_a_tokenizer_trained_here(tokenizer_file: Path):
    text = "the cat <b> ate"
    ids = encode(tokenizer_file, text)
    tokenizer = load_tokenizer(tokenizer_file)
    assert tokenizer is not None
    view = token_view({IDS: [*ids, 99_999, -1], LPS: [-0.01] * (len(ids) + 2)}, tokenizer)
    assert view is not None and view.text is not None
    pieces = [t.text for t in view.text]
    assert (
        "".join(p or "" for p in pieces[: len(ids)]) == text
    )  # each token decodes to the text it covers
    assert all(piece for piece in pieces[: len(ids)])
    assert pieces[len(ids) :] == [None, None]  # beyond the vocabulary, and no u32 id
    assert view.as_json()["tokenizer"] is True
    assert all(low.text is not None or low.token_id in (99_999, -1) for low in view.lows)


def test_an_unusable_tokenizer_file_gives_no_text(tmp_path: Path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}")
    assert load_tokenizer(bad) is None
    assert load_tokenizer(tmp_path / "missing.json") is None
    assert load_tokenizer(None) is None
