"""The attempts of issue 26 (items 6, 10 and 12) against a real `visualize` server: overflowing
log-probs on the sample page and its JSON, one prompt shared by 60,000 samples, compare's JSON
with a bad `prompt=`, and a 5,000-digit integer read back by a Python client. The same cases
run in-process in tests/unit (test_token_overflow, test_prompt_paging,
test_compare_prompt_param, test_wide_integers)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.servers import ServerProcess, get_json, request, run_visualize

pytestmark = pytest.mark.e2e

SHARED = "<|im_start|>user\nthe question of all 60,000 samples<|im_end|>\n"
PID = format_prompt_id(prompt_id_of_value(SHARED))
HUGE = "9" * 5000


def line(record: dict, **raw: str) -> str:
    """`record` as JSON, each `raw` key's value written as the given text."""
    text = json.dumps({**record, **{key: "@" + key for key in raw}})
    for key, value in raw.items():
        text = text.replace(f'"@{key}"', value)
    return text + "\n"


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp("data") / "rollout_result"
    (data / "train").mkdir(parents=True)
    tokens = {"response_token_ids": [5, 6], "response": "ab", "prompt": "p", "reward": 1.0}
    (data / "train" / "1.jsonl").write_text(
        line(tokens, response_rollout_log_probs="[800.0, -0.5]")
        + line(tokens, response_rollout_log_probs="[-1e308, -1e308]")
        + line({"prompt": "q", "response": "r", "reward": 0.0}, big=HUGE)
    )
    shared = (
        line({"prompt": SHARED, "response": f"answer {i}", "reward": float(i % 2)})
        for i in range(60_000)
    )
    (data / "train" / "2.jsonl").write_text("".join(shared))
    with run_visualize(data, "--disk-cache", "off") as server:
        yield server


@pytest.mark.parametrize("position", [0, 1])
def test_overflowing_log_probs_are_a_page_and_a_json_twin(viewer: ServerProcess, position: int):
    status, _, body = request(viewer.url(f"/train/1/sample/{position}/tokens/"))
    assert status == 200 and b"rv-token-strip" in body
    card_url = viewer.url(f"/train/1/sample/{position}/tokens/")
    status, _, card = request(card_url, headers={"RV-Fragment": "1"})
    assert status == 200 and card.lstrip().startswith(b'<section id="rv-tokens"')
    status, twin = get_json(viewer.url(f"/api/view/train/1/sample/{position}"))
    assert status == 200 and twin["tokens"]["tokens"] == 2
    assert twin["tokens"]["mean_logprob"] == [399.75, -1e308][position]


def test_a_5000_digit_integer_reads_back_with_pythons_json_loads(viewer: ServerProcess):
    for path in ("/api/view/train/1/sample/2", "/api/jsonl/train/file/1.jsonl/sample/2"):
        status, _, body = request(viewer.url(path))
        assert status == 200 and json.loads(body)["sample"]["big"] == HUGE
    # The whole step streams the file's own bytes: the number as written.
    status, _, body = request(viewer.url("/api/jsonl/train/file/1.jsonl"))
    assert status == 200 and json.loads(body, parse_int=str)["samples"][2]["big"] == HUGE


def test_one_prompt_in_60000_samples_is_a_small_page(viewer: ServerProcess):
    status, _, body = request(viewer.url(f"/train/prompt/{PID}/"), timeout=120)
    assert status == 200 and len(body) < 150_000 and b"60000 samples in 1 step" in body
    status, data = get_json(viewer.url(f"/api/jsonl/train/prompt/{PID}?page=300"))
    assert status == 200 and (data["total"], data["pages"], len(data["appearances"])) == (
        60_000,
        300,
        200,
    )
    assert data["urls"]["next"] is None and data["urls"]["prev"].endswith("page=299")


@pytest.mark.parametrize(("prompt", "status"), [("xyz", 400), ("0123456789abcdef", 404)])
def test_compare_json_checks_prompt_as_the_page_does(viewer: ServerProcess, prompt, status):
    query = f"?a=1&b=2&prompt={prompt}"
    assert request(viewer.url("/train/compare/" + query))[0] == status
    code, error = get_json(viewer.url("/api/jsonl/train/compare" + query))
    assert code == status and error["ok"] is False


def test_nothing_above_was_a_server_error(viewer: ServerProcess):
    log = viewer.output()
    assert "Traceback" not in log and "Internal Server Error" not in log
