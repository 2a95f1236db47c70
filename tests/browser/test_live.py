"""Live updates in a real headless Chromium while a test plays the run writing its step files.

Each test gets its own data dir and server, writes the steps it starts from, opens a page, then
writes more (new steps, new lines, half a line) and waits for the page's poll to show it. The
servers poll every FAST_POLL_MS (RELAX_POLL_MS), and every timeout is derived from it.
Expected steps, counts and texts come from what the test wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from statistics import median
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import (
    DEFAULT_POLL_MS,
    FAST_POLL_ENV,
    FAST_POLL_MS,
    Tab,
    intervals,
    live_timeout_ms,
    mark_document,
    position_text,
    same_document,
    url_path,
    wait_for_poll_starts,
    wait_for_polls,
    write_step_file,
)
from tests.support.data import relax_line, sample
from tests.support.servers import ServerProcess, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

POLL_MS = FAST_POLL_MS  # the servers here tell live.js to poll this often
LIVE_TIMEOUT_MS = live_timeout_ms(POLL_MS)  # a poll, what it sets off, and slack
BUCKET = "train"


@pytest.fixture(name="root")
def root_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    (root / BUCKET).mkdir(parents=True)
    return root


@pytest.fixture(name="server")
def server_fixture(root: Path) -> Iterator[ServerProcess]:
    with run_visualize(root, env=FAST_POLL_ENV) as server:
        yield server


def record(step: int, i: int, **extra: Any) -> dict[str, Any]:
    prompt = f"<|im_start|>user\nquestion {i} [live step {step} sample {i}]<|im_end|>\n"
    return sample(i, prompt=prompt + "<|im_start|>assistant\n", **extra)


def write_step(root: Path, step: int, count: int) -> Path:
    return write_step_file(root, BUCKET, step, [record(step, i) for i in range(count)])


def append(path: Path, data: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(data)


def step_url(step: int) -> str:
    return f"/{BUCKET}/{step}/"


def sample_url(step: int, position: int) -> str:
    return f"/{BUCKET}/{step}/sample/{position}/"


def selector_steps(page: Page) -> list[int]:
    return page.eval_on_selector_all(
        "#rv-step option[data-step]", "options => options.map(o => Number(o.dataset.step))"
    )


def size_text(path: Path) -> str:
    size = path.stat().st_size
    assert size < 1000, "the expected text below assumes a size in bytes"
    return f"{size} B"


def prompt_text(page: Page) -> str:
    return page.locator('section.rv-section[data-field="prompt"] .rv-raw').evaluate(
        "el => el.textContent"
    )


def follow(page: Page) -> None:
    """Tick "Follow latest" by a click, as a reader would."""
    box = page.locator("#rv-follow")
    expect(box).not_to_be_checked()
    box.click()
    expect(box).to_be_checked()


# -- new steps -------------------------------------------------------------------------------
def test_new_step_joins_the_selector_in_numeric_order_without_a_reload(
    root: Path, server: ServerProcess, tab: Tab
):
    for step in (2, 9):
        write_step(root, step, 2)
    page = tab.page
    page.goto(server.url(step_url(9)))
    assert selector_steps(page) == [2, 9]
    mark_document(page)

    path = write_step(root, 10, 3)  # as text "10" < "2": only numeric order puts it last
    expect(page.locator("#rv-step option[data-step]")).to_have_count(3, timeout=LIVE_TIMEOUT_MS)
    assert selector_steps(page) == [2, 9, 10]
    added = page.locator('#rv-step option[data-step="10"]')
    expect(added).to_have_text(f"Step 10 ({size_text(path)})")
    expect(added).to_have_attribute("data-size-bytes", str(path.stat().st_size))
    expect(added).to_have_attribute("data-name", "10")
    assert url_path(page) == step_url(9)
    assert (added.get_attribute("value") or "").endswith(step_url(10))
    expect(page.locator("#rv-step")).to_have_value(step_url(9))  # still the shown step
    expect(page.locator("#rv-header")).to_have_attribute("data-latest-step", "10")
    assert same_document(page)

    # The option added live navigates like the server's own.
    page.locator("#rv-step").select_option(value=added.get_attribute("value"))
    page.wait_for_url(re.compile(re.escape(step_url(10)) + "$"))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, 3))
    tab.assert_clean()


# -- follow latest ---------------------------------------------------------------------------
def test_without_follow_a_new_step_only_joins_the_selector_and_ticking_follow_goes_there(
    root: Path, server: ServerProcess, tab: Tab
):
    write_step(root, 2, 2)
    page = tab.page
    page.goto(server.url(step_url(2) + "?status=completed"))
    expect(page.locator("#rv-follow")).not_to_be_checked()
    mark_document(page)

    write_step(root, 3, 2)
    expect(page.locator('#rv-step option[data-step="3"]')).to_have_count(1, timeout=LIVE_TIMEOUT_MS)
    wait_for_polls(page, 2, POLL_MS)  # the poll that added it, and one more, would have moved
    assert url_path(page) == step_url(2)
    assert same_document(page)

    follow(page)  # a newer step exists already: go there at once, keeping the filter
    page.wait_for_url(re.compile(re.escape(step_url(3)) + r"\?status=completed$"))
    expect(page.locator("#rv-follow")).to_be_checked()
    tab.assert_clean()


def test_follow_latest_moves_to_each_new_step_and_survives_the_reload(
    root: Path, server: ServerProcess, tab: Tab
):
    write_step(root, 4, 2)
    page = tab.page
    page.goto(server.url(sample_url(4, 1)))
    follow(page)  # already on the newest step: nowhere to go
    wait_for_polls(page, 2, POLL_MS)  # nor after a poll, with follow on
    assert url_path(page) == sample_url(4, 1)

    write_step(root, 5, 3)
    page.wait_for_url(re.compile(re.escape(step_url(5)) + "$"), timeout=LIVE_TIMEOUT_MS)
    expect(page.locator("#rv-position")).to_have_text(position_text(1, 3))
    expect(page.locator("#rv-follow")).to_be_checked()  # restored from localStorage

    # The stats page follows to the new step's stats page.
    page.goto(server.url(f"/{BUCKET}/5/stats/"))
    expect(page.locator("#rv-follow")).to_be_checked()
    write_step(root, 6, 1)
    page.wait_for_url(re.compile(re.escape(f"/{BUCKET}/6/stats/") + "$"), timeout=LIVE_TIMEOUT_MS)
    expect(page.locator("#rv-follow")).to_be_checked()
    tab.assert_clean()


# -- a growing step --------------------------------------------------------------------------
def test_growing_step_updates_the_counts_and_keeps_the_sample_being_read(
    root: Path, server: ServerProcess, tab: Tab
):
    count, more = 3, 2
    path = write_step(root, 7, count)
    page = tab.page
    page.goto(server.url(sample_url(7, count - 1)))  # the last sample: no next one yet
    expect(page.locator("#rv-position")).to_have_text(position_text(count, count))
    expect(page.locator("#rv-next")).to_have_attribute("aria-disabled", "true")
    before = prompt_text(page)
    assert f"[live step 7 sample {count - 1}]" in before
    mark_document(page)

    append(path, "".join(relax_line(record(7, i)) for i in range(count, count + more)))
    total = count + more
    expect(page.locator("#rv-position")).to_have_text(
        position_text(count, total), timeout=LIVE_TIMEOUT_MS
    )
    expect(page.locator("#rv-jump-count")).to_have_text(f"{count} / {total}")
    expect(page.locator("#rv-jump-input")).to_have_attribute("max", str(total))
    expect(page.locator("article#rv-sample")).to_have_attribute("data-total", str(total))
    expect(page.locator("#rv-next")).not_to_have_attribute("aria-disabled", "true")
    expect(page.locator("#rv-next")).to_have_attribute("href", re.compile(sample_url(7, count)))
    assert prompt_text(page) == before
    assert url_path(page) == sample_url(7, count - 1)
    assert same_document(page)

    # The link that appeared works like any other: the next sample, without a reload.
    page.locator("#rv-next").click()
    expect(page.locator("#rv-position")).to_have_text(position_text(count + 1, total))
    assert f"[live step 7 sample {count}]" in prompt_text(page)
    assert same_document(page)
    tab.assert_clean()


def test_growing_step_refresh_never_reuses_the_fragment_navigation_prefetched(
    root: Path, server: ServerProcess, tab: Tab
):
    count, more = 3, 2
    path = write_step(root, 12, count)
    page = tab.page
    page.goto(server.url(sample_url(12, 0)))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, count))
    mark_document(page)
    # The next sample comes from viewer.js's prefetched fragment: it is in the prefetch map now.
    page.keyboard.press("ArrowRight")
    expect(page.locator("#rv-position")).to_have_text(position_text(2, count))
    assert url_path(page) == sample_url(12, 1)

    append(path, "".join(relax_line(record(12, i)) for i in range(count, count + more)))
    expect(page.locator("#rv-position")).to_have_text(
        position_text(2, count + more), timeout=LIVE_TIMEOUT_MS
    )
    expect(page.locator("article#rv-sample")).to_have_attribute("data-total", str(count + more))
    assert same_document(page)
    tab.assert_clean()


def test_half_written_last_line_is_a_note_not_an_error_until_it_is_complete(
    root: Path, server: ServerProcess, tab: Tab
):
    count = 2
    path = write_step(root, 8, count)
    page = tab.page
    page.goto(server.url(sample_url(8, 0)))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, count))
    before = prompt_text(page)
    mark_document(page)

    line = relax_line(record(8, count))
    half = len(line) // 2
    json.loads(line)  # whole, the line parses; its first half must not
    with pytest.raises(json.JSONDecodeError):
        json.loads(line[:half])
    append(path, line[:half])
    tail_note = page.locator("#rv-main > .rv-note", has_text="still being written")
    expect(tail_note).to_be_visible(timeout=LIVE_TIMEOUT_MS)
    expect(tail_note).to_contain_text(f"{len(line[:half].encode())} bytes")
    expect(page.locator(".rv-error")).to_have_count(0)
    expect(page.locator(".rv-warning")).to_have_count(0)
    expect(page.locator("#rv-position")).to_have_text(position_text(1, count))

    append(path, line[half:])
    expect(page.locator("#rv-position")).to_have_text(
        position_text(1, count + 1), timeout=LIVE_TIMEOUT_MS
    )
    expect(tail_note).to_have_count(0)
    expect(page.locator(".rv-error")).to_have_count(0)
    expect(page.locator(".rv-warning")).to_have_count(0)
    assert prompt_text(page) == before
    assert same_document(page)
    tab.assert_clean()


def test_stats_page_of_a_growing_step_offers_a_reload(root: Path, server: ServerProcess, tab: Tab):
    count = 2
    path = write_step(root, 11, count)
    page = tab.page
    page.goto(server.url(f"/{BUCKET}/11/stats/"))
    samples = page.locator('[data-stat="samples"]')
    expect(samples).to_have_text(str(count))
    notice = page.locator(".rv-grown-notice")
    expect(notice).to_have_count(0)
    mark_document(page)

    append(path, relax_line(record(11, count)))
    expect(notice).to_be_visible(timeout=LIVE_TIMEOUT_MS)
    expect(notice).to_have_attribute("role", "status")
    expect(notice).to_contain_text(f"{count + 1} records")
    expect(samples).to_have_text(str(count))  # the page itself does not change by itself
    assert same_document(page)

    notice.get_by_role("link", name="Reload").click()
    expect(samples).to_have_text(str(count + 1))
    expect(notice).to_have_count(0)
    assert not same_document(page)
    assert url_path(page) == f"/{BUCKET}/11/stats/"
    tab.assert_clean()


def test_empty_bucket_page_becomes_its_first_step_once_written(
    root: Path, server: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(server.url(f"/{BUCKET}/"))
    expect(page.locator("#rv-step")).to_have_count(0)  # no step yet, so no selector

    count = 2
    write_step(root, 0, count)
    page.wait_for_url(re.compile(re.escape(step_url(0)) + "$"), timeout=LIVE_TIMEOUT_MS)
    expect(page.locator("#rv-position")).to_have_text(position_text(1, count))
    assert selector_steps(page) == [0]
    tab.assert_clean()


# -- the poll itself -------------------------------------------------------------------------
def test_the_page_polls_at_the_servers_data_poll_ms(root: Path, server: ServerProcess, tab: Tab):
    write_step(root, 2, 2)
    page = tab.page
    page.goto(server.url(step_url(2)))
    expect(page.locator("#rv-header")).to_have_attribute("data-poll-ms", str(POLL_MS))
    assert POLL_MS * 3 < DEFAULT_POLL_MS  # so the pace below tells the setting from the default

    starts = wait_for_poll_starts(page, 8, POLL_MS)
    gaps = intervals(starts)
    # One poll is sent data-poll-ms after the previous answer: never sooner (a little timer
    # jitter aside), and, a poll answering in a few ms, at about that pace.
    assert min(gaps) >= 0.9 * POLL_MS, gaps
    assert median(gaps) < 3 * POLL_MS, gaps
    tab.assert_clean()
