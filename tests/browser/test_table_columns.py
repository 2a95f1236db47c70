"""The table's answer column, advantage and column chooser in real Chromium: each row's ✓/✗ is
the verdict its sample page shows, an advantage carries its sign in the text, and a column
ticked in the chooser is shown at once and stays after a reload (it is in the URL)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.browser import Tab, url_query
from tests.support.data import sample
from tests.support.servers import ServerProcess

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 2
THINK = "<think>\nOkay, let me think about this carefully. " + "Hmm. " * 40 + "</think>\n\n"
# (reward, response, label); one group: its mean reward is 0.5
ROWS = [
    (1.0, THINK + "Adding them gives \\boxed{12}.<|im_end|>", "12"),
    (0.0, THINK + "Adding them gives \\boxed{13}.<|im_end|>", "12"),
    (1.0, THINK + "So <answer>0.5</answer>", "\\frac{1}{2}"),
    (0.0, THINK + "I am not sure.", "12"),
]
SERVED = {
    ("train", STEP): [
        sample(i, reward=r, response=text, label=label, group_index=0, kl=0.01 * (i + 1))
        for i, (r, text, label) in enumerate(ROWS)
    ]
}
EXPECTED = {0: "yes", 1: "no", 2: "yes", 3: "unknown"}  # from the records: 12, 13, 1/2, none


def table_url(viewer: ServerProcess, query: str = "") -> str:
    return viewer.url(f"/train/{STEP}/table/{query}")


def test_each_rows_check_is_its_sample_pages_verdict(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(table_url(viewer))
    for position, expected in EXPECTED.items():
        cell = page.locator(f'#rv-row-{position} td[data-field="answer"]')
        expect(cell).to_have_attribute("data-match", expected)
        mark = {"yes": "\u2713", "no": "\u2717"}.get(expected)
        if mark:
            expect(cell.locator(".rv-answer-mark")).to_have_text(mark)
    # the preview skips the reasoning and shows the answer's sentence
    expect(page.locator('#rv-row-0 td[data-field="response"]')).to_have_text(
        "Adding them gives \\boxed{12}."
    )
    expect(page.locator('#rv-row-0 td[data-field="advantage"]')).to_have_text("+0.5")
    expect(page.locator('#rv-row-1 td[data-field="advantage"]')).to_have_text("-0.5")
    for position in (0, 1, 2):
        page.goto(viewer.url(f"/train/{STEP}/sample/{position}/"))
        verdict = page.locator("#rv-answer-check")
        expect(verdict).to_have_attribute("data-match", EXPECTED[position])


def test_a_column_ticked_in_the_chooser_is_shown_and_kept_after_a_reload(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(table_url(viewer, "?sort=reward&order=desc"))
    expect(page.locator('th[data-sort="kl"]')).to_have_count(0)
    page.locator("#rv-col-chooser summary").click()
    with page.expect_navigation():
        page.locator('#rv-col-chooser input[value="kl"]').check()
    expect(page.locator('th[data-sort="kl"]')).to_have_count(1)
    query = url_query(page)
    assert query["cols"] == ["reward,advantage,status,response_length,group_index,kl"]
    assert (query["sort"], query["order"]) == (["reward"], ["desc"])  # the sort is kept
    page.reload()
    expect(page.locator('th[data-sort="kl"]')).to_have_count(1)
    expect(page.locator('#rv-col-chooser input[value="kl"]')).to_be_checked()
    expect(page.locator('#rv-row-3 td[data-field="kl"]')).to_have_text("0.04")
    with page.expect_navigation():  # a filter keeps the columns
        page.locator("#rv-table-status").select_option("completed")
    assert url_query(page)["cols"] == ["reward,advantage,status,response_length,group_index,kl"]
    assert url_query(page)["status"] == ["completed"]
    # unticking a default column drops it, and the rest keep their order
    page.locator("#rv-col-chooser summary").click()
    with page.expect_navigation():
        page.locator('#rv-col-chooser input[value="status"]').uncheck()
    headers = page.locator("#rv-sample-table thead th").evaluate_all(
        "ths => ths.map(th => th.dataset.sort || 'response')"
    )
    assert headers == [
        "position",
        "answer",
        "reward",
        "advantage",
        "response_length",
        "group_index",
        "kl",
        "flags",  # always shown, after the chosen columns
        "response",
    ]
