"""Which two samples a prompt's page compares before the reader picks: the best and the worst
completed sample of the latest step when their rewards differ (the answer now, right against
wrong); else the earliest and the latest appearance (how the answer changed)."""

from __future__ import annotations

import re

import pytest

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from tests.support.data import sample
from tests.support.pages import PREFIX

pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py

P = "<|im_start|>user\nHow many legs has a spider?<|im_end|>\n<|im_start|>assistant\n"
OTHER = "<|im_start|>user\nName a prime.<|im_end|>\n"
PID = format_prompt_id(prompt_id_of_value(P))


def compared(client) -> list[str]:
    html = client.get(f"{PREFIX}/train/prompt/{PID}/").content.decode()
    return re.findall(r'<option value="([0-9]+:[0-9]+)" selected', html)


def test_the_latest_steps_best_and_worst_completed_samples(client, write_step):
    write_step("train", 1, [sample(0, prompt=P, reward=0.0), sample(1, prompt=P, reward=1.0)])
    write_step(
        "train",
        2,
        [
            sample(0, prompt=P, reward=0.5),
            sample(1, prompt=OTHER, reward=1.0),  # another prompt: not a candidate
            sample(2, prompt=P, reward=1.0),  # the best, first of two
            sample(3, prompt=P, reward=1.0),
            sample(4, prompt=P, reward=-1.0, status="truncated"),  # not completed
            sample(5, prompt=P, reward=0.0),  # the worst
            sample(6, prompt=P, reward=None),  # no reward
        ],
    )
    assert compared(client) == ["2:2", "2:5"]


@pytest.mark.parametrize(
    "latest",
    [
        [sample(0, prompt=P, reward=1.0), sample(1, prompt=P, reward=1.0)],  # all alike
        [sample(0, prompt=P, reward=1.0)],  # one sample
        [sample(0, prompt=P, reward=1.0), sample(1, prompt=P, reward=0.0, status="aborted")],
    ],
)
def test_without_two_different_completed_rewards_the_earliest_and_the_latest(
    client, write_step, latest
):
    write_step("train", 1, [sample(0, prompt=P, reward=0.0), sample(1, prompt=P, reward=0.5)])
    write_step("train", 3, latest)
    assert compared(client) == ["1:0", f"3:{len(latest) - 1}"]


def test_a_chosen_pair_still_wins(client, write_step):
    write_step("train", 1, [sample(0, prompt=P, reward=0.0), sample(1, prompt=P, reward=1.0)])
    html = client.get(f"{PREFIX}/train/prompt/{PID}/?a=1:1&b=1:1").content.decode()
    assert re.findall(r'<option value="([0-9]+:[0-9]+)" selected', html) == ["1:1", "1:1"]
