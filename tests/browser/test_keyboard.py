"""The keyboard in real Chromium, on a viewer served under a URL prefix: the keys to the
neighbouring step, the statistics, the trends and the group page; `?` and its list of every
key; sort, filter and step lists that apply on Enter or blur, not on each arrow key; the focus
kept across fragment swaps; the skip link. Expected URLs come from the steps these tests write.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import FloatRect, Page, expect

from tests.support.browser import (
    FAST_POLL_ENV,
    FAST_POLL_MS,
    Tab,
    blur,
    is_poll_url,
    live_timeout_ms,
    mark_document,
    position_text,
    press_and_expect,
    requests_so_far,
    same_document,
    url_path,
    url_query,
    wait_for_prefetch,
    write_step_file,
)
from tests.support.data import relax_line, sample
from tests.support.servers import REPO_ROOT, ServerProcess, free_port, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEPS = (0, 1, 2)
SAMPLES = 4  # per step, GRPO groups of two (sample(): group_index = i // 2)
STATUSES = ["completed", "truncated", "completed", "aborted"]
STATIC = REPO_ROOT / "rollouts" / "static" / "rollouts"


class Viewer:
    def __init__(self, server: ServerProcess, prefix: str) -> None:
        self.server, self.prefix = server, prefix

    def path(self, rest: str) -> str:
        return f"{self.prefix}{rest}"

    def url(self, rest: str) -> str:
        return self.server.url(self.path(rest))


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    root = tmp_path_factory.mktemp("keys") / "rollout_result"
    for step in STEPS:
        records = [sample(i, status=STATUSES[i], reward=float(i + step)) for i in range(SAMPLES)]
        write_step_file(root, "train", step, records)
    port = free_port()
    prefix = f"/absproxy/{port}"
    with run_visualize(root, "--base-path", prefix, port=port) as server:
        yield Viewer(server, prefix)


def active_id(page: Page) -> str:
    return page.evaluate("() => document.activeElement ? document.activeElement.id : ''")


def non_poll_requests_since(tab: Tab, sent: int) -> list[str]:
    return [url for url in requests_so_far(tab)[sent:] if not is_poll_url(url)]


# -- keys to other pages ---------------------------------------------------------------------
def test_bracket_keys_move_to_the_neighbouring_step_keeping_sort_and_filters(
    viewer: Viewer, tab: Tab
):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/1/?sort=reward&order=desc&status=completed"))
    expect(page.locator("#rv-position")).to_have_text(re.compile(r"^Sample \d+ of 2$"))
    page.keyboard.press("]")
    page.wait_for_url(re.compile(r"/train/2/"))
    assert url_path(page).startswith(viewer.path("/train/2/"))
    assert url_query(page) == {"sort": ["reward"], "order": ["desc"], "status": ["completed"]}
    page.keyboard.press("[")
    page.wait_for_url(re.compile(r"/train/1/"))
    page.keyboard.press("[")
    page.wait_for_url(re.compile(r"/train/0/"))
    assert url_query(page)["sort"] == ["reward"]
    # The first step has no step before it: `[` leaves the page as it is.
    wait_for_prefetch(page)
    before, sent = page.url, len(requests_so_far(tab))
    mark_document(page)
    page.keyboard.press("[")
    assert non_poll_requests_since(tab, sent) == []
    assert page.url == before and same_document(page)
    tab.assert_clean()


def test_g_s_t_and_brackets_lead_to_the_group_statistics_and_trends_pages(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/3/"))
    page.keyboard.press("g")  # sample 3 is in group 3 // 2 = 1
    page.wait_for_url(re.compile(r"/group/"))
    assert url_path(page) == viewer.path("/train/1/group/1/")
    assert url_query(page) == {"from": ["3"]}
    expect(page.locator("#rv-member-3")).to_have_attribute("aria-current", "true")

    page.keyboard.press("s")
    page.wait_for_url(re.compile(r"/stats/$"))
    assert url_path(page) == viewer.path("/train/1/stats/")
    page.keyboard.press("]")  # on the statistics page: the next step's statistics
    page.wait_for_url(re.compile(r"/train/2/stats/$"))
    page.keyboard.press("[")
    page.wait_for_url(re.compile(r"/train/1/stats/$"))

    page.keyboard.press("t")
    page.wait_for_url(re.compile(r"/trends/$"))
    assert url_path(page) == viewer.path("/train/trends/")
    # The trends page has no step: `s`, `[`, `]` and `g` lead nowhere from it.
    mark_document(page)
    for key in ("s", "[", "]", "g"):
        page.keyboard.press(key)
    page.keyboard.press("?")  # a key handled after them: they had every chance to navigate
    expect(page.locator("dialog#rv-keys")).to_be_visible()
    assert same_document(page) and url_path(page) == viewer.path("/train/trends/")
    tab.assert_clean()


def test_keys_do_nothing_while_typing_or_with_a_modifier(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/1/"))
    wait_for_prefetch(page)
    before, sent = page.url, len(requests_so_far(tab))
    mark_document(page)
    page.locator("#rv-jump-input").focus()
    for key in ("s", "t", "g", "[", "]", "?"):
        page.keyboard.press(key)
    blur(page)
    for key in ("Control+s", "Alt+t", "Meta+g", "Control+]", "Alt+["):
        page.keyboard.press(key)
    page.keyboard.press("j")  # handled by viewer.js once the keys above were
    expect(page.locator("#rv-position")).to_have_text(position_text(3, SAMPLES))
    assert same_document(page)
    assert [u for u in non_poll_requests_since(tab, sent) if "/sample/" not in u] == []
    expect(page.locator("dialog#rv-keys")).to_be_hidden()
    assert before.replace("/sample/1/", "/sample/2/") == page.url  # j moved on; nothing else did


# -- the list of every key -------------------------------------------------------------------
KEY_NAMES = {"ArrowRight": "→", "ArrowLeft": "←"}


def keys_the_scripts_handle() -> set[str]:
    """Every key in viewer.js's KEYS and keys.js's GOES, as the dialog writes it."""
    viewer_keys = re.search(r"const KEYS = \{(.*?)\};", (STATIC / "viewer.js").read_text(), re.S)
    page_keys = re.search(r"const GOES = \{(.*?)\n\s*\};", (STATIC / "keys.js").read_text(), re.S)
    assert viewer_keys and page_keys
    found = set(re.findall(r'(\w+): "', viewer_keys.group(1)))
    found |= set(re.findall(r'^\s*"?([^\s":]+)"?: \{', page_keys.group(1), re.M))
    return {KEY_NAMES.get(key, key) for key in found} | {"?"}


def test_question_mark_lists_every_key_and_esc_gives_the_focus_back(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/1/"))
    page.locator("#rv-next").focus()
    page.keyboard.press("?")
    dialog = page.locator("dialog#rv-keys")
    expect(dialog).to_be_visible()
    assert page.evaluate("() => document.getElementById('rv-keys').matches(':modal')")
    expect(page.locator("#rv-keys-close")).to_be_focused()
    listed = set(dialog.locator("kbd").all_inner_texts())
    expected = keys_the_scripts_handle()
    assert {"[", "]", "s", "t", "g", "j", "k", "Home", "End", "→", "←"} <= expected
    assert expected - listed == set()

    page.keyboard.press("j")  # the keys behind the dialog do not act
    page.keyboard.press("s")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.locator("#rv-next")).to_be_focused()
    expect(page.locator("#rv-position")).to_have_text(position_text(2, SAMPLES))
    assert url_path(page) == viewer.path("/train/1/sample/1/")

    page.keyboard.press("?")
    expect(dialog).to_be_visible()
    page.keyboard.press("?")  # `?` closes it again, and the close button too
    expect(dialog).to_be_hidden()
    expect(page.locator("#rv-next")).to_be_focused()
    page.keyboard.press("?")
    page.locator("#rv-keys-close").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#rv-next")).to_be_focused()
    tab.assert_clean()


# -- lists that apply on Enter or blur -------------------------------------------------------
def option_values(page: Page, select: str) -> list[str]:
    return page.locator(f"{select} option").evaluate_all("os => os.map(o => o.value)")


def test_arrow_down_on_the_sort_list_waits_for_enter_and_blur_applies_a_filter(
    viewer: Viewer, tab: Tab
):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/0/"))
    wait_for_prefetch(page)
    mark_document(page)
    sorts = option_values(page, "#rv-sort")
    before, sent = page.url, len(requests_so_far(tab))

    page.locator("#rv-sort").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#rv-sort")).to_have_value(sorts[2])
    page.keyboard.press("r")  # a typed letter jumps within the list, and applies no more
    chosen = page.locator("#rv-sort").input_value()
    assert chosen.startswith("r")
    assert non_poll_requests_since(tab, sent) == []
    assert page.url == before

    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"[?&]sort={chosen}(&|$)"))
    assert same_document(page)
    expect(page.locator("#rv-sort")).to_be_focused()  # the swap kept the focus on the list

    statuses = option_values(page, "#rv-status")
    page.locator("#rv-status").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#rv-status")).to_have_value(statuses[1])
    assert "status" not in url_query(page)
    page.keyboard.press("Tab")  # leaving the list applies it
    expect(page).to_have_url(re.compile(rf"[?&]status={statuses[1]}(&|$)"))
    assert url_query(page)["sort"] == [chosen]
    assert same_document(page)

    page.locator("#rv-order").focus()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")  # puts the applied choice back: leaving then changes nothing
    expect(page.locator("#rv-order")).to_have_value("asc")
    sent = len(requests_so_far(tab))
    blur(page)
    # A zero timeout queued now runs after the one the blur queued: by then it had its chance.
    page.evaluate("() => new Promise(done => setTimeout(done, 0))")
    assert "order" not in url_query(page)
    assert [u for u in non_poll_requests_since(tab, sent) if "order=" in u] == []
    tab.assert_clean()


def test_arrow_down_on_the_step_list_does_not_leave_the_page_until_enter(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/0/"))
    wait_for_prefetch(page)
    mark_document(page)
    before, sent = page.url, len(requests_so_far(tab))
    page.locator("#rv-step").focus()
    page.keyboard.press("ArrowDown")  # step 2
    assert non_poll_requests_since(tab, sent) == []
    assert page.url == before and same_document(page)
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/train/2/"))


# -- the focus across swaps ------------------------------------------------------------------
def test_focus_stays_on_the_control_across_swaps_or_falls_back_to_main(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/1/"))
    mark_document(page)
    page.locator("#rv-next").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#rv-position")).to_have_text(position_text(3, SAMPLES))
    expect(page.locator("#rv-next")).to_be_focused()
    page.keyboard.press("j")  # a key with the focus on the link: the link keeps it
    expect(page.locator("#rv-position")).to_have_text(position_text(4, SAMPLES))
    # The last sample's Next is no link and takes no focus: <main> has it, not <body>.
    expect(page.locator("#rv-main")).to_be_focused()
    assert active_id(page) == "rv-main"
    press_and_expect(page, "k", 3, SAMPLES)  # the keys still work from <main>

    collapse = page.locator('section.rv-section[data-field="prompt"] button.rv-collapse')
    collapse.focus()
    page.keyboard.press("j")
    expect(page.locator("#rv-position")).to_have_text(position_text(4, SAMPLES))
    expect(collapse).to_be_focused()  # the same control of the new sample
    assert same_document(page)


def test_focus_stays_on_the_link_a_growing_step_replaces(tab: Tab, tmp_path: Path):
    root = tmp_path / "rollout_result"
    path = write_step_file(root, "train", 1, [sample(i) for i in range(2)])
    with run_visualize(root, env=FAST_POLL_ENV) as server:
        page = tab.page
        page.goto(server.url("/train/1/sample/1/"))  # the last sample: Next is no link yet
        page.locator("#rv-prev").focus()
        mark_document(page)
        with path.open("a", encoding="utf-8") as out:
            out.write(relax_line(sample(2)))
        expect(page.locator("#rv-next")).to_have_attribute(
            "href", re.compile(r"/sample/2/$"), timeout=live_timeout_ms(FAST_POLL_MS)
        )  # grown.js replaced both links
        expect(page.locator("#rv-prev")).to_be_focused()
        assert same_document(page)
        tab.close()


# -- the skip link ---------------------------------------------------------------------------
def skip_link_box(page: Page) -> FloatRect:
    box = page.locator("#rv-skip").bounding_box()
    assert box is not None
    return box


def test_skip_link_comes_first_shows_on_focus_and_moves_focus_to_the_sample(
    viewer: Viewer, tab: Tab
):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/2/"))
    hidden = skip_link_box(page)
    assert hidden["y"] + hidden["height"] <= 0, "the skip link shows before it has the focus"
    page.keyboard.press("Tab")
    skip = page.locator("#rv-skip")
    expect(skip).to_be_focused()
    expect(skip).to_have_text("Skip to the sample")
    shown_box = skip_link_box(page)
    assert shown_box["y"] >= 0 and shown_box["width"] > 20 and shown_box["height"] > 10
    page.keyboard.press("Enter")
    expect(page.locator("article#rv-sample")).to_be_focused()
    assert "#" not in page.url
    page.keyboard.press("Tab")  # the next stop is inside the sample
    assert page.evaluate("() => !!document.activeElement.closest('#rv-sample')")
    tab.assert_clean()


@pytest.mark.parametrize("path", ["/train/1/stats/", "/train/1/group/0/", "/train/trends/"])
def test_pages_without_a_sample_skip_to_the_main_content(viewer: Viewer, tab: Tab, path: str):
    page = tab.page
    page.goto(viewer.url(path))
    page.keyboard.press("Tab")
    skip = page.locator("#rv-skip")
    expect(skip).to_be_focused()
    expect(skip).to_have_text("Skip to the main content")
    page.keyboard.press("Enter")
    expect(page.locator("#rv-main")).to_be_focused()


def test_every_url_the_keys_use_carries_the_prefix(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.url("/train/1/sample/1/"))
    urls = page.evaluate(
        """() => [...Object.entries(document.getElementById('rv-keys').dataset),
                  ['group', document.getElementById('rv-sample').dataset.groupUrl]]
                 .filter(([k]) => k.endsWith('Url') || k === 'group')"""
    )
    assert len(urls) >= 6, urls
    assert [u for _, u in urls if not u.startswith(viewer.prefix + "/")] == []
