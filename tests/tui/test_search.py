"""Search across the steps from the terminal UI (`/`), driven through textual's pilot: the hits
of every step are listed with the match, the latest step first, each with its reward, status and
answer check, and Enter opens the chosen one at its step."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") == "true":
    import textual  # noqa: F401
else:
    pytest.importorskip("textual")

from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Select

from rollouts.tui.app import RolloutsApp
from rollouts.tui.search import SearchScreen
from tests.support.data import sample
from tests.tui.test_app import drive, press, settle, shown_field, step_of

pytestmark = pytest.mark.tui


def hit_lines(screen: SearchScreen) -> list[str]:
    hits = screen.query_one("#search-hits", OptionList)
    return [str(hits.get_option_at_index(i).prompt) for i in range(hits.option_count)]


async def wait_for_search(app: RolloutsApp, pilot: Pilot, screen: SearchScreen) -> None:
    await settle(app, pilot)
    with_workers = [w for w in screen.workers if not w.is_finished]
    for worker in with_workers:
        await worker.wait()
    await pilot.pause()


def test_search_lists_the_hits_of_every_step_and_enter_opens_one(write_step, data_dir):
    sorry = sample(1, response="I apologize,\nreally \\boxed{3}", label="4", status="truncated")
    write_step("train", 1, [sample(0), sorry, sample(2)])
    write_step("train", 2, [sample(0, response="fine"), sample(1)])
    write_step("train", 3, [sample(i) for i in range(3)] + [sample(3, response="i APOLOGIZE")])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert step_of(app) == 3  # the latest step is open
        await press(app, pilot, "slash")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await press(app, pilot, *"apologize", "enter")
        await wait_for_search(app, pilot, screen)
        assert hit_lines(screen) == [  # the latest step first
            "step 3 #3 response [reward 1, completed]: i APOLOGIZE",
            "step 1 #1 response [reward 1, truncated, \u2717]: I apologize,\u23cereally \\boxed{3}",
        ]
        status = str(screen.query_one("#search-status").render())
        assert status.startswith("2 matching samples, 3 of 3 steps searched")
        await press(app, pilot, "tab", "tab", "tab", "tab")  # past field, regex, case: the hits
        assert screen.query_one("#search-hits", OptionList).has_focus
        await press(app, pilot, "down", "enter")  # the second hit: step 1, position 1
        await settle(app, pilot)
        assert not isinstance(app.screen, SearchScreen)
        assert step_of(app) == 1
        assert shown_field(app, "sample_index") == "1"
        assert app.session.rank == 1

    drive(RolloutsApp(data_dir), scenario)


def test_the_search_looks_in_the_field_chosen(write_step, data_dir):
    write_step("train", 1, [sample(0, response="about question 7"), sample(1), sample(7)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "slash")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await press(app, pilot, *"question 7", "enter")  # any field: response, then prompt
        await wait_for_search(app, pilot, screen)
        assert [line.split(":")[0] for line in hit_lines(screen)] == [
            "step 1 #0 response [reward 0, completed]",
            "step 1 #2 prompt [reward 1, completed]",
        ]
        screen.query_one("#search-field", Select).value = "prompt"
        screen.query_one("#search-query", Input).focus()
        await press(app, pilot, "enter")
        await wait_for_search(app, pilot, screen)
        assert [line.split(":")[0] for line in hit_lines(screen)] == [
            "step 1 #2 prompt [reward 1, completed]"
        ]

    drive(RolloutsApp(data_dir), scenario)


def test_a_bad_regex_is_said_on_the_screen_and_escape_closes_it(write_step, data_dir):
    write_step("train", 1, [sample(0)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "slash")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        screen.query_one("#search-regex").value = True  # type: ignore[attr-defined]
        await press(app, pilot, *"(open", "enter")
        assert "not a valid regular expression" in str(screen.query_one("#search-status").render())
        assert hit_lines(screen) == []
        await press(app, pilot, "escape")
        assert not isinstance(app.screen, SearchScreen)
        assert step_of(app) == 1

    drive(RolloutsApp(data_dir), scenario)
