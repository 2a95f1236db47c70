"""The terminal UI (`visualize --tui`), driven for real through textual's test pilot.

No pytest-asyncio: each test runs its own event loop with `asyncio.run`. Whatever reads a file
runs in a worker thread, so every action that opens or refreshes a step is followed by
`settle`, which waits for the workers and lets the app handle what they posted back.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

if os.environ.get("CI") == "true":
    import textual  # noqa: F401  (CI installs the "tui" extra: a missing textual must fail)
else:
    pytest.importorskip("textual")

from django.core.management import CommandError, call_command
from rich.console import Console
from rich.table import Table
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Input, Label, OptionList, Select, SelectionList, Static
from textual.worker import WorkerCancelled

import rollouts.tui
from rollouts.conf import DEFAULT_MASK_STR
from rollouts.tui.app import RolloutsApp
from rollouts.tui.progress import PROGRESS_INTERVAL
from rollouts.tui.session import Session
from tests.support.data import sample

pytestmark = pytest.mark.tui

SIZE = (140, 45)
SETTLE_SECONDS = 10  # tiny steps open in milliseconds: this long means the app is stuck
Scenario = Callable[[RolloutsApp, Pilot], Awaitable[None]]


# Driving the app ---------------------------------------------------------------------------


def busy(app: RolloutsApp) -> bool:
    index = app.session.index
    working = any(not worker.is_finished for worker in app.workers)
    return working or (index is not None and not index.columns_ready)


async def settle(app: RolloutsApp, pilot: Pilot, idle: bool = False) -> None:
    """Wait until no worker is left and the open step has its columns, then let the app
    handle what the workers posted back. A worker may start another one after the next
    repaint (the column pass), hence the loop. `idle`: the pilot already waited after a key."""
    deadline = time.monotonic() + SETTLE_SECONDS
    if not idle:
        await pilot.pause()  # the messages that start workers (a selector's Changed)
    if not busy(app):
        return
    while busy(app):
        if time.monotonic() > deadline:
            raise AssertionError(f"the app was still busy after {SETTLE_SECONDS} s")
        with contextlib.suppress(WorkerCancelled):  # superseded by a later key: fine
            await app.workers.wait_for_complete()
        await pilot.pause(0.01)
    await pilot.pause()


async def press(app: RolloutsApp, pilot: Pilot, *keys: str) -> None:
    await pilot.press(*keys)
    await settle(app, pilot, idle=True)


async def quit_app(app: RolloutsApp, pilot: Pilot) -> None:
    """Leave as `q` does. run_test's own teardown removes the widgets while the app's progress
    timer still runs, which now and then fails a test with NoMatches for #progress."""
    app.exit()
    await pilot.pause()


def drive(app: RolloutsApp, scenario: Scenario) -> None:
    """Run the app headless, wait for the first step to open, then play `scenario`."""

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await scenario(app, pilot)
            await quit_app(app, pilot)

    asyncio.run(main())


def view_text(app: RolloutsApp) -> str:
    """The plain text of the main pane: the Text the app gave the Static, not the screen."""
    content = app.query_one("#view", Static).content
    assert isinstance(content, Text), f"the view shows a {type(content).__name__}"
    return content.plain


def label_text(app: RolloutsApp, selector: str) -> str:
    return str(app.query_one(selector, Label).render())


def option_labels(app: RolloutsApp, selector: str) -> list[str]:
    """The entries of a Select's drop-down (the step Select's blank "no steps" left out)."""
    options = app.query_one(selector, Select).query_one(OptionList)
    prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
    return [p for p in prompts if p != "no steps"]


def shown_field(app: RolloutsApp, name: str) -> str:
    match = re.search(rf"^{name}: (.*)$", view_text(app), re.MULTILINE)
    assert match, view_text(app)
    return match.group(1)


def step_of(app: RolloutsApp) -> int:
    """The number of the step the app shows."""
    step = app.session.step
    assert step is not None
    return step.step


def shown_index(app: RolloutsApp) -> int:
    return int(shown_field(app, "sample_index"))


async def walk(app: RolloutsApp, pilot: Pilot) -> list[int]:
    """sample_index of every sample in the order `n` visits them, from the current one."""
    seen = [shown_index(app)]
    for _ in range(app.session.total - 1 - app.session.rank):
        await press(app, pilot, "n")
        seen.append(shown_index(app))
    return seen


async def go_to(app: RolloutsApp, pilot: Pilot, number: str) -> None:
    app.query_one("#sample", Input).focus()
    await press(app, pilot, *number, "enter")


def steps(write_step: Callable[..., Path], bucket: str, numbers: Iterable[int], count: int = 3):
    for step in numbers:
        write_step(bucket, step, [sample(i, rollout_id=step) for i in range(count)])


# Opening, moving, buckets ------------------------------------------------------------------


def test_opens_the_latest_train_step_and_lists_steps_in_numeric_order(write_step, data_dir):
    # Under 1000 bytes each, so the size reads "N B"; different sizes, to tell them apart.
    counts = {10: 3, 0: 1, 2: 2}
    paths = {s: write_step("train", s, [sample(i) for i in range(c)]) for s, c in counts.items()}
    steps(write_step, "eval", (0, 20, 40))

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert (app.session.bucket, step_of(app)) == ("train", 10)
        assert app.query_one("#bucket", Select).value == "train"
        assert label_text(app, "#sample-label") == f"Sample 1 / {counts[10]}"
        expected = [f"Step {s} ({paths[s].stat().st_size} B)" for s in sorted(paths)]
        assert option_labels(app, "#step") == expected
        app.query_one("#step", Select).value = 0  # the user picks "Step 0"
        await settle(app, pilot)
        assert step_of(app) == 0
        assert label_text(app, "#sample-label") == f"Sample 1 / {counts[0]}"

    drive(RolloutsApp(data_dir), scenario)


def test_first_sample_shows_while_the_columns_are_still_being_indexed(
    write_step, data_dir, monkeypatch
) -> None:
    write_step("train", 0, [sample(i) for i in range(4)])
    release = threading.Event()
    build_columns = Session.build_columns

    def slow_build_columns(self: Session, index: Any) -> None:
        release.wait(SETTLE_SECONDS)
        build_columns(self, index)

    monkeypatch.setattr(Session, "build_columns", slow_build_columns)

    async def main() -> None:
        app = RolloutsApp(data_dir)
        async with app.run_test(size=SIZE) as pilot:
            try:
                for _ in range(100):
                    await pilot.pause(0.02)
                    if "sample_index: 0" in view_text(app):
                        break
                await pilot.pause(PROGRESS_INTERVAL * 2)
                assert label_text(app, "#sample-label") == "Sample 1 / 4"
                assert [w.group for w in app.workers if not w.is_finished] == ["step"]
                assert app.query_one("#progress").display is True
                assert option_labels(app, "#sort") == ["file order"]
            finally:
                release.set()
            await settle(app, pilot)
            await pilot.pause(PROGRESS_INTERVAL * 2)
            assert app.query_one("#progress").display is False
            assert "reward desc" in option_labels(app, "#sort")
            await quit_app(app, pilot)

    asyncio.run(main())


def test_n_and_p_move_through_samples_and_stop_at_both_ends(write_step, data_dir) -> None:
    write_step("train", 0, [sample(i) for i in range(3)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "p")
        assert (app.session.rank, shown_index(app)) == (0, 0)
        await press(app, pilot, "n", "n", "n")
        assert label_text(app, "#sample-label") == "Sample 3 / 3"
        assert (app.session.rank, shown_index(app)) == (2, 2)
        await press(app, pilot, "p")
        assert label_text(app, "#sample-label") == "Sample 2 / 3"
        assert shown_index(app) == 1

    drive(RolloutsApp(data_dir), scenario)


def test_shift_n_and_shift_p_change_step_even_when_pressed_quickly(write_step, data_dir) -> None:
    steps(write_step, "train", (0, 2, 10))

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "N")  # already on the latest step
        assert (step_of(app), shown_field(app, "rollout_id")) == (10, "10")
        await press(app, pilot, "P")
        assert (step_of(app), shown_field(app, "rollout_id")) == (2, "2")
        assert app.query_one("#step", Select).value == 1
        await press(app, pilot, "P", "P")
        assert (step_of(app), shown_field(app, "rollout_id")) == (0, "0")
        await press(app, pilot, "N")
        assert (step_of(app), shown_field(app, "rollout_id")) == (2, "2")
        await pilot.press("N", "P", "N", "N")  # faster than the workers: the last one wins
        await settle(app, pilot)
        assert (step_of(app), shown_field(app, "rollout_id")) == (10, "10")
        assert app.query_one("#step", Select).value == 2
        assert label_text(app, "#sample-label") == "Sample 1 / 3"

    drive(RolloutsApp(data_dir), scenario)


def test_typing_a_sample_number_jumps_there_and_clamps(write_step, data_dir) -> None:
    write_step("train", 0, [sample(i) for i in range(5)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await go_to(app, pilot, "4")
        assert (label_text(app, "#sample-label"), shown_index(app)) == ("Sample 4 / 5", 3)
        await go_to(app, pilot, "9999")
        assert (label_text(app, "#sample-label"), shown_index(app)) == ("Sample 5 / 5", 4)

    drive(RolloutsApp(data_dir), scenario)


def test_b_switches_to_eval_and_back(write_step, data_dir) -> None:
    steps(write_step, "train", (0, 1))
    steps(write_step, "eval", (0, 20), count=2)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "b")
        assert (app.session.bucket, step_of(app)) == ("eval", 20)
        assert app.query_one("#bucket", Select).value == "eval"
        assert shown_field(app, "rollout_id") == "20"
        assert label_text(app, "#sample-label") == "Sample 1 / 2"
        assert [label.split(" (")[0] for label in option_labels(app, "#step")] == [
            "Step 0",
            "Step 20",
        ]
        await press(app, pilot, "b")
        assert (app.session.bucket, step_of(app)) == ("train", 1)
        assert shown_field(app, "rollout_id") == "1"

    drive(RolloutsApp(data_dir), scenario)


def test_choosing_a_bucket_in_the_selector_opens_it_once(write_step, data_dir) -> None:
    steps(write_step, "train", (0, 1))
    steps(write_step, "eval", (0, 20), count=2)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        switched: list[str] = []
        switch_bucket = app.session.switch_bucket

        def spy(bucket: str) -> None:
            switched.append(bucket)
            switch_bucket(bucket)

        app.session.switch_bucket = spy  # type: ignore[method-assign]
        app.query_one("#bucket", Select).value = "eval"  # what picking it from the list does
        await pilot.pause(0.3)
        assert switched == ["eval"]  # once, not back and forth
        await settle(app, pilot)
        assert (app.session.bucket, step_of(app)) == ("eval", 20)
        assert shown_field(app, "rollout_id") == "20"

    drive(RolloutsApp(data_dir), scenario)


def test_data_dir_pointed_at_an_eval_folder_is_bucket_default(write_step, data_dir) -> None:
    steps(write_step, "eval", (0, 20, 40))

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert (app.session.bucket, step_of(app)) == ("default", 40)
        assert app.query_one("#bucket", Select).value == "default"
        assert shown_field(app, "rollout_id") == "40"

    drive(RolloutsApp(data_dir / "eval"), scenario)


# Sort, dataset and field selectors ---------------------------------------------------------

REWARDS = [0.5, math.nan, 2.0, None, -1.0, 2.0, 1.0]  # None: no "reward" key at all


def reward_records() -> list[dict[str, Any]]:
    """One sample per reward; None leaves the key out."""
    rewards = enumerate(REWARDS)
    return [{k: v for k, v in sample(i, reward=r).items() if v is not None} for i, r in rewards]


def reward_order(descending: bool) -> list[int]:
    """Stable order by reward; NaN and missing rewards last whichever the direction."""
    present = {i: r for i, r in enumerate(REWARDS) if r is not None and not math.isnan(r)}
    absent = [i for i in range(len(REWARDS)) if i not in present]
    return sorted(present, key=present.__getitem__, reverse=descending) + absent


@pytest.mark.parametrize("descending", [True, False], ids=["desc", "asc"])
def test_sort_by_reward_puts_nan_and_missing_last(write_step, data_dir, descending) -> None:
    records = reward_records()
    write_step("train", 0, records)
    numeric = sorted({k for r in records for k, v in r.items() if type(v) in (int, float)})
    key = f"reward:{'desc' if descending else 'asc'}"
    order = reward_order(descending)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        modes = [f"{column} {o}" for column in numeric for o in ("asc", "desc")]
        assert option_labels(app, "#sort") == ["file order", *modes]
        app.query_one("#sort", Select).value = key
        await pilot.pause()
        assert app.session.selection.sort_key == key
        assert shown_index(app) == 0  # the sample being read stays, at its new place
        assert label_text(app, "#sample-label") == f"Sample {order.index(0) + 1} / {len(order)}"
        await go_to(app, pilot, "1")
        assert await walk(app, pilot) == order

    drive(RolloutsApp(data_dir), scenario)


def test_sort_carries_over_to_a_new_step_which_starts_at_its_top(write_step, data_dir) -> None:
    for step in (0, 1):
        write_step("train", step, [sample(i, reward=r) for i, r in enumerate(REWARDS)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        app.query_one("#sort", Select).value = "reward:desc"
        await pilot.pause()
        await press(app, pilot, "P")  # a step not opened before
        assert step_of(app) == 0
        assert app.query_one("#sort", Select).value == "reward:desc"
        assert label_text(app, "#sample-label") == f"Sample 1 / {len(REWARDS)}"
        assert await walk(app, pilot) == reward_order(descending=True)  # null is missing too

    drive(RolloutsApp(data_dir), scenario)


def test_dataset_filter_shows_only_that_datasets_samples(write_step, data_dir) -> None:
    names = ["math", "代码", "math", "代码", "math"]
    write_step("eval", 0, [sample(i, dataset=d) for i, d in enumerate(names)])
    write_step("train", 0, [sample(i) for i in range(2)])
    wanted = [i for i, d in enumerate(names) if d == "代码"]

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert app.query_one("#dataset", Select).display is False  # train: no datasets
        await press(app, pilot, "b")
        assert app.query_one("#dataset", Select).display is True
        assert option_labels(app, "#dataset") == ["all datasets", *sorted(set(names))]
        app.query_one("#dataset", Select).value = "代码"
        await pilot.pause()
        assert app.session.dataset == "代码"
        assert label_text(app, "#sample-label") == f"Sample 1 / {len(wanted)}"
        assert await walk(app, pilot) == wanted
        app.query_one("#dataset", Select).value = ""
        await pilot.pause()
        assert label_text(app, "#sample-label").endswith(f"/ {len(names)}")

    drive(RolloutsApp(data_dir), scenario)


def test_dataset_filter_is_kept_on_a_step_that_has_the_dataset(write_step, data_dir) -> None:
    names = ["math", "代码", "math", "代码"]
    for step in (0, 20):
        write_step("eval", step, [sample(i, dataset=d) for i, d in enumerate(names)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        app.query_one("#dataset", Select).value = "代码"
        await pilot.pause()
        await press(app, pilot, "P")  # step 0 has 代码 too, and was not opened before
        assert step_of(app) == 0
        assert app.session.dataset == "代码"
        assert app.query_one("#dataset", Select).value == "代码"
        assert label_text(app, "#sample-label") == f"Sample 1 / {names.count('代码')}"

    drive(RolloutsApp(data_dir / "eval"), scenario)


def test_field_filter_hides_a_field_and_select_all_brings_it_back(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert {"response", "answer 0"} <= set(view_text(app).splitlines())
        app.query_one("#fields", SelectionList).deselect("response")
        await pilot.pause()
        lines = set(view_text(app).splitlines())
        assert not {"response", "answer 0"} & lines
        assert {"prompt", "response_length: 10"} <= lines  # the other fields stay
        await pilot.click("#fields-all")
        await pilot.pause()
        assert {"response", "answer 0"} <= set(view_text(app).splitlines())

    drive(RolloutsApp(data_dir), scenario)


def test_field_list_is_the_union_of_keys_over_the_step(write_step, data_dir) -> None:
    records = [sample(0), sample(1), sample(2, judge_notes="late key")]
    write_step("train", 0, records)
    union = list(dict.fromkeys(k for r in records for k in r))

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert shown_index(app) == 0  # the first sample, which has no judge_notes
        fields = app.query_one("#fields", SelectionList)
        assert [fields.get_option_at_index(i).value for i in range(fields.option_count)] == union

    drive(RolloutsApp(data_dir), scenario)


# Find and the other keys -------------------------------------------------------------------


def highlighted(app: RolloutsApp, style: str) -> list[int]:
    content = app.query_one("#view", Static).content
    assert isinstance(content, Text)
    return [span.start for span in content.spans if str(span.style) == style]


def test_find_counts_matches_steps_through_them_and_wraps(write_step, data_dir) -> None:
    prompt = "<|im_start|>user\nA Cat sat.<|im_end|>\n<|im_start|>assistant\n"
    response = "cat, CAT and concatenate."
    write_step("train", 0, [sample(0, prompt=prompt, response=response)])
    count = (prompt + response).lower().count("cat")

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "f")
        assert app.query_one("#findbar").display is True
        await press(app, pilot, *"cat")
        starts = [m.start() for m in re.finditer("cat", view_text(app), re.IGNORECASE)]
        assert len(starts) == count
        assert label_text(app, "#find-count") == f"1/{count}"
        assert highlighted(app, "black on yellow") == [starts[0]]
        assert highlighted(app, "reverse") == starts[1:]
        await press(app, pilot, "enter")
        assert label_text(app, "#find-count") == f"2/{count}"
        assert highlighted(app, "black on yellow") == [starts[1]]
        await press(app, pilot, *["enter"] * (count - 1))
        assert label_text(app, "#find-count") == f"1/{count}"  # wrapped around
        app.query_one("#pane").focus()  # Enter is also a key of the app, away from the bar
        await press(app, pilot, "enter")
        assert label_text(app, "#find-count") == f"2/{count}"
        await press(app, pilot, "escape")
        assert app.query_one("#findbar").display is False
        assert label_text(app, "#find-count") == ""
        assert highlighted(app, "black on yellow") == highlighted(app, "reverse") == []
        await press(app, pilot, "f", "q")  # Esc cleared the query: it is just "q" now
        assert label_text(app, "#find-count") == "no match"

    drive(RolloutsApp(data_dir), scenario)


def test_j_k_g_shift_g_scroll_the_pane(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0, response="\n".join(f"line {i}" for i in range(300)))])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        pane = app.query_one("#pane")
        assert pane.scroll_y == 0 and pane.max_scroll_y > 0
        await press(app, pilot, "j")
        first_page = pane.scroll_y
        assert first_page > 0
        await press(app, pilot, "j")
        second_page = pane.scroll_y
        assert second_page > first_page
        await press(app, pilot, "k")
        # Back up a page: textual pages by the visible height, which a scrollbar that came or
        # went since (the pane re-rendered when the columns were ready) can change by a row.
        assert second_page > pane.scroll_y and abs(pane.scroll_y - first_page) <= 1
        await press(app, pilot, "G")
        assert pane.scroll_y == pane.max_scroll_y
        await press(app, pilot, "g")
        assert pane.scroll_y == 0

    drive(RolloutsApp(data_dir), scenario)


def test_s_switches_between_plain_text_and_table(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        plain = view_text(app)
        await press(app, pilot, "s")
        assert app.table_mode is True
        table = app.query_one("#view", Static).content
        assert isinstance(table, Table)
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(table)
        rows = [line.strip("│ ") for line in console.export_text().splitlines()]
        assert any(re.fullmatch(r"response\s+│\s+answer 0", row) for row in rows), rows
        await press(app, pilot, "s")
        assert app.table_mode is False
        assert view_text(app) == plain

    drive(RolloutsApp(data_dir), scenario)


def test_r_picks_up_a_new_step_and_a_grown_file(write_step, data_dir) -> None:
    path = write_step("train", 1, [sample(i, rollout_id=1) for i in range(3)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        await press(app, pilot, "n")
        write_step("train", 5, [sample(i, rollout_id=5) for i in range(4)])
        with path.open("a") as grown:
            grown.writelines(json.dumps(sample(i, rollout_id=1)) + "\n" for i in (3, 4))
        await press(app, pilot, "r")
        assert step_of(app) == 1  # stays on the step and the sample being read
        assert (label_text(app, "#sample-label"), shown_index(app)) == ("Sample 2 / 5", 1)
        assert "refreshed: 5 samples" in label_text(app, "#status")
        labels = [label.split(" (")[0] for label in option_labels(app, "#step")]
        assert labels == ["Step 1", "Step 5"]
        await press(app, pilot, "N")
        assert step_of(app) == 5
        assert label_text(app, "#sample-label") == "Sample 1 / 4"

    drive(RolloutsApp(data_dir), scenario)


def test_r_opens_the_first_step_of_a_run_that_had_none(data_dir) -> None:
    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert "no step files yet" in view_text(app)
        (data_dir / "0.jsonl").write_text(json.dumps(sample(0)) + "\n")
        await press(app, pilot, "r")
        assert step_of(app) == 0
        assert shown_index(app) == 0
        assert option_labels(app, "#step")[0].startswith("Step 0 ")

    drive(RolloutsApp(data_dir), scenario)


def test_r_recovers_when_an_empty_rollout_result_gets_its_train_bucket(tmp_path) -> None:
    """Started on an empty rollout_result/ (bucket `default`), `r` once train/3.jsonl appears
    must open it, not say "no bucket 'default'" until a restart."""
    rollout_result = tmp_path / "save" / "rollout_result"
    rollout_result.mkdir(parents=True)

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert "no step files yet" in view_text(app)
        (rollout_result / "train").mkdir()
        lines = [json.dumps(sample(i, rollout_id=3)) + "\n" for i in range(2)]
        (rollout_result / "train" / "3.jsonl").write_text("".join(lines))
        await press(app, pilot, "r")
        assert "refresh failed" not in label_text(app, "#status")
        assert app.session.bucket == "train"
        assert step_of(app) == 3 and shown_index(app) == 0
        assert label_text(app, "#sample-label") == "Sample 1 / 2"
        assert option_labels(app, "#bucket") == ["train"]
        (rollout_result / "eval").mkdir()
        (rollout_result / "eval" / "0.jsonl").write_text(json.dumps(sample(0)) + "\n")
        await press(app, pilot, "r")
        assert app.session.bucket == "train" and step_of(app) == 3
        assert option_labels(app, "#bucket") == ["train", "eval"]

    drive(RolloutsApp(rollout_result), scenario)


def test_r_on_a_data_dir_that_went_away_says_so_and_keeps_running(write_step, data_dir) -> None:
    import shutil

    write_step("train", 0, [sample(0)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        shutil.rmtree(data_dir)
        await press(app, pilot, "r")
        message = view_text(app) + label_text(app, "#status")
        assert "refresh failed: the data directory 'data' is missing or cannot be read" in message
        assert str(data_dir.parent) not in message
        data_dir.mkdir()
        write_step("train", 4, [sample(0), sample(1)])
        await press(app, pilot, "r")
        assert step_of(app) == 4

    drive(RolloutsApp(data_dir), scenario)


def test_q_quits(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert app.return_code is None
        await pilot.press("q")
        await pilot.pause()
        assert app.return_code == 0

    drive(RolloutsApp(data_dir), scenario)


def test_empty_step_shows_a_message_and_the_app_keeps_going(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0)])
    write_step("train", 3, [])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert step_of(app) == 3
        assert "no samples" in view_text(app)
        await press(app, pilot, "n", "s", "s")  # keys still work on an empty step
        assert "no samples" in view_text(app)
        await press(app, pilot, "P")
        assert (step_of(app), shown_index(app)) == (0, 0)

    drive(RolloutsApp(data_dir), scenario)


def test_malformed_line_is_reported_and_the_others_are_shown(write_step, data_dir) -> None:
    write_step("train", 0, [sample(0), '{"sample_index": 1, "prompt": \n', sample(2), sample(3)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        status = label_text(app, "#status")
        assert "unreadable" in status and "line 2" in status
        assert label_text(app, "#sample-label") == "Sample 1 / 3"
        assert await walk(app, pilot) == [0, 2, 3]

    drive(RolloutsApp(data_dir), scenario)


# Rendering ---------------------------------------------------------------------------------

PAD_PROMPT = (
    "<|im_start|>user\n<|vision_start|>"
    + "<|image_pad|>" * 256
    + "<|vision_end|>What is shown?<|im_end|>\n<|im_start|>assistant\n"
)


@pytest.mark.parametrize(
    ("mask", "shown", "not_shown"),
    [
        (DEFAULT_MASK_STR, "[<|image_pad|> \u00d7256]", "<|image_pad|><|image_pad|>"),
        ("", "<|image_pad|>" * 256, "\u00d7"),
    ],
    ids=["default-mask", "no-mask"],
)
def test_pad_run_collapses_to_one_marker_unless_the_mask_is_off(
    write_step, data_dir, mask, shown, not_shown
) -> None:
    write_step("train", 0, [sample(0, prompt=PAD_PROMPT)])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert view_text(app).count(shown) == 1
        assert not_shown not in view_text(app)

    drive(RolloutsApp(data_dir, mask), scenario)


SNAPSHOT_RECORD = {
    "rollout_id": 7,
    "sample_index": 0,
    "prompt": "<|im_start|>system\nBe brief.<|im_end|>\n"
    "<|im_start|>user\nAdd 2 and 2.<|im_end|>\n<|im_start|>assistant\n",
    "response": "<think>\nEasy.\n</think>\n"
    '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 2}}</tool_call><|im_end|>',
    "reward": 1.0,
    "status": "completed",
    "label": "4",
}
# Written by hand from the record: the info card, then each text under its heading. The think
# block is shown without the line breaks around its content (the raw text keeps them); the tool
# call is pretty-printed; the response has no turn of its own, so its <|im_end|> is a plain token.
SNAPSHOT = r"""
Sample Info (line 1)
rollout_id: 7
sample_index: 0
reward: 1
status: completed

prompt
SYSTEM  <|im_start|>system
Be brief.
<|im_end|>

USER  <|im_start|>user
Add 2 and 2.
<|im_end|>

ASSISTANT  <|im_start|>assistant

response
┌ think
Easy.
└ end think

┌ tool call
{
  "name": "add",
  "arguments": {
    "a": 2,
    "b": 2
  }
}
└ end tool call
<|im_end|>

label
4
"""


def test_plain_view_with_think_and_tool_call_matches_the_snapshot(write_step, data_dir) -> None:
    write_step("train", 7, [SNAPSHOT_RECORD])

    async def scenario(app: RolloutsApp, pilot: Pilot) -> None:
        assert view_text(app) == SNAPSHOT.strip("\n")

    drive(RolloutsApp(data_dir, DEFAULT_MASK_STR), scenario)


# The command -------------------------------------------------------------------------------


def test_visualize_tui_without_textual_says_how_to_install(data_dir, monkeypatch) -> None:
    monkeypatch.setattr(rollouts.tui, "available", lambda: False)
    with pytest.raises(CommandError) as raised:
        call_command("visualize", str(data_dir), "--tui")
    assert str(raised.value) == rollouts.tui.INSTALL_HINT
    assert "\n" not in str(raised.value)
