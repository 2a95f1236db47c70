"""The sample page opens on the response (issue 29, item 4): one compact header of chips and
identity, each thing said once, and the prompt folded to its last user turn, the reader's
choice remembered across samples and reloads. Measured in Chromium at 1440x900 and on a phone
(390x844) on a long multi-turn prompt written below."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import Tab, blur, press_and_expect
from tests.support.data import sample

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

DESKTOP = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
FOLD_PX = 900  # the desktop window's height: the response must start above it


def turn(role: str, text: str) -> str:
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def lines(what: str, n: int) -> str:
    return "\n".join(f"{what} line {k}: words to fill the line up a little" for k in range(n))


# A system prompt, two few-shot exchanges and a long last question: 6 turns before the last
# user turn, each long enough that the whole prompt fills far more than a screen.
EARLIER = [
    ("system", lines("system", 30)),
    ("user", lines("example question", 20)),
    ("assistant", lines("example answer", 20)),
    ("user", lines("second example", 20)),
    ("assistant", lines("second answer", 20)),
    ("user", lines("third example", 20)),
]
LAST_QUESTION = lines("the question asked", 60)
LONG_PROMPT = (
    "".join(turn(role, text) for role, text in EARLIER)
    + turn("user", LAST_QUESTION)
    + "<|im_start|>assistant\n"
)
RECORDS = [
    sample(0, prompt=LONG_PROMPT, reward=0.5, status="completed", response="the response"),
    sample(1, prompt=LONG_PROMPT, reward=1.0, status="truncated", response="another one"),
    sample(2, reward=0.25, response="a one-turn prompt"),  # the mean is not 0.5
]
SERVED = {("train", 4): RECORDS}


def sample_path(position: int) -> str:
    return f"/train/4/sample/{position}/"


def response_top(page: Page) -> float:
    box = page.locator('section.rv-section[data-field="response"]').bounding_box()
    assert box is not None
    return box["y"]


def open_at(browser: Browser, viewport, url: str) -> Tab:
    context = browser.new_context(viewport=viewport)
    tab = Tab.attach(context.new_page())
    tab.page.goto(url)
    expect(tab.page.locator("article#rv-sample")).to_be_visible()
    return tab


def test_the_response_starts_above_the_fold(viewer, browser: Browser):
    tab = open_at(browser, DESKTOP, viewer.url(sample_path(0)))
    try:
        top = response_top(tab.page)
        assert top < FOLD_PX, top
        tab.assert_clean()
    finally:
        tab.close()
    phone = open_at(browser, PHONE, viewer.url(sample_path(0)))
    try:
        # On a phone the toolbar, chips and info card wrap; the response still starts within
        # two screens (it was at 1,769 px on a shorter prompt than this one).
        assert response_top(phone.page) < 2 * PHONE["height"]
        assert phone.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        phone.close()


HEADER_TEXT = """() => ['.rv-nav', '#rv-step-summary', '#rv-sample-head', '#rv-info']
    .map(s => document.querySelector(s)).filter(Boolean).map(e => e.innerText).join('\\n')"""


def test_reward_status_and_rank_are_each_said_once(viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_path(0)))
    # The page's header area: the toolbar's position, the step's line, the sample's header
    # and its info card (the selects' options and the jump bar at the foot left aside).
    header = page.evaluate(HEADER_TEXT)
    record = RECORDS[0]
    assert header.count(f"Sample 1 of {len(RECORDS)}") == 1
    assert len(re.findall(rf"\b{record['status']}\b", header)) == 1
    assert len(re.findall(r"\bstatus\b", header)) == 1
    chip = page.locator('.rv-reward-chip[data-field="reward"]')
    shown = chip.inner_text().split()[-1]
    assert float(shown) == record["reward"]
    assert len(re.findall(rf"(?<![\d.]){re.escape(shown)}(?![\d])", header)) == 1
    expect(page.locator('#rv-info .rv-info-row[data-field="reward"]')).to_have_count(0)
    expect(page.locator('#rv-info .rv-info-row[data-field="status"]')).to_have_count(0)
    expect(page.locator('#rv-info .rv-info-row[data-field="sample_index"]')).to_have_count(1)
    # One way of numbering the sample beside the rank: its line in the file.
    expect(page.locator("#rv-identity")).to_have_text(re.compile(r"^line 1 of train/4\.jsonl"))
    expect(page.locator("#rv-identity")).not_to_contain_text("sample_index")
    tab.assert_clean()


def test_the_prompt_opens_on_its_last_user_turn(viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_path(0)))
    prompt = page.locator('section.rv-section[data-field="prompt"]')
    earlier = prompt.locator("details.rv-earlier")
    summary = earlier.locator("summary")
    expect(summary).to_contain_text(f"Show the {len(EARLIER)} earlier turns")
    expect(earlier).not_to_have_attribute("open", "")
    # The box opens on the fold, not scrolled past it to the end of a long last question.
    expect(summary).to_be_in_viewport()
    expect(prompt.locator(".rv-text")).to_have_js_property("scrollTop", 0)
    formatted = prompt.locator(".rv-formatted")
    expect(formatted.get_by_text("system line 0:")).to_be_hidden()
    expect(formatted.get_by_text("the question asked line 59:")).to_be_visible()
    # The last user turn shows; each earlier one is inside the fold.
    expect(prompt.locator('.rv-formatted > .rv-turn[data-role="user"]')).to_have_count(1)
    expect(earlier.locator(".rv-turn")).to_have_count(len(EARLIER))
    tab.assert_clean()


def test_the_choice_to_show_earlier_turns_is_remembered(viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_path(0)))
    earlier = page.locator('section[data-field="prompt"] details.rv-earlier')
    summary = earlier.locator("summary")
    summary.focus()  # keyboard-reachable: a summary takes the focus, Enter opens it
    page.keyboard.press("Enter")
    expect(earlier).to_have_attribute("open", "")
    expect(summary).to_contain_text(f"Hide the {len(EARLIER)} earlier turns")
    expect(earlier.get_by_text("system line 0:")).to_be_visible()
    page.reload()
    expect(earlier).to_have_attribute("open", "")  # after a reload
    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RECORDS))  # the next sample, swapped in
    expect(earlier).to_have_attribute("open", "")
    earlier.locator("summary").click()  # closed again: remembered too
    expect(earlier).not_to_have_attribute("open", "")
    page.reload()
    expect(page.locator("details.rv-earlier")).not_to_have_attribute("open", "")
    tab.assert_clean()


def test_a_one_turn_prompt_has_no_fold(viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_path(2)))
    expect(page.locator('section[data-field="prompt"] .rv-turn[data-role="user"]')).to_be_visible()
    expect(page.locator("details.rv-earlier")).to_have_count(0)
    tab.assert_clean()
