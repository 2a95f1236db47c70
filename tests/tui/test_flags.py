"""The terminal UI's flags: the shown sample's flags with their reasons, the flag filter in the
sidebar, and `F`, the next flagged sample. The steps are written here with known flags."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("textual")

from textual.pilot import Pilot
from textual.widgets import Label, Select

from rollouts.tui.app import RolloutsApp
from rollouts.tui.session import Session
from tests.support.data import sample
from tests.tui.test_app import (
    drive,
    go_to,
    label_text,
    press,
    settle,
    shown_index,
    view_text,
    walk,
)

pytestmark = pytest.mark.tui

# A sentence repeated 50 times before the response's answer.
LOOP_UNIT = "Wait, I should check the sum now. "
LOOP_TIMES = 50


def healthy(i: int, **extra: Any) -> dict[str, Any]:
    """An answered, rightly rewarded sample of ordinary length."""
    text = f"Adding {i} and {i + 2} gives {2 * i + 2}, so the answer is \\boxed{{{2 * i + 2}}}."
    return sample(i, response=text, label=str(2 * i + 2), reward=1.0, **extra)


def flagged_step() -> tuple[list[dict[str, Any]], dict[int, set[str]]]:
    """Eight samples: healthy ones and three with known flags, by sample_index."""
    records = [healthy(i, response_length=100 + i) for i in range(8)]
    looping = "First I add the numbers. " + LOOP_UNIT * LOOP_TIMES + "\\boxed{4}"
    records[1] = sample(1, response=looping, label="4", reward=1.0, response_length=101)
    records[3] = sample(3, response="", label="8", reward=0.0, response_length=103)
    records[6] = healthy(6, status="truncated", response_length=106)
    return records, {1: {"repeats"}, 3: {"empty"}, 6: {"cut"}}


def flags_label(app: RolloutsApp) -> str:
    label = app.query_one("#flags", Label)
    return str(label.render()) if label.display else ""


def test_the_shown_sample_s_flags_and_their_reasons(write_step, data_dir) -> None:
    records, _ = flagged_step()
    write_step("train", 0, records)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert shown_index(app) == 0
        assert flags_label(app) == ""  # a healthy sample: no line
        await press(app, pilot, "n")
        line = flags_label(app)
        assert line.startswith("flags: repeats (")
        assert f"that occur 3 times or more (one {LOOP_TIMES} times)" in line
        await press(app, pilot, "n", "n")
        assert shown_index(app) == 3
        assert flags_label(app).startswith("flags: empty (")
        assert "repeats" not in flags_label(app)

    drive(RolloutsApp(data_dir), scenario)


def test_flags_wait_for_the_columns_without_blocking(write_step, data_dir, monkeypatch) -> None:
    records, _ = flagged_step()
    write_step("train", 0, records)

    monkeypatch.setattr(Session, "build_columns", lambda self, index: None)  # never indexed

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert shown_index(app) == 0
        assert flags_label(app) == "flags: after indexing"
        await pilot.press("F")
        assert shown_index(app) == 0  # nothing to move by yet
        assert "after indexing" in str(app.query_one("#status", Label).render())

    async def main() -> None:
        app = RolloutsApp(data_dir)
        async with app.run_test() as pilot:
            for _ in range(100):
                await pilot.pause(0.02)
                if app.session.index is not None and app.query_one("#flags", Label).display:
                    break
            await scenario(app, pilot)
            app.exit()
            await pilot.pause()

    asyncio.run(main())


def test_the_flag_filter_limits_the_samples(write_step, data_dir) -> None:
    records, expected = flagged_step()
    write_step("train", 0, records)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        select = app.query_one("#flag", Select)
        assert select.value == ""
        assert await walk(app, pilot) == [r["sample_index"] for r in records]
        for name in ("repeats", "empty", "cut"):
            select.value = name
            await settle(app, pilot)
            assert app.session.selection.flag == name
            wanted = [i for i, names in sorted(expected.items()) if name in names]
            await go_to(app, pilot, "1")
            assert label_text(app, "#sample-label") == f"Sample 1 / {len(wanted)}"
            assert await walk(app, pilot) == wanted
        select.value = ""
        await settle(app, pilot)
        assert app.session.total == len(records)

    drive(RolloutsApp(data_dir), scenario)


def test_the_flag_selector_counts_each_flag(write_step, data_dir) -> None:
    records, expected = flagged_step()
    write_step("train", 0, records)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        labels = dict((value, label) for label, value in app.session.flag_choices())
        for name in ("repeats", "empty", "cut", "mixed_script"):
            count = sum(name in names for names in expected.values())
            assert labels[name] == f"{name} ({count})"

    drive(RolloutsApp(data_dir), scenario)


def test_next_flagged_lands_on_each_flagged_sample_in_turn(write_step, data_dir) -> None:
    records, expected = flagged_step()
    write_step("train", 0, records)
    flagged = sorted(expected)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert shown_index(app) == 0
        seen = []
        for _ in range(len(flagged) + 1):
            await press(app, pilot, "F")
            seen.append(shown_index(app))
        assert seen == [*flagged, flagged[0]]  # wraps around to the first
        footer = {active.binding.key: active.binding for active in app.active_bindings.values()}
        assert footer["F"].description == "next flagged" and footer["F"].show

    drive(RolloutsApp(data_dir), scenario)


def test_next_flagged_says_so_when_nothing_is_flagged(write_step, data_dir) -> None:
    write_step("train", 0, [healthy(i, response_length=100 + i) for i in range(4)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "F")
        assert shown_index(app) == 0
        assert "no flagged sample" in str(app.query_one("#status", Label).render())
        assert flags_label(app) == ""

    drive(RolloutsApp(data_dir), scenario)


def test_a_flag_no_sample_has_says_so_and_lifting_it_brings_them_back(write_step, data_dir) -> None:
    records, expected = flagged_step()
    write_step("train", 0, records)
    flagged = set().union(*expected.values())
    absent = next(n for n in ("mixed_script", "outlier_length") if n not in flagged)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        app.query_one("#flag", Select).value = absent
        await settle(app, pilot)
        assert app.session.total == 0
        assert f"is flagged {absent}" in view_text(app)
        app.query_one("#flag", Select).value = ""
        await settle(app, pilot)
        assert app.session.total == len(records)
        assert shown_index(app) == records[0]["sample_index"]

    drive(RolloutsApp(data_dir), scenario)
