"""Is it learning? The terminal UI's line for the shown bucket: the web's verdict (the same label,
the tone in its rich style), driven through textual's pilot."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("textual")

from rich.text import Text
from textual.pilot import Pilot

from rollouts.presentation import with_verdict
from rollouts.store import Catalog, trend_reading, update_rules
from rollouts.tui.app import RolloutsApp
from rollouts.tui.learning import LearningLine
from rollouts.tui.text import TONE_STYLES
from tests.support.data import sample
from tests.tui.test_app import drive, press, settle

pytestmark = pytest.mark.tui


def write_rewards(write_step, bucket: str, means: list[float]) -> None:
    for step, mean in enumerate(means):
        write_step(bucket, step, [sample(i, reward=mean) for i in range(2)])


def shown(app: RolloutsApp) -> tuple[str, str | None]:
    """The line's text and the style of the verdict's label in it."""
    line = app.query_one(LearningLine)
    content = line.content
    assert isinstance(content, Text)
    verdict = line.verdict
    if verdict is None:
        return content.plain, None
    styles = [
        str(s.style)
        for s in content.spans
        if content.plain[s.start : s.end].strip() == verdict["label"]
    ]
    return content.plain, styles[0] if styles else None


def test_each_bucket_shows_its_reading_in_its_tones_style(write_step, data_dir):
    write_rewards(write_step, "train", [0.1 * n for n in range(8)])
    write_rewards(write_step, "eval", [1.0 - 0.1 * n for n in range(8)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await settle(app, pilot)
        text, style = shown(app)
        assert text.startswith("train:  rising  slope +0.1"), text
        assert style == TONE_STYLES["good"] == "bold green"
        await press(app, pilot, "b")  # the next bucket: its own reading
        await settle(app, pilot)
        text, style = shown(app)
        assert text.startswith("eval:  not rising "), text
        assert style == TONE_STYLES["bad"]

    drive(RolloutsApp(data_dir), scenario)


def test_a_given_reading_is_shown_as_the_web_says_it(write_step, data_dir):
    """`visualize --tui` gives the app the trends' reading (with the TensorBoard rules): a rule
    over a rising curve is shown by its label, in the bad tone."""
    write_rewards(write_step, "train", [0.1 * n for n in range(8)])
    asked: list[str] = []

    def reading_of(catalog: Catalog, bucket: str) -> dict[str, Any]:
        asked.append(bucket)
        return with_verdict(update_rules(trend_reading([0.1 * n for n in range(8)]), 0.2))

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await settle(app, pilot)
        text, style = shown(app)
        assert text.startswith("train:  KL too large  the latest approx_kl 0.2"), text
        assert style == TONE_STYLES["bad"] == "bold white on red"
        assert asked == ["train"]

    drive(RolloutsApp(data_dir, reading_of=reading_of), scenario)
