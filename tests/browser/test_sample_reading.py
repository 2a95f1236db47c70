"""Reading a sample in Chromium: the header's chips and answer check, the truncation marker,
reading mode (Markdown and LaTeX through the vendored renderers, sanitised), think blocks that
stay as the reader left them, text boxes that open on whole lines, and a jump bar that covers
nothing. The one server runs under a base path, so every URL here (the renderers' too) must
carry the prefix.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.support.browser import Tab, blur, press_and_expect, write_step_file
from tests.support.data import sample
from tests.support.servers import ServerProcess, free_port, run_visualize

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

STEP = 3
MARKDOWN = (
    "<think>\nFirst I add.\n</think>\n"
    "Work:\n\n- **two** and *three*\n- `code $x$`\n\n"
    "So $\\frac{1}{2} + x$ and $$a^2 + b^2 = c^2$$ hence \\boxed{5}."
)
HOSTILE = (
    '<script>window.__xss=1</script> <img src=x onerror="window.__xss=2"> '
    '[click](javascript:window.__xss=3) ![pic](x) <b onmouseover="window.__xss=4">b</b>'
)
PROMPT_LINES = 150
LONG_PROMPT = "".join(f"prompt line {k}: some words to fill it\n" for k in range(PROMPT_LINES))
RECORDS = [
    sample(0, reward=1.0, response=MARKDOWN, label="5"),
    sample(1, reward=0.0, response="<think>\nhmm\n</think>\n\\boxed{4}", label="5"),
    sample(2, reward=0.25, response=HOSTILE, label=HOSTILE),
    sample(3, status="truncated", response_length=4096, response="it goes on and on and"),
    sample(4, prompt=LONG_PROMPT, response="short"),
]


@dataclass
class Viewer:
    server: ServerProcess
    prefix: str

    def sample(self, position: int) -> str:
        return self.server.url(f"{self.prefix}/train/{STEP}/sample/{position}/")


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    root = tmp_path_factory.mktemp("reading") / "rollout_result"
    write_step_file(root, "train", STEP, RECORDS)
    port = free_port()
    prefix = f"/absproxy/{port}"
    with run_visualize(root, "--base-path", prefix, port=port) as server:
        yield Viewer(server, prefix)


def section(page: Page, name: str) -> Locator:
    return page.locator(f'section.rv-section[data-field="{name}"]')


def background(locator: Locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).backgroundColor")


def rgb(colour: str) -> tuple[int, ...]:
    """ "rgb(220, 252, 231)" as numbers."""
    return tuple(int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])


def turn_on_reading(page: Page, name: str) -> Locator:
    box = section(page, name)
    box.locator("button.rv-read-toggle").click()
    expect(box).to_have_attribute("data-rendered", "true")
    return box


# -- right or wrong at a glance --------------------------------------------------------------
def test_reward_chips_are_green_red_or_on_the_scale(viewer: Viewer, tab: Tab):
    page = tab.page
    colours = {}
    for position, tone in ((0, "right"), (1, "wrong"), (2, "scale-1")):
        page.goto(viewer.sample(position))
        chip = page.locator('#rv-sample-head .rv-reward-chip[data-field="reward"]')
        expect(chip).to_have_attribute("data-tone", tone)
        colours[tone] = background(chip)
    assert len(set(colours.values())) == 3, colours  # three tones, three colours
    red, green = rgb(colours["wrong"]), rgb(colours["right"])
    assert red[0] > red[1] and green[1] > green[0], colours
    tab.assert_clean()


def test_answer_beside_label_with_a_match_mark(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.sample(0))
    check = page.locator("#rv-answer-check")
    expect(check).to_have_attribute("data-match", "yes")
    expect(page.locator("#rv-extracted")).to_have_text("5")
    expect(page.locator("#rv-label-value")).to_have_text("5")
    expect(page.locator("#rv-match")).to_contain_text("matches")
    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RECORDS))  # swapped in by the script
    expect(check).to_have_attribute("data-match", "no")
    expect(page.locator("#rv-match")).to_contain_text("differs")
    expect(page.locator("#rv-identity")).to_contain_text(f"line 2 of train/{STEP}.jsonl")
    tab.assert_clean()


def test_truncated_response_shows_where_it_was_cut(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.sample(3))
    marker = section(page, "response").locator(".rv-cut")
    expect(marker).to_be_visible()
    expect(marker).to_contain_text("cut at 4,096 tokens")
    expect(marker).to_be_in_viewport()
    expect(page.locator("#rv-cut-chip")).to_have_text("cut at 4,096 tokens")
    # Below the text it marks, in the formatted view and in the raw one.
    text_bottom = section(page, "response").locator(".rv-formatted").bounding_box()
    marker_box = marker.bounding_box()
    assert (
        text_bottom and marker_box and marker_box["y"] >= text_bottom["y"] + text_bottom["height"]
    )
    section(page, "response").locator("button.rv-raw-toggle").click()
    expect(marker).to_be_visible()
    page.goto(viewer.sample(0))
    expect(page.locator(".rv-cut")).to_have_count(0)


# -- reading mode ----------------------------------------------------------------------------
def test_reading_mode_renders_markdown_and_latex_and_is_remembered(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.sample(0))
    response = section(page, "response")
    mono = response.locator(".rv-text").evaluate("e => getComputedStyle(e).fontFamily")
    box = turn_on_reading(page, "response")
    md = box.locator(".rv-md")
    expect(md.locator("strong")).to_have_text("two")
    expect(md.locator("li em")).to_have_text("three")
    expect(md.locator("code")).to_have_text("code $x$")  # math in code stays code
    expect(md.locator(".rv-math:not(.rv-math-display) .katex")).to_have_count(2)  # \frac, \boxed
    expect(md.locator(".rv-math-display .katex-display")).to_have_count(1)
    expect(box.locator("details.rv-think .rv-md")).to_have_text("First I add.")
    proportional = box.locator(".rv-text").evaluate("e => getComputedStyle(e).fontFamily")
    assert proportional != mono and "monospace" not in proportional
    width = md.first.evaluate("e => e.parentElement.getBoundingClientRect().width")
    size = md.first.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert width <= 72 * size, (width, size)  # capped line length
    # The exact text is one click away, unchanged.
    box.locator("button.rv-raw-toggle").click()
    assert box.locator("pre.rv-raw").evaluate("e => e.textContent") == MARKDOWN
    box.locator("button.rv-raw-toggle").click()

    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RECORDS))
    expect(section(page, "response")).to_have_attribute("data-rendered", "true")
    expect(section(page, "response").locator(".rv-md .katex")).to_have_count(1)  # \boxed{4}
    page.reload()
    expect(section(page, "response")).to_have_attribute("data-rendered", "true")
    expect(section(page, "response").locator("button.rv-read-toggle")).to_have_attribute(
        "aria-pressed", "true"
    )
    section(page, "response").locator("button.rv-read-toggle").click()
    expect(section(page, "response").locator(".rv-md").first).to_be_hidden()
    assert not page.evaluate(
        "() => [...document.scripts].some(s => /cdn|\\/\\//.test(s.src) &&"
        " !s.src.startsWith(location.origin))"
    )
    tab.assert_clean()  # a CSP violation (an inline style, a foreign script) is a console error


def test_reading_mode_runs_nothing_from_the_sample(viewer: Viewer, tab: Tab):
    page = tab.page
    page.goto(viewer.sample(2))
    for name in ("response", "label"):
        box = turn_on_reading(page, name)
        md = box.locator(".rv-md")
        assert "<script>window.__xss=1</script>" in md.evaluate("e => e.textContent")
        assert md.locator("script, img, b, [onerror], [onmouseover]").count() == 0
        hrefs = md.evaluate("e => [...e.querySelectorAll('a')].map(a => a.getAttribute('href'))")
        assert hrefs and all(href is None for href in hrefs), hrefs  # "x" and javascript: dropped
    page.wait_for_function("() => [...document.images].every(image => image.complete)")
    assert page.evaluate("() => typeof window.__xss") == "undefined"
    assert page.locator('img[src="x"]').count() == 0
    assert tab.dialogs == []
    tab.assert_clean()


def test_closed_think_blocks_stay_closed_on_the_next_sample_and_after_reload(
    viewer: Viewer, tab: Tab
):
    page = tab.page
    page.goto(viewer.sample(0))
    think = section(page, "response").locator("details.rv-think")
    expect(think).to_have_attribute("open", "")
    think.locator("summary").click()
    expect(think).not_to_have_attribute("open", "")
    blur(page)
    press_and_expect(page, "ArrowRight", 2, len(RECORDS))
    expect(section(page, "response").locator("details.rv-think")).not_to_have_attribute("open", "")
    page.reload()
    think = section(page, "response").locator("details.rv-think")
    expect(think).not_to_have_attribute("open", "")
    think.locator("summary").click()  # opened again: that is the choice now
    page.goto(viewer.sample(0))
    expect(section(page, "response").locator("details.rv-think")).to_have_attribute("open", "")


# -- layout ----------------------------------------------------------------------------------
STRADDLING_TOP = """box => {
    const top = box.getBoundingClientRect().top + box.clientTop;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    const cut = [];
    while (walker.nextNode()) {
        const range = document.createRange();
        range.selectNodeContents(walker.currentNode);
        for (const r of range.getClientRects())
            if (r.height && r.top < top - 0.5 && r.bottom > top + 0.5) cut.push([r.top, top]);
    }
    return cut;
}"""


@pytest.mark.parametrize("width", [800, 1440])
def test_prompt_box_opens_on_a_whole_line(viewer: Viewer, tab: Tab, width: int):
    page = tab.page
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(viewer.sample(4))
    box = section(page, "prompt").locator(".rv-text")
    expect(box).to_contain_text(f"prompt line {PROMPT_LINES - 1}")
    page.wait_for_function("b => b.scrollTop > 0", arg=box.element_handle())
    assert box.evaluate(STRADDLING_TOP) == []
    assert box.evaluate("b => b.scrollTop + b.clientHeight >= b.scrollHeight - 1")  # at its end


@pytest.mark.parametrize("width", [800, 1440])
def test_jump_bar_never_covers_the_sample(viewer: Viewer, tab: Tab, width: int):
    page = tab.page
    page.set_viewport_size({"width": width, "height": 700})
    page.goto(viewer.sample(4))
    jump = page.locator("#rv-jump")
    expect(jump).to_be_in_viewport()  # always at hand while reading
    page.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
    # At the bottom (a prompt box shorter than a screen may leave nothing to scroll at 1440).
    page.wait_for_function(
        "() => window.scrollY + innerHeight >= document.documentElement.scrollHeight - 1"
    )
    article = page.locator("#rv-sample").bounding_box()
    bar = jump.bounding_box()
    assert article and bar
    assert bar["y"] >= article["y"] + article["height"] - 0.5, (bar, article)
    # Opaque: whatever scrolls behind it does not show through.
    assert background(jump) not in ("rgba(0, 0, 0, 0)", "transparent")
    page.locator("#rv-jump-input").fill("2")
    page.keyboard.press("Enter")
    expect(page.locator("article#rv-sample")).to_have_attribute("data-rank", "2")
