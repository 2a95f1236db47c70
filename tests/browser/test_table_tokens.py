"""The step's table and the token view in real Chromium, on a viewer started with
`--tokenizer` (a tokenizer trained here, on the spot): rows moved with ↑/↓ and j/k, Enter opens
the sample in the table's order (→ there follows it), `l` comes back to the row, ←/→ change
pages, the table works without script; the log-prob strip and the coloured token text."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import Tab, url_path, url_query, write_step_file
from tests.support.data import sample
from tests.support.servers import ServerProcess, run_visualize
from tests.support.tokenizer import encode, train_tokenizer

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 3
REWARDS = [0.2, 0.9, 0.5, 0.8, 0.1]  # by reward, descending: positions 1, 3, 2, 0, 4
BY_REWARD = [1, 3, 2, 0, 4]
TEXT = "the cat <b> ate"


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    base = tmp_path_factory.mktemp("table")
    tokenizer = train_tokenizer(base / "tokenizer.json")
    ids = encode(tokenizer, TEXT)
    lps = [-0.01] * len(ids)
    lps[1] = -6.0  # " cat": below 1 %
    tokens = {"response_token_ids": ids, "response_rollout_log_probs": lps}
    records = [
        sample(
            i, reward=r, response=TEXT if i == 0 else f"answer {i}", **(tokens if i == 0 else {})
        )
        for i, r in enumerate(REWARDS)
    ]
    write_step_file(base / "rollout_result", "train", STEP, records)
    with run_visualize(base / "rollout_result", "--tokenizer", str(tokenizer)) as server:
        yield server


def focused_row(page: Page) -> int:
    """The position of the row holding the focus (-1: none)."""
    return int(
        page.evaluate(
            "() => { const r = document.activeElement && document.activeElement.closest('tr');"
            " return r && r.dataset.position ? Number(r.dataset.position) : -1; }"
        )
    )


def test_rows_move_with_the_keys_and_enter_opens_the_sample_in_the_table_order(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(f"/train/{STEP}/table/?sort=reward&order=desc"))
    rows = page.locator("#rv-sample-table tbody tr")
    assert [int(r.get_attribute("data-position") or -1) for r in rows.all()] == BY_REWARD
    page.keyboard.press("j")
    assert focused_row(page) == BY_REWARD[0]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("k")
    assert focused_row(page) == BY_REWARD[1]
    expect(page.locator(f"#rv-row-{BY_REWARD[1]}")).to_have_class(re.compile("rv-row-focus"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/sample/{BY_REWARD[1]}/"))
    assert url_query(page) == {"sort": ["reward"], "order": ["desc"]}
    page.keyboard.press("ArrowRight")  # the sample page follows the table's order
    expect(page.locator("#rv-sample")).to_have_attribute("data-position", str(BY_REWARD[2]))
    page.keyboard.press("l")  # back to the table, at this sample's row, with the focus on it
    page.wait_for_url(re.compile(r"/table/"))
    assert url_query(page)["at"] == [str(BY_REWARD[2])]
    expect(page.locator(f"#rv-row-{BY_REWARD[2]}")).to_have_attribute("aria-current", "true")
    assert focused_row(page) == BY_REWARD[2]
    tab.assert_clean()


def test_arrow_keys_change_pages_and_the_keys_dialog_lists_the_table_keys(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(f"/train/{STEP}/table/?page_size=2"))
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(r"page=2"))
    expect(page.locator("#rv-sample-table tbody tr")).to_have_count(2)
    assert page.locator("#rv-sample-table tbody tr").first.get_attribute("data-position") == "2"
    page.keyboard.press("ArrowLeft")
    page.wait_for_url(lambda url: "page=" not in url)
    page.keyboard.press("?")
    expect(page.locator("#rv-keys")).to_be_visible()
    expect(page.locator('#rv-keys tr[data-key="table Enter"]')).to_be_visible()
    expect(page.locator('#rv-keys tr[data-key="l"]')).to_be_visible()
    tab.assert_clean()


def test_the_table_sorts_filters_and_opens_rows_without_script(
    viewer: ServerProcess, browser: Browser
):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(viewer.url(f"/train/{STEP}/table/"))
        page.locator('th[data-sort="reward"] a').click()  # first click: the best on top
        expect(page.locator('th[data-sort="reward"]')).to_have_attribute("aria-sort", "descending")
        rows = page.locator("#rv-sample-table tbody tr")
        assert [int(r.get_attribute("data-position") or -1) for r in rows.all()] == BY_REWARD
        page.locator("#rv-table-status").select_option("completed")
        page.locator("#rv-table-apply").click()
        assert url_query(page) == {"sort": ["reward"], "order": ["desc"], "status": ["completed"]}
        page.locator(f"#rv-row-{BY_REWARD[0]} a.rv-row-link").click()
        assert url_path(page).endswith(f"/train/{STEP}/sample/{BY_REWARD[0]}/")
    finally:
        context.close()


def test_the_token_strip_and_the_tokens_coloured_by_probability(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(f"/train/{STEP}/sample/0/"))
    strip = page.locator("#rv-token-strip")
    expect(strip).to_be_visible()  # the card, loaded by the page's script after the page
    expect(page.locator("#rv-tokens.rv-tokens-later")).to_have_count(0)
    box = strip.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 20
    expect(strip.locator("rect.rv-strip-lp4")).to_have_count(1)
    text = page.locator("#rv-token-text")
    expect(text).to_be_visible()
    expect(text).to_have_text(TEXT)  # the markup in the text is text, never an element
    assert text.locator("b").count() == 0
    low = text.locator("span.rv-tok-lp4")
    expect(low).to_have_text(" cat")
    colour = "el => getComputedStyle(el).backgroundColor"
    sure = text.locator("span.rv-tok-lp0").first.evaluate(colour)
    assert low.evaluate(colour) not in (sure, "rgba(0, 0, 0, 0)")
    expect(page.locator("#rv-token-lows tbody tr").first).to_have_attribute("data-position", "1")
    tab.assert_clean()
