"""Log-probs no float arithmetic survives (issue 26, item 6): a log-prob of 800.0 (exp overflows),
`[-1e308, -1e308]` (the sum leaves float range), NaN and infinities, in a real step file with
token ids from a tokenizer trained on the spot. The sample page and its JSON twin answer 200
with strict JSON, say what was odd, and keep the numbers that can be kept."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from rollouts.presentation.tokens import mean_of, probability_of, token_view
from tests.support.data import sample
from tests.support.pages import PREFIX, page
from tests.support.tokenizer import encode, train_tokenizer

TEXT = "the cat sat on the mat"
BIGGEST = 1.7976931348623157e308
# Each response's log-probs, cycled over its tokens (the attempts of the issue first).
CASES = {
    "positive_800": [800.0],
    "two_minus_1e308": [-1e308, -1e308],
    "plus_and_minus_1e308": [1e308, -1e308],
    "largest_floats": [-BIGGEST, -BIGGEST, -BIGGEST],
    "nan_and_infinities": [math.nan, math.inf, -math.inf, -0.5],
    "every_kind_at_once": [800.0, -1e308, math.nan, -math.inf, 1e308, -5e-324, -0.01],
}


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture
def tokenizer_file(tmp_path: Path) -> Path:
    return train_tokenizer(tmp_path / "tokenizer.json")


@pytest.fixture
def overflow_step(write_step, tokenizer_file: Path) -> list[int]:
    """train/1.jsonl: sample i holds CASES' i-th log-probs over the tokens of TEXT (written as
    the Relax writer writes them: NaN and Infinity bare)."""
    ids = encode(tokenizer_file, TEXT)
    records = []
    for i, values in enumerate(CASES.values()):
        lps = list(itertools.islice(itertools.cycle(values), len(ids)))
        records.append(
            sample(i, response=TEXT, response_token_ids=ids, response_rollout_log_probs=lps)
        )
    write_step("train", 1, records)
    return ids


def strict(body: bytes):
    def refuse(token: str):
        raise AssertionError(f"{token} in a JSON answer")

    return json.loads(body, parse_constant=refuse)


def twin_tokens(client, position: int) -> dict:
    response = client.get(PREFIX + f"/api/view/train/1/sample/{position}")
    assert response.status_code == 200, response.content[:300]
    return strict(response.content)["tokens"]


@pytest.mark.parametrize("with_tokenizer", [False, True])
def test_every_overflowing_sample_is_a_page_and_a_strict_json_twin(
    client, settings, overflow_step, tokenizer_file, with_tokenizer
):
    if with_tokenizer:
        settings.ROLLOUTS_TOKENIZER = str(tokenizer_file)
    for position in range(len(CASES)):
        p = page(client, f"/train/1/sample/{position}/tokens/")
        assert "rv-token-strip" in p.by_id and "Traceback" not in p.html
        card = client.get(
            PREFIX + f"/train/1/sample/{position}/tokens/", headers={"RV-Fragment": "1"}
        )
        assert card.status_code == 200 and b'id="rv-token-strip"' in card.content
        assert ("rv-token-text" in p.by_id) is with_tokenizer
        tokens = twin_tokens(client, position)
        assert tokens["tokens"] == len(overflow_step)
        assert tokens["tokenizer"] is with_tokenizer


def test_what_can_be_counted_is_counted_and_the_rest_is_said(client, overflow_step):
    n = len(overflow_step)
    positive = twin_tokens(client, 0)  # 800.0 everywhere
    assert positive["mean_logprob"] == 800.0 and positive["counted"] == n
    assert [t["probability"] for t in positive["lowest"]] == [None] * min(n, 12)
    assert any("above 0" in problem for problem in positive["problems"])
    huge = twin_tokens(client, 1)  # -1e308 everywhere: the sum overflows, the mean does not
    assert huge["mean_logprob"] == -1e308 and huge["perplexity"] is None
    assert huge["low_count"] == n and huge["problems"] == []
    assert twin_tokens(client, 3)["mean_logprob"] == -BIGGEST
    odd = twin_tokens(client, 4)  # NaN, inf, -inf: not counted; -0.5: counted
    assert odd["missing"] + odd["counted"] == n and odd["counted"] == n // 4 + (n % 4 > 3)
    assert odd["mean_logprob"] == -0.5


def test_the_token_view_never_raises_on_any_float():
    specials: list[object] = [800.0, -800.0, 1e308, -1e308, BIGGEST, -BIGGEST, 5e-324, -5e-324]
    specials += [0.0, -0.0, math.nan, math.inf, -math.inf, 10**400, -(10**400), True, "x", None]
    for a, b in itertools.product(specials, repeat=2):
        for values in ([a, b], [a, b, a], [a] * 3 + [b] * 2):
            view = token_view({"response_rollout_log_probs": values, "response_token_ids": None})
            assert view is not None
            data = view.as_json()
            json.dumps(data, allow_nan=False)  # strict JSON: no NaN, no infinity
            for cell in view.strip:
                assert 0 <= cell.height <= 40 and 0 <= cell.y <= 40


def test_mean_and_probability_hold_at_the_edges_of_float_range():
    assert mean_of([-1e308, -1e308]) == -1e308
    assert mean_of([BIGGEST] * 1000 + [-BIGGEST]) == pytest.approx(BIGGEST / 1001 * 999)
    assert mean_of([]) is None and mean_of([1.0, 2.0]) == 1.5
    assert probability_of(800.0) is None and probability_of(None) is None
    assert probability_of(-1e308) == 0.0 and probability_of(0.0) == 1.0
