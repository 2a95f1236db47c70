"""Issue 26, item 9, on the trends page in real headless Chromium: a TensorBoard directory with
more event files than are read (10,001, one per restart) says so in the page's note."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from rollouts.store.scalars.discovery import MAX_EVENT_FILES
from tests.support.browser import Tab, write_step_file
from tests.support.events import record, scalar_event
from tests.support.servers import run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STARTED = 1_700_000_000
READ_S = 120  # bound on the first read of 10,000 small files (about 3 s on a busy 2-core box)


def test_the_trends_note_says_which_event_files_were_read(tmp_path: Path, tab: Tab) -> None:
    save = tmp_path / "save"
    for step in range(3):
        write_step_file(save / "rollout_result", "train", step, [{"response": "a", "reward": 1.0}])
    board = save / "tensorboard_log"
    board.mkdir()
    for k in range(MAX_EVENT_FILES + 1):
        path = board / f"events.out.tfevents.{STARTED + k}.host.{k}"
        path.write_bytes(record(scalar_event("train/loss", k, 1.0, STARTED + k)))
    with run_visualize(save / "rollout_result") as server:
        page = tab.page
        page.goto(server.url("/train/trends/"))
        note = page.locator("#rv-trends-scalars")
        expect(note).to_contain_text(
            "Read the newest 10,000 of 10,001 event files", timeout=READ_S * 1000
        )
        expect(note).to_contain_text("10000 event files")
        tab.assert_clean()
