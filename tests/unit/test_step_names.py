"""Only ASCII digits make a step (issue 12, section 2): a name `\\d` or `$` would let through is
not a step anywhere, and a newer file with such a name never breaks a page."""

from __future__ import annotations

import json

import pytest

from rollouts.store import STEP_FILE, Catalog, DictCache
from tests.support.data import sample
from tests.support.pages import PREFIX

NOT_STEPS = [
    "\u0661.jsonl",  # ARABIC-INDIC DIGIT ONE
    "\U0001d7cf.jsonl",  # MATHEMATICAL BOLD DIGIT ONE
    "\uff11.jsonl",  # FULLWIDTH DIGIT ONE
    "9.jsonl\n",  # `$` matches before a final newline
    "9.jsonl ",
    " 9.jsonl",
    "9.JSONL",
]


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.mark.parametrize("name", NOT_STEPS)
def test_a_name_that_only_looks_like_a_step_is_not_one(name):
    assert STEP_FILE.match(name) is None


@pytest.mark.parametrize("name", NOT_STEPS)
def test_such_a_file_newest_of_all_breaks_no_page_and_is_not_listed(
    client, write_step, data_dir, name
):
    write_step("train", 1, [sample(0)])
    write_step("train", 2, [sample(0)])
    path = write_step("train", name, [sample(5)])
    assert path.exists()
    catalog = Catalog(data_dir, DictCache())
    assert [s.filename for s in catalog.steps("train")] == ["1.jsonl", "2.jsonl"]
    assert client.get(PREFIX + "/")["Location"] == f"{PREFIX}/train/2/"
    assert client.get(PREFIX + "/train/")["Location"] == f"{PREFIX}/train/2/"
    for url in ("/train/2/", "/train/2/stats/", "/train/trends/"):
        assert client.get(PREFIX + url).status_code == 200, url
    steps = json.loads(client.get(PREFIX + "/api/jsonl/train/steps").content)
    assert [s["step"] for s in steps["steps"]] == [1, 2]
    trends = json.loads(client.get(PREFIX + "/api/jsonl/train/trends").content)
    assert trends["total"] == 2 and trends["failed"] == []


@pytest.mark.parametrize("name", ["\u0661.jsonl", "9.jsonl%0A", "%D9%A1.jsonl"])
def test_the_api_refuses_such_a_name_as_not_found(client, write_step, name):
    write_step("train", 1, [sample(0)])
    write_step("train", "\u0661.jsonl", [sample(0)])
    response = client.get(f"{PREFIX}/api/jsonl/train/file/{name}/stats")
    assert response.status_code == 404 and response["Content-Type"] == "application/json"


@pytest.mark.parametrize("wanted", ["\u0661", "1_0", "9" * 5000, "\uff12"])
def test_jump_to_a_sample_number_takes_ascii_digits_only(client, write_step, wanted):
    write_step("train", 1, [sample(0), sample(1)])
    response = client.get(f"{PREFIX}/train/1/", {"i": wanted})
    assert response.status_code == 400
    assert "sample number must be an integer" in response.content.decode()


def test_jump_still_takes_a_number_with_spaces_and_clamps(client, write_step):
    write_step("train", 1, [sample(0), sample(1)])
    assert client.get(f"{PREFIX}/train/1/", {"i": " 2 "})["Location"].endswith("/sample/1/")
    assert client.get(f"{PREFIX}/train/1/", {"i": "-3"})["Location"].endswith("/sample/0/")
