"""The web viewer in a real headless Chromium against real `manage.py visualize` servers.

Every expectation comes from the records these tests write (orderings, ranks, line numbers,
counts), never from what the page printed before. Most tests share one server on one data
dir (`viewer`); a few need their own flags or must stop their server, and start one.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from rollouts.presentation import format_number
from tests.support.browser import (
    Tab,
    blur,
    is_poll_url,
    mark_document,
    position_text,
    press_and_expect,
    requests_so_far,
    same_document,
    save_screenshot,
    shown,
    url_path,
    url_query,
    wait_for_prefetch,
    walk_positions,
    write_step_file,
)
from tests.support.data import relax_line, sample
from tests.support.servers import ServerProcess, free_port, request, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

MISSING = object()  # a record without the field at all
NAN = float("nan")  # json.dumps writes it as a bare `NaN`, exactly as the Relax writer does

# -- the shared data dir: rollout_result/{train,eval}/<step>.jsonl ---------------------------
SMALL_STEPS = (0, 1, 2)
SORT_STEP = 3
EMPTY_STEP = 4
RENDER_STEP = 5
BAD_STEP = 6
XSS_STEP = 7
XSS_CATEGORY_STEP = 8
NAV_STEP = 10  # the latest: as text "10" < "8", so landing here proves numeric order
TRAIN_STEPS = sorted(
    (*SMALL_STEPS, SORT_STEP, EMPTY_STEP, RENDER_STEP, BAD_STEP, XSS_STEP, XSS_CATEGORY_STEP,
     NAV_STEP)
)  # fmt: skip
EVAL_STEPS = (0, 5)
NAV_SAMPLES = 5


def marker(bucket: str, step: int, i: int) -> str:
    """A string found in exactly one prompt of the data dir."""
    return f"[{bucket} step {step} sample {i}]"


def marked(bucket: str, step: int, i: int, **extra: Any) -> dict[str, Any]:
    prompt = f"<|im_start|>user\nquestion {i} {marker(bucket, step, i)}<|im_end|>\n"
    return sample(i, prompt=prompt + "<|im_start|>assistant\n", **extra)


SORT_REWARDS: list[Any] = [0.25, 0.75, NAN, 0.5, -1.0, MISSING, 1.5, 0.0, 0.125]
SORT_STATUSES = [
    "completed", "truncated", "completed", "aborted", "truncated",
    "completed", "completed", "truncated", "completed",
]  # fmt: skip


def sort_records() -> list[dict[str, Any]]:
    records = []
    for i, (reward, status) in enumerate(zip(SORT_REWARDS, SORT_STATUSES, strict=True)):
        record = marked("train", SORT_STEP, i, status=status, reward=reward)
        if reward is MISSING:
            del record["reward"]
        records.append(record)
    return records


SORT_RECORDS = sort_records()
EVAL_DATASETS = ["gsm8k", "math", "gsm8k", "aime", "math", "gsm8k"]
EVAL_RECORDS = [marked("eval", 5, i, dataset=d) for i, d in enumerate(EVAL_DATASETS)]
NAV_RECORDS = [marked("train", NAV_STEP, i) for i in range(NAV_SAMPLES)]

PAD_COUNT = 256
TOOL_CALL = {"name": "calculator", "arguments": {"expression": "6*7"}}
RICH_PROMPT = (
    "<|im_start|>system\nYou are a careful solver.<|im_end|>\n"
    "<|im_start|>user\nHow many dots? <|vision_start|>"
    + "<|image_pad|>" * PAD_COUNT
    + "<|vision_end|> [render prompt]<|im_end|>\n<|im_start|>assistant\n"
)
RICH_RESPONSE = (
    "<think>\nSix rows of seven dots. [render think]\n</think>\n"
    # One line, no spaces: the page must pretty-print it.
    f"<tool_call>\n{json.dumps(TOOL_CALL, separators=(',', ':'))}\n</tool_call><|im_end|>\n"
    "<|im_start|>user\n<tool_response>\n42\n</tool_response><|im_end|>\n"
    "<|im_start|>assistant\nThere are 42 dots. [render answer]<|im_end|>"
)
TRAJECTORY = [f"trajectory item {k}" for k in range(12)]
LONG_RESPONSE = "\n".join(f"line {k} of a long answer" for k in range(400)) + "\n[long end]"
RENDER_RECORDS = [
    sample(0, prompt=RICH_PROMPT, response=RICH_RESPONSE, label="42"),
    sample(1, response="", label=0, trajectory=TRAJECTORY),
    sample(2, response=LONG_RESPONSE, label=""),
]

BAD_INDEX = 1  # position of the unreadable record; no blank lines, so it is on line BAD_INDEX+1
BAD_LINES: list[Any] = [
    marked("train", BAD_STEP, 0),
    '{"prompt": "cut off in the middle\n',
    marked("train", BAD_STEP, 2),
]

XSS = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=2">',
    '"><svg onload="window.__xss=3">',
    "<img src=x onerror=alert(4)>",
]
XSS_TEXT = " ".join(XSS)
# Fragments free of quotes: JSON-ish renderings of arrays and objects may escape the quotes.
XSS_FRAGMENTS = ["<script>window.__xss=1</script>", "<img src=x onerror=", "<svg onload="]
XSS_RECORDS = [
    sample(
        0,
        prompt=f"<|im_start|>user\n{XSS_TEXT}<|im_end|>\n<|im_start|>assistant\n",
        response=XSS_TEXT,
        label=XSS_TEXT,
        trajectory=[XSS_TEXT, "plain item"],
        meta={XSS_TEXT: XSS_TEXT, "nested": {"inner": XSS_TEXT}},
    ),
]
XSS_CATEGORY_RECORDS = [sample(0, status=XSS_TEXT, dataset=XSS_TEXT), sample(1, dataset="plain")]


# What `viewer` (conftest.py) serves.
SERVED = {
    **{("train", step): [marked("train", step, i) for i in range(2)] for step in SMALL_STEPS},
    ("train", SORT_STEP): SORT_RECORDS,
    ("train", EMPTY_STEP): [],
    ("train", RENDER_STEP): RENDER_RECORDS,
    ("train", BAD_STEP): BAD_LINES,
    ("train", XSS_STEP): XSS_RECORDS,
    ("train", XSS_CATEGORY_STEP): XSS_CATEGORY_RECORDS,
    ("train", NAV_STEP): NAV_RECORDS,
    ("eval", 0): [marked("eval", 0, i) for i in range(2)],
    ("eval", 5): EVAL_RECORDS,
}


def test_the_sort_step_holds_the_writers_bare_nan_not_null():
    """What the sort tests below take for granted (write_step_file writes relax_line's lines)."""
    assert '"reward": NaN' in "".join(relax_line(r) for r in SORT_RECORDS)


# -- expectations from the records -----------------------------------------------------------
def numeric(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def expected_order(
    records: list[dict[str, Any]], column: str | None, *, desc: bool = False, **filters: str
) -> list[int]:
    """Positions in the viewer's ordering: filtered, stably sorted, missing/NaN last."""
    positions = [p for p, r in enumerate(records) if all(r.get(k) == v for k, v in filters.items())]
    if column is None:
        return positions
    numbers = {p: n for p in positions if (n := numeric(records[p].get(column))) is not None}
    missing = [p for p in positions if p not in numbers]
    present = sorted(numbers, key=numbers.__getitem__, reverse=desc)  # stable, also reversed
    return present + missing


def shown_number(value: Any) -> str:
    """The info card's rendering of a number: the number rule (tests/js/numbers.cases.json)."""
    return format_number(value)


# -- page helpers ----------------------------------------------------------------------------
def section(page: Page, name: str) -> Locator:
    return page.locator(f'section.rv-section[data-field="{name}"]')


def info_value(page: Page, name: str) -> Locator:
    return page.locator(f'#rv-info .rv-info-row[data-field="{name}"] .rv-value')


def text_of(locator: Locator) -> str:
    """textContent exactly (inner_text would normalise whitespace and skip hidden text)."""
    return locator.evaluate("el => el.textContent")


def section_value(section: Locator) -> str:
    """What a section shows below its header (a label of 0 may be a scalar, not a text box)."""
    return section.evaluate(
        "s => [...s.children].filter(c => c.tagName !== 'HEADER')"
        ".map(c => c.innerText).join('').trim()"
    )


def csp_directives(header: str) -> dict[str, list[str]]:
    directives = {}
    for part in header.split(";"):
        tokens = part.split()
        if tokens:
            directives[tokens[0].lower()] = tokens[1:]
    return directives


def step_url(bucket: str, step: int) -> str:
    return f"/{bucket}/{step}/"


def sample_url(bucket: str, step: int, position: int) -> str:
    return f"/{bucket}/{step}/sample/{position}/"


# -- 1. landing, buckets, steps --------------------------------------------------------------
def test_root_lands_on_the_latest_step_of_the_first_bucket(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/"))
    latest = max(TRAIN_STEPS)
    assert re.fullmatch(rf"/train/{latest}/(sample/0/)?", url_path(page)), page.url
    expect(page.locator("#rv-position")).to_have_text(position_text(1, NAV_SAMPLES))
    assert shown(page) == (0, 1, NAV_SAMPLES)
    expect(section(page, "prompt")).to_contain_text(marker("train", latest, 0))
    expect(page.locator(".rv-brand")).to_have_text("Relax Rollout Viewer")
    expect(page.locator("#rv-data-dir")).to_have_text("rollout_result")


def test_bucket_tabs_name_each_bucket_and_lead_to_its_latest_step(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    tabs = page.locator("nav#rv-buckets a.rv-bucket")
    expect(tabs).to_have_text(["train", "eval"])
    expect(tabs.nth(0)).to_have_attribute("aria-current", "page")
    assert tabs.nth(1).get_attribute("aria-current") != "page"
    tabs.nth(1).click()
    latest_eval = max(EVAL_STEPS)
    page.wait_for_url(lambda url: urlsplit(url).path.startswith(f"/eval/{latest_eval}/"))
    expect(section(page, "prompt")).to_contain_text(marker("eval", latest_eval, 0))
    expect(page.locator('nav#rv-buckets a.rv-bucket[aria-current="page"]')).to_have_text("eval")


def test_step_selector_lists_steps_in_numeric_order_and_navigates(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    labels = [t.strip() for t in page.locator("select#rv-step option").all_text_contents()]
    matches = [re.fullmatch(r"Step (\d+) \((.+)\)", label) for label in labels]
    assert all(matches), labels
    assert [int(m.group(1)) for m in matches if m] == TRAIN_STEPS
    selected = page.eval_on_selector("select#rv-step", "s => s.options[s.selectedIndex].text")
    assert selected.strip().startswith(f"Step {NAV_STEP} (")

    target = SMALL_STEPS[-1]
    page.select_option("select#rv-step", label=labels[TRAIN_STEPS.index(target)])
    page.wait_for_url(lambda url: urlsplit(url).path.startswith(f"/train/{target}/"))
    expect(section(page, "prompt")).to_contain_text(marker("train", target, 0))
    selected = page.eval_on_selector("select#rv-step", "s => s.options[s.selectedIndex].text")
    assert selected.strip().startswith(f"Step {target} (")


# -- 2. keyboard, history, quick jump --------------------------------------------------------
def test_keys_move_between_samples_without_reloading(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, NAV_SAMPLES))
    mark_document(page)
    steps = [
        ("ArrowRight", 2), ("j", 3), ("ArrowLeft", 2), ("k", 1),
        ("End", NAV_SAMPLES), ("Home", 1), ("j", 2),
    ]  # fmt: skip
    for key, rank in steps:
        press_and_expect(page, key, rank, NAV_SAMPLES)
        # File order: rank r is the record at position r - 1.
        assert url_path(page) == sample_url("train", NAV_STEP, rank - 1), (key, page.url)
        assert shown(page) == (rank - 1, rank, NAV_SAMPLES)
        expect(section(page, "prompt")).to_contain_text(marker("train", NAV_STEP, rank - 1))
        expect(page.locator("#rv-jump-count")).to_have_text(f"{rank} / {NAV_SAMPLES}")
    assert same_document(page), "keyboard navigation reloaded the page"
    measures = page.evaluate("() => performance.getEntriesByName('rv-nav').length")
    assert measures >= len(steps)


# Counts the keys (not the modifiers) that reach the document; added after viewer.js's listener,
# so it runs after it for each key.
COUNT_KEYS = """() => {
    window.__rvKeysSeen = 0;
    document.addEventListener("keydown", e => {
        if (!["Control", "Alt", "Meta", "Shift"].includes(e.key)) window.__rvKeysSeen += 1;
    });
}"""


def test_keys_are_ignored_while_typing_or_with_modifiers_and_scroll_keys_are_left_alone(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(sample_url("train", NAV_STEP, 1)))
    expect(page.locator("#rv-position")).to_have_text(position_text(2, NAV_SAMPLES))
    wait_for_prefetch(page)  # a key that navigated to a neighbour would show it at once
    before, sent = page.url, len(requests_so_far(tab))
    page.evaluate(COUNT_KEYS)
    pressed = 0
    page.locator("#rv-jump-input").focus()
    for key in ("ArrowRight", "j", "ArrowLeft", "k", "End", "Home"):
        page.keyboard.press(key)
        pressed += 1
    blur(page)
    for key in ("Control+ArrowRight", "Alt+j", "Meta+End", "Control+Home"):
        page.keyboard.press(key)
        pressed += 1
    for key in ("ArrowDown", "PageDown", "ArrowUp", "PageUp", "Space"):
        page.keyboard.press(key)
        pressed += 1
    # Every key reached the document, after viewer.js's own listener; a navigation it started
    # is either done (a prefetched neighbour swaps in at once) or a request already sent.
    page.wait_for_function("n => window.__rvKeysSeen === n", arg=pressed)
    assert [url for url in requests_so_far(tab)[sent:] if not is_poll_url(url)] == []
    expect(page.locator("#rv-position")).to_have_text(position_text(2, NAV_SAMPLES))
    assert page.url == before


def test_back_and_forward_restore_the_previous_sample(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, NAV_SAMPLES))
    press_and_expect(page, "ArrowRight", 2, NAV_SAMPLES)
    press_and_expect(page, "ArrowRight", 3, NAV_SAMPLES)
    for go, rank in ((page.go_back, 2), (page.go_back, 1), (page.go_forward, 2)):
        go()
        expect(page.locator("#rv-position")).to_have_text(position_text(rank, NAV_SAMPLES))
        expect(section(page, "prompt")).to_contain_text(marker("train", NAV_STEP, rank - 1))
    assert url_path(page) == sample_url("train", NAV_STEP, 1)


def test_quick_jump_goes_to_the_sample_of_that_rank(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    expect(page.locator("#rv-jump-count")).to_have_text(f"1 / {NAV_SAMPLES}")
    page.fill("#rv-jump-input", "4")
    page.press("#rv-jump-input", "Enter")
    expect(page.locator("#rv-position")).to_have_text(position_text(4, NAV_SAMPLES))
    page.wait_for_url(lambda url: urlsplit(url).path == sample_url("train", NAV_STEP, 3))
    expect(section(page, "prompt")).to_contain_text(marker("train", NAV_STEP, 3))
    page.click("#rv-jump-next")
    expect(page.locator("#rv-jump-count")).to_have_text(f"5 / {NAV_SAMPLES}")
    page.click("#rv-jump-prev")
    expect(page.locator("#rv-jump-count")).to_have_text(f"4 / {NAV_SAMPLES}")


# -- 3. deep links ---------------------------------------------------------------------------
def test_deep_link_with_sort_shows_the_same_sample_after_reload(viewer: ServerProcess, tab: Tab):
    page = tab.page
    position = 5
    order = expected_order(SORT_RECORDS, "reward", desc=True)
    rank, total = order.index(position) + 1, len(order)
    link = f"{sample_url('train', SORT_STEP, position)}?sort=reward&order=desc"
    page.goto(viewer.url(link))
    for reload in (False, True):
        if reload:
            page.reload()
        expect(page.locator("#rv-position")).to_have_text(position_text(rank, total))
        assert shown(page) == (position, rank, total)
        expect(section(page, "prompt")).to_contain_text(marker("train", SORT_STEP, position))
        assert url_path(page) == sample_url("train", SORT_STEP, position)
        assert url_query(page) == {"sort": ["reward"], "order": ["desc"]}
        expect(page.locator("select#rv-sort")).to_have_value("reward")
        expect(page.locator("select#rv-order")).to_have_value("desc")


# -- 4. sort and filter ----------------------------------------------------------------------
def test_changing_sort_keeps_the_sample_and_orders_nan_and_missing_last(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    position = 3
    page.goto(viewer.url(sample_url("train", SORT_STEP, position)))
    total = len(SORT_RECORDS)
    expect(page.locator("#rv-position")).to_have_text(position_text(position + 1, total))
    mark_document(page)

    page.select_option("select#rv-sort", "reward")
    asc = expected_order(SORT_RECORDS, "reward")
    expect(page.locator("#rv-position")).to_have_text(position_text(asc.index(position) + 1, total))
    assert shown(page)[0] == position
    assert url_query(page).get("sort") == ["reward"]

    page.select_option("select#rv-order", "desc")
    desc = expected_order(SORT_RECORDS, "reward", desc=True)
    expect(page.locator("#rv-position")).to_have_text(
        position_text(desc.index(position) + 1, total)
    )
    assert shown(page)[0] == position
    assert url_path(page) == sample_url("train", SORT_STEP, position)
    assert url_query(page) == {"sort": ["reward"], "order": ["desc"]}
    assert same_document(page), "changing the sort reloaded the page"

    assert walk_positions(page) == desc
    # The data's own check: NaN and missing are the last two, whatever the direction.
    assert {SORT_REWARDS.index(MISSING), 2} == set(desc[-2:])


def test_status_filter_shows_only_that_status(viewer: ServerProcess, tab: Tab):
    page = tab.page
    start = SORT_STATUSES.index("aborted")
    page.goto(viewer.url(f"{sample_url('train', SORT_STEP, start)}?sort=reward&order=desc"))
    options = page.locator("select#rv-status option")
    assert options.first.get_attribute("value") == ""
    values = [options.nth(k).get_attribute("value") or "" for k in range(1, options.count())]
    assert sorted(values) == sorted(set(SORT_STATUSES))

    page.select_option("select#rv-status", "truncated")
    wanted = expected_order(SORT_RECORDS, "reward", desc=True, status="truncated")
    # The aborted sample is not in the result: the first of the result is shown.
    expect(page.locator("#rv-position")).to_have_text(position_text(1, len(wanted)))
    assert url_query(page).get("status") == ["truncated"]
    assert walk_positions(page) == wanted
    for rank in range(len(wanted), 0, -1):
        expect(page.locator("#rv-status-chip")).to_have_attribute("data-status", "truncated")
        if rank > 1:
            press_and_expect(page, "ArrowLeft", rank - 1, len(wanted))


def test_eval_dataset_filter_shows_only_that_dataset(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    expect(page.locator("#rv-position")).to_be_visible()
    expect(page.locator("select#rv-dataset")).to_have_count(0)  # no dataset column there

    page.goto(viewer.url(step_url("eval", 5)))
    values = page.locator("select#rv-dataset option").evaluate_all("os => os.map(o => o.value)")
    assert values[0] == ""
    assert sorted(values[1:]) == sorted(set(EVAL_DATASETS))
    page.select_option("select#rv-dataset", "math")
    wanted = expected_order(EVAL_RECORDS, None, dataset="math")
    expect(page.locator("#rv-position")).to_have_text(position_text(1, len(wanted)))
    assert url_query(page).get("dataset") == ["math"]
    assert walk_positions(page) == wanted
    expect(info_value(page, "dataset")).to_have_text("math")


def test_info_card_formats_numbers_and_leaves_out_missing_fields(viewer: ServerProcess, tab: Tab):
    page = tab.page
    for position in (0, SORT_REWARDS.index(NAN), SORT_REWARDS.index(MISSING)):
        record = SORT_RECORDS[position]
        page.goto(viewer.url(sample_url("train", SORT_STEP, position)))
        expect(info_value(page, "sample_index")).to_have_text(str(record["sample_index"]))
        expect(info_value(page, "response_length")).to_have_text(
            shown_number(record["response_length"])
        )
        # The reward and the status are the header's chips', not the card's (said once).
        expect(page.locator("#rv-status-chip")).to_have_attribute("data-status", record["status"])
        expect(page.locator('#rv-info .rv-info-row[data-field="status"]')).to_have_count(0)
        expect(page.locator('#rv-info .rv-info-row[data-field="reward"]')).to_have_count(0)
        chip = page.locator('.rv-reward-chip[data-field="reward"]')
        if "reward" in record:
            expect(chip).to_contain_text(shown_number(record["reward"]))
        else:
            expect(chip).to_have_count(0)


# -- 5. theme --------------------------------------------------------------------------------
def colours(page: Page) -> list[str]:
    return page.evaluate(
        "() => [document.documentElement, document.body].map("
        "e => getComputedStyle(e).backgroundColor + ' ' + getComputedStyle(e).color)"
    )


def theme_cookie(page: Page) -> str | None:
    values = [c["value"] for c in page.context.cookies() if c["name"] == "rv-theme"]
    return values[0] if values else None


def test_dark_theme_choice_survives_a_reload(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.emulate_media(color_scheme="light")
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    html = page.locator("html")
    expect(html).to_have_attribute("data-theme-choice", "system")
    expect(html).to_have_attribute("data-theme", "light")
    light = colours(page)

    page.select_option("select#rv-theme", "dark")
    expect(html).to_have_attribute("data-theme", "dark")
    assert theme_cookie(page) == "dark"
    response = page.reload()
    assert response is not None
    # The server renders the choice: the HTML as sent already carries it.
    assert '<html lang="en" data-theme-choice="dark" data-theme="dark">' in response.text()
    expect(html).to_have_attribute("data-theme", "dark")
    expect(page.locator("select#rv-theme")).to_have_value("dark")
    assert colours(page) != light, "the dark theme looks the same as the light one"


@pytest.mark.parametrize(
    ("cookie", "scheme", "painted"),
    [("dark", "light", "dark"), ("light", "dark", "light"), (None, "dark", "dark")],
)
def test_the_theme_is_painted_without_any_script(
    viewer: ServerProcess,
    browser: Browser,
    cookie: str | None,
    scheme: Literal["light", "dark"],
    painted: str,
):
    """No script runs before the first paint (none may: every script is a deferred module), so
    the stylesheet alone must paint the choice the server rendered, and "system" from the
    colour scheme. With JavaScript off, the page's colours are those of `painted`."""
    themed = {}
    for javascript, theme in ((True, "light"), (True, "dark"), (False, None)):
        context = browser.new_context(java_script_enabled=javascript, color_scheme=scheme)
        value = theme or cookie
        if value is not None:
            context.add_cookies([{"name": "rv-theme", "value": value, "url": viewer.url("/")}])
        page = context.new_page()
        page.goto(viewer.url(step_url("train", NAV_STEP)))
        themed[theme or "no script"] = colours(page)
        context.close()
    assert themed["light"] != themed["dark"]
    assert themed["no script"] == themed[painted]


def test_a_choice_stored_by_an_earlier_version_is_carried_over(viewer: ServerProcess, tab: Tab):
    """Before the cookie, the choice was in localStorage: a reader keeps it after the upgrade."""
    page = tab.page
    page.emulate_media(color_scheme="light")
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    page.evaluate("() => localStorage.setItem('rv-theme', 'dark')")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.locator("select#rv-theme")).to_have_value("dark")
    assert theme_cookie(page) == "dark"


def test_system_theme_follows_the_color_scheme(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.emulate_media(color_scheme="dark")
    page.goto(viewer.url(step_url("train", NAV_STEP)))
    html = page.locator("html")
    expect(html).to_have_attribute("data-theme-choice", "system")
    expect(html).to_have_attribute("data-theme", "dark")
    expect(page.locator("select#rv-theme")).to_have_value("system")


# -- 6. rendering ----------------------------------------------------------------------------
def test_chat_turns_think_block_tool_call_and_pad_badge(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 0)))
    prompt, response = section(page, "prompt"), section(page, "response")
    roles = prompt.locator(".rv-turn").evaluate_all("ts => ts.map(t => t.dataset.role)")
    assert roles[:2] == ["system", "user"], roles
    expect(prompt.locator('.rv-turn[data-role="user"]')).to_contain_text("[render prompt]")
    expect(response.locator('.rv-turn[data-role="assistant"]').last).to_contain_text(
        "[render answer]"
    )
    expect(response.locator(".rv-tool-response")).to_contain_text("42")
    expect(prompt.locator("span.rv-special", has_text="<|vision_start|>")).to_have_count(1)

    pad = prompt.locator("span.rv-pad")
    expect(pad).to_have_count(1)
    expect(pad).to_have_attribute("data-count", str(PAD_COUNT))
    expect(pad).to_contain_text("<|image_pad|>")
    expect(pad).to_contain_text(str(PAD_COUNT))
    assert text_of(prompt.locator(".rv-formatted")).count("<|image_pad|>") == 1

    call = response.locator(".rv-tool-call pre")
    expect(call).to_have_count(1)
    call_text = text_of(call)
    assert json.loads(call_text) == TOOL_CALL
    assert "\n" in call_text.strip(), "the tool call is not pretty-printed"

    think = response.locator("details.rv-think")
    expect(think).to_have_count(1)
    expect(think.locator("summary")).to_have_text("think")
    expect(think).to_contain_text("[render think]")
    assert think.evaluate("d => d.open"), "the think block starts closed"
    save_screenshot(page, "sample-chat-think-tool-pad")
    think.locator("summary").click()
    assert not think.evaluate("d => d.open")
    think.locator("summary").click()
    assert think.evaluate("d => d.open")


def test_pad_badge_is_absent_when_masking_is_off(tab: Tab, tmp_path: Path):
    root = tmp_path / "unmasked"
    write_step_file(root, "", 0, RENDER_RECORDS[:1])
    with run_visualize(root, "--mask-str", "") as server:
        page = tab.page
        page.goto(server.url(sample_url("default", 0, 0)))
        prompt = section(page, "prompt")
        expect(prompt).to_contain_text("[render prompt]")
        expect(page.locator(".rv-pad")).to_have_count(0)
        assert text_of(prompt.locator(".rv-formatted")).count("<|image_pad|>") == PAD_COUNT
        tab.close()


def test_raw_toggle_shows_the_exact_text(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 0)))
    for name, text in (("prompt", RICH_PROMPT), ("response", RICH_RESPONSE)):
        raw = section(page, name).locator("pre.rv-raw")
        expect(raw).to_be_hidden()
        section(page, name).locator("button.rv-raw-toggle").click()
        expect(raw).to_be_visible()
        assert text_of(raw) == text
        section(page, name).locator("button.rv-raw-toggle").click()
        expect(raw).to_be_hidden()


def test_copy_button_copies_the_exact_text(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 0)))
    button = section(page, "prompt").locator("button.rv-copy")
    button.click()
    expect(button).to_have_text("copied")
    assert page.evaluate("navigator.clipboard.readText()") == RICH_PROMPT
    expect(button).to_have_text("copy")  # the label comes back
    tab.assert_clean()


def test_empty_response_and_zero_label_are_shown(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 1)))
    expect(section(page, "response").locator(".rv-empty")).to_have_text("(empty string)")
    label = section(page, "label")
    expect(label).to_be_visible()
    assert section_value(label) == str(RENDER_RECORDS[1]["label"])

    page.goto(viewer.url(sample_url("train", RENDER_STEP, 2)))
    assert RENDER_RECORDS[2]["label"] == ""
    expect(section(page, "label").locator(".rv-empty")).to_have_text("(empty string)")


def test_long_text_starts_scrolled_to_the_end_and_to_start_scrolls_up(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 2)))
    box = 'section.rv-section[data-field="response"] .rv-text'
    page.wait_for_function(
        "sel => { const b = document.querySelector(sel); return b && b.scrollHeight > "
        "b.clientHeight + 50 && Math.abs(b.scrollTop + b.clientHeight - b.scrollHeight) <= 2; }",
        arg=box,
    )
    expect(page.locator(box)).to_contain_text("[long end]")
    section(page, "response").locator("button.rv-to-start").click()
    page.wait_for_function("sel => document.querySelector(sel).scrollTop === 0", arg=box)


def test_array_field_starts_collapsed_and_opens_whole(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 1)))
    array = section(page, "trajectory").locator("details.rv-array")
    expect(array).to_have_count(1)
    assert not array.evaluate("d => d.open")
    expect(array.locator("summary")).to_contain_text(f"{len(TRAJECTORY)} items")
    array.locator("summary").click()
    assert array.evaluate("d => d.open")
    for item in TRAJECTORY:
        expect(array).to_contain_text(item)


def test_collapsed_section_stays_collapsed_on_the_next_sample_and_after_reload(
    viewer: ServerProcess, tab: Tab
):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 0)))
    prompt_button = section(page, "prompt").locator("button.rv-collapse")
    expect(prompt_button).to_have_attribute("aria-expanded", "true")
    prompt_button.click()
    expect(prompt_button).to_have_attribute("aria-expanded", "false")
    expect(section(page, "prompt").locator(".rv-text")).to_be_hidden()

    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RENDER_RECORDS))
    for reload in (False, True):
        if reload:
            page.reload()
        expect(section(page, "prompt").locator("button.rv-collapse")).to_have_attribute(
            "aria-expanded", "false"
        )
        expect(section(page, "prompt").locator(".rv-text")).to_be_hidden()
        expect(section(page, "response").locator("button.rv-collapse")).to_have_attribute(
            "aria-expanded", "true"
        )
    section(page, "prompt").locator("button.rv-collapse").click()
    expect(section(page, "prompt").locator(".rv-text")).to_be_visible()


# -- 7. XSS ----------------------------------------------------------------------------------
def assert_nothing_injected(tab: Tab, server: ServerProcess) -> None:
    page = tab.page
    # Let a failed image's onerror fire, were there one: an image is complete (loaded or
    # broken) in the same task that fires its load or error event.
    page.wait_for_function("() => [...document.images].every(image => image.complete)")
    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert tab.dialogs == []
    handlers = page.evaluate(
        "() => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]"
        ".filter(a => a.name.startsWith('on')).map(a => e.tagName + ' ' + a.name))"
    )
    assert handlers == []
    assert page.locator('img[src="x"]').count() == 0
    scripts = page.evaluate("() => [...document.scripts].map(s => s.src)")
    assert scripts, "the page has no script at all"
    assert all(src.startswith(server.url("/static/")) for src in scripts), scripts
    tab.assert_clean()  # a CSP violation would be reported as a console error


def test_markup_in_text_fields_is_shown_as_text(viewer: ServerProcess, tab: Tab):
    page = tab.page
    path = sample_url("train", XSS_STEP, 0)
    page.goto(viewer.url(path))
    for name in ("prompt", "response", "label"):
        formatted = text_of(section(page, name).locator(".rv-formatted"))
        for payload in XSS:
            assert payload in formatted, (name, payload)
    array = section(page, "trajectory").locator("details.rv-array")
    array.locator("summary").click()
    for name in ("trajectory", "meta"):
        content = text_of(section(page, name))
        for fragment in XSS_FRAGMENTS:
            assert fragment in content, (name, fragment)
    section(page, "response").locator("button.rv-raw-toggle").click()
    assert text_of(section(page, "response").locator("pre.rv-raw")) == XSS_TEXT
    assert_nothing_injected(tab, viewer)

    status, headers, _ = request(viewer.url(path))
    assert status == 200
    policy = csp_directives(headers.get("content-security-policy", ""))
    script_src = policy.get("script-src", policy.get("default-src"))
    assert script_src is not None, headers.get("content-security-policy")
    assert "'unsafe-inline'" not in script_src


def test_markup_in_status_and_dataset_is_shown_as_text(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", XSS_CATEGORY_STEP, 0)))
    # The status is the header's chip (the info card leaves it out: said once).
    expect(page.locator("#rv-status-chip")).to_have_attribute("data-status", XSS_TEXT)
    expect(page.locator("#rv-status-chip")).to_contain_text(XSS_TEXT)
    expect(info_value(page, "dataset")).to_have_text(XSS_TEXT)
    statuses = page.locator("select#rv-status option").evaluate_all("os => os.map(o => o.value)")
    assert XSS_TEXT in statuses
    page.select_option("select#rv-status", XSS_TEXT)
    expect(page.locator("#rv-position")).to_have_text(position_text(1, 1))
    assert url_query(page).get("status") == [XSS_TEXT]
    assert_nothing_injected(tab, viewer)


# -- 8. base path ----------------------------------------------------------------------------
COLLECT_URLS = """() => {
    const out = [];
    const add = (what, raw) => out.push([what, raw, new URL(raw, location.href).href]);
    document.querySelectorAll('a[href]').forEach(e => add('a', e.getAttribute('href')));
    document.querySelectorAll('script[src]').forEach(e => add('script', e.getAttribute('src')));
    document.querySelectorAll('link[href]').forEach(e => add('link', e.getAttribute('href')));
    document.querySelectorAll('form[action]').forEach(e => add('form', e.getAttribute('action')));
    document.querySelectorAll('option').forEach(e => {
        if (e.parentElement.id === 'rv-step' || e.value.includes('/')) add('option', e.value);
    });
    for (const e of document.querySelectorAll('*'))
        for (const a of e.attributes)
            if (a.name.startsWith('data-') && a.value.startsWith('/')) add(a.name, a.value);
    return out;
}"""


def under_prefix(url: str, server: ServerProcess, prefix: str) -> bool:
    """Whether `url` is served by `server` under `prefix` (data: and fragments are not fetched)."""
    parts = urlsplit(url)
    if parts.scheme == "data":
        return True
    return parts.netloc == urlsplit(server.base_url).netloc and parts.path.startswith(prefix + "/")


def test_base_path_keeps_every_url_under_the_prefix(tab: Tab, tmp_path: Path):
    root = tmp_path / "flat"
    write_step_file(root, "", 0, [marked("default", 0, i) for i in range(2)])
    write_step_file(root, "", 1, [marked("default", 1, i) for i in range(3)])
    port = free_port()
    prefix = f"/absproxy/{port}"
    with run_visualize(root, "--base-path", prefix, port=port) as server:
        page = tab.page
        page.goto(server.url(f"{prefix}/"))
        assert re.fullmatch(rf"{prefix}/default/1/(sample/0/)?", url_path(page)), page.url
        expect(page.locator("#rv-position")).to_have_text(position_text(1, 3))
        expect(page.locator("nav#rv-buckets")).to_have_count(0)  # one bucket: no tabs

        blur(page)
        press_and_expect(page, "ArrowRight", 2, 3)
        assert url_path(page) == f"{prefix}/default/1/sample/1/"
        press_and_expect(page, "End", 3, 3)
        expect(section(page, "prompt")).to_contain_text(marker("default", 1, 2))

        urls = page.evaluate(COLLECT_URLS)
        assert [u for u in urls if u[0] == "script"], "no scripts found"
        assert len([u for u in urls if u[0] == "option"]) == 2  # the two steps
        assert [u for u in urls if not under_prefix(u[2], server, prefix)] == []
        assert [u for u in tab.requests if not under_prefix(u, server, prefix)] == []

        json_link = page.locator("a#rv-json").get_attribute("href") or ""
        status, headers, _ = request(server.base_url + json_link)
        assert status == 200 and headers["content-type"].startswith("application/json")
        tab.assert_clean()
        tab.close()


# -- 9. error states -------------------------------------------------------------------------
def expect_error(page: Page, text: str | re.Pattern[str] | None = None) -> None:
    error = page.locator("main#rv-main .rv-error")
    expect(error).to_be_visible()
    expect(error).to_have_attribute("role", "alert")
    if text is not None:
        expect(error).to_contain_text(text)
    expect(page.locator(".rv-brand")).to_have_text("Relax Rollout Viewer")


def test_unknown_step_bucket_or_position_shows_an_error_page(viewer: ServerProcess, tab: Tab):
    page = tab.page
    missing_step = max(TRAIN_STEPS) + 1
    for path in (
        step_url("train", missing_step),
        step_url("nosuchbucket", 0),
        sample_url("train", NAV_STEP, NAV_SAMPLES),
    ):
        response = page.goto(viewer.url(path))
        assert response is not None and response.status == 404, path
        expect_error(page)
        assert "content-security-policy" in response.headers


def test_empty_step_says_it_has_no_samples(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(step_url("train", EMPTY_STEP)))
    expect(page.locator("#rv-empty")).to_have_text(f"Step {EMPTY_STEP} has no samples yet.")
    expect(page.locator(".rv-error")).to_have_count(0)  # a new step of a live run: no error


def test_unreadable_line_names_its_line_number(viewer: ServerProcess, tab: Tab):
    page = tab.page
    response = page.goto(viewer.url(sample_url("train", BAD_STEP, BAD_INDEX)))
    assert response is not None and response.status == 422
    expect_error(page, re.compile(rf"\bline {BAD_INDEX + 1}\b", re.IGNORECASE))


OFFLINE_SHOWN = """() => { const o = document.querySelector('#rv-offline');
    return !!o && o.checkVisibility(); }"""
SETTLED = """before => document.querySelector('#rv-position').textContent.trim() !== before
    || (() => { const o = document.querySelector('#rv-offline');
                return !!o && o.checkVisibility(); })()"""


def test_unreachable_server_keeps_the_sample_and_says_so(tab: Tab, tmp_path: Path):
    root = tmp_path / "offline"
    count = 6
    write_step_file(root, "", 0, [marked("default", 0, i) for i in range(count)])
    with run_visualize(root) as server:
        page = tab.page
        page.goto(server.url(step_url("default", 0)))
        expect(page.locator("#rv-position")).to_have_text(position_text(1, count))
        expect(page.locator("#rv-offline")).to_be_hidden()
        wait_for_prefetch(page)  # whatever the page prefetches, it has
        server.stop()

        # A prefetched neighbour may still show without the server; the first sample it
        # has not fetched must fail, and leave the sample and the URL as they were.
        blur(page)
        for _ in range(count - 1):
            before, before_url = page.locator("#rv-position").inner_text().strip(), page.url
            page.keyboard.press("ArrowRight")
            # Settled: the neighbour is on screen, or its fetch failed and the banner says so.
            page.wait_for_function(SETTLED, arg=before)
            if page.locator("#rv-position").inner_text().strip() == before:
                break
        else:
            pytest.fail("every ArrowRight found its sample with the server stopped")
        offline = page.locator("#rv-offline")
        expect(offline).to_be_visible()
        expect(offline).to_contain_text("Server unreachable")
        expect(offline).to_have_attribute("role", "alert")
        assert page.evaluate(OFFLINE_SHOWN)
        assert page.url == before_url
        expect(page.locator("#rv-position")).to_have_text(before)


# -- 10. a normal page is clean --------------------------------------------------------------
def test_normal_page_has_no_console_errors(viewer: ServerProcess, tab: Tab):
    page = tab.page
    page.goto(viewer.url(sample_url("train", RENDER_STEP, 0)))
    expect(page.locator("#rv-position")).to_have_text(position_text(1, len(RENDER_RECORDS)))
    wait_for_prefetch(page)
    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RENDER_RECORDS))
    wait_for_prefetch(page)  # the new neighbours too: every request the page made is answered
    tab.assert_clean()
