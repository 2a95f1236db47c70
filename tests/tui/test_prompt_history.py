"""The terminal UI's prompt history (`h`), through textual's pilot: the steps where the shown
sample's prompt appears with their rewards, and Enter opening one of its samples."""

from __future__ import annotations

from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Label, OptionList

from rollouts.store.promptid import format_prompt_id, prompt_id_of_value
from rollouts.tui.app import RolloutsApp
from rollouts.tui.history import PromptHistory
from tests.support.data import sample
from tests.tui.test_app import drive, go_to, press, step_of

pytestmark = pytest.mark.tui

P = "<|im_start|>user\n这道题 P<|im_end|>\n"


def rec(i: int, prompt: str, reward: float, **extra: Any) -> dict[str, Any]:
    return sample(i, prompt=prompt, reward=reward, **extra)


@pytest.fixture
def bucket(write_step):
    write_step("train", 1, [rec(0, P, 1.0, response_length=11), rec(1, "X", 0.0)])
    write_step("train", 2, [rec(0, "Y", 0.0)])
    write_step("train", 3, [rec(0, "X", 0.0), rec(1, "Y", 1.0), rec(2, P, 0.0), rec(3, P, 0.5)])


def options(app: RolloutsApp) -> list[tuple[str, str | None, bool]]:
    listed = app.screen.query_one("#history", OptionList)
    found = []
    for i in range(listed.option_count):
        option = listed.get_option_at_index(i)
        found.append((str(option.prompt), option.id, option.disabled))
    return found


def test_h_lists_the_prompts_steps_and_enter_opens_one(bucket, data_dir):
    app = RolloutsApp(data_dir)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert step_of(app) == 3
        await go_to(app, pilot, "3")  # the third sample of step 3: prompt P
        assert app.session.position == 2
        await press(app, pilot, "h")
        assert isinstance(app.screen, PromptHistory)
        title = str(app.screen.query_one("#history-title", Label).render())
        assert title.startswith(f"prompt {format_prompt_id(prompt_id_of_value(P))}: 3 samples")
        assert options(app) == [
            ("step 1: 1 sample, mean reward 1", None, True),
            ("   line 1: reward 1, completed, length 11", "1:0", False),
            ("step 3: 2 samples, mean reward 0.25", None, True),
            ("   line 3: reward 0, completed, length 12", "3:2", False),
            ("   line 4: reward 0.5, completed, length 13", "3:3", False),
        ]
        # The first sample is highlighted: Enter opens step 1 at it.
        await press(app, pilot, "enter")
        assert not isinstance(app.screen, PromptHistory)
        assert (step_of(app), app.session.position) == (1, 0)
        # Again from there, down to the last sample, and Escape closes without moving.
        await press(app, pilot, "h")
        await press(app, pilot, "escape")
        assert (step_of(app), app.session.position) == (1, 0)
        await press(app, pilot, "h", "down", "down", "enter")
        assert (step_of(app), app.session.position) == (3, 3)

    drive(app, scenario)


def test_a_prompt_shared_by_many_samples_lists_a_bounded_few():
    """60,000 samples of one prompt were 60,000 rows: each step lists its first samples, and
    the whole list stops at MOST_OPTIONS, each cut said in a row."""
    from rollouts.store.lineage import Appearance
    from rollouts.tui.history import MOST_OPTIONS, SAMPLES_PER_STEP, History, history_options

    def appearance(step: int, position: int) -> Appearance:
        return Appearance(
            step=step, name=str(step), position=position, line=position + 1, reward=0.0,
            status="completed", response_length=3.0, dataset=None,
        )  # fmt: skip

    steps = [{"step": 1, "name": "1", "samples": 60_000, "mean_reward": 0.0}]
    one_step = History("p", [appearance(1, i) for i in range(60_000)], steps, [])
    listed = history_options(one_step)
    assert len(listed) == 1 + SAMPLES_PER_STEP + 1
    assert str(listed[-1].prompt) == f"   … {60_000 - SAMPLES_PER_STEP} more samples in this step"
    many = History("p", [appearance(s, i) for s in range(1000) for i in range(3)],
                   [{"step": s, "name": str(s), "samples": 3, "mean_reward": 0.0}
                    for s in range(1000)], [])  # fmt: skip
    listed = history_options(many)
    assert MOST_OPTIONS <= len(listed) < MOST_OPTIONS + 6
    assert str(listed[-1].prompt).startswith("… ") and listed[-1].disabled
