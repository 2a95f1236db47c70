"""The compare page colours each difference by the way it is better: a higher mean reward and a
lower truncation rate read as better (`rv-change-up`), their opposites as worse
(`rv-change-down`); the response length has no better way and stays plain."""

from __future__ import annotations

import re

import pytest

from rollouts.views.compare import difference_tones
from tests.support.data import sample
from tests.support.pages import PREFIX

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.mark.parametrize(
    ("difference", "tones"),
    [
        ({"mean_reward": 0.2, "truncation_rate": -0.1, "mean_response_length": 40},
         ("rv-change-up", "rv-change-up", "")),
        ({"mean_reward": -0.2, "truncation_rate": 0.1, "mean_response_length": -40},
         ("rv-change-down", "rv-change-down", "")),
        ({"mean_reward": 0, "truncation_rate": None, "mean_response_length": None}, ("", "", "")),
        (None, ("", "", "")),
    ],
)  # fmt: skip
def test_each_difference_is_coloured_by_the_way_it_is_better(difference, tones):
    found = difference_tones(difference)
    assert (found["mean_reward"], found["truncation_rate"], found["mean_response_length"]) == tones


def test_the_page_marks_a_rise_in_reward_good_and_a_rise_in_truncation_bad(client, write_step):
    write_step("train", 1, [sample(i, reward=0.0) for i in range(4)])
    write_step("train", 2, [sample(i, reward=1.0, status="truncated") for i in range(4)])
    html = client.get(f"{PREFIX}/train/compare/?a=1&b=2").content.decode()
    row = re.search(r'<tr data-dataset="\(overall\)">(.*?)</tr>', html, re.S)
    assert row is not None
    cells = dict(re.findall(r'data-field="([a-z_]+-difference)"><span class="([^"]*)">', row[1]))
    assert cells["mean_reward-difference"] == "rv-change-up"
    assert cells["truncation_rate-difference"] == "rv-change-down"
