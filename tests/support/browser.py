"""Headless Chromium for the browser tests, and the small helpers they share.

tests/browser/conftest.py registers the fixtures for the browser tests alone: no
pytest plugin, so the unit tests never start a browser. The browser is the system's Chromium
(`RELAX_CHROMIUM`, else `chromium` on PATH), never one Playwright downloads. Without it the
browser tests are skipped, except on CI (`CI=true`), where a missing browser is a failure.

Each test gets a fresh browser context (clean localStorage, cookies and cache) and a `Tab`
that records what a user would not see but a test must: console errors (CSP violations are
among them), uncaught page errors, dialogs (dismissed at once), and every request and failed
response the page made.

No test sleeps. A test that waits for a live update starts its server with `FAST_POLL_ENV`
and derives its timeouts from `FAST_POLL_MS`; a test that must show something did NOT happen
waits for positive evidence that it had every chance to (`wait_for_polls`, `requests_so_far`).
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Page,
    Playwright,
    Request,
    Response,
    ViewportSize,
    expect,
    sync_playwright,
)
from playwright.sync_api import (
    TimeoutError as PlaywrightTimeoutError,
)

from tests.support.data import relax_line
from tests.support.servers import REPO_ROOT

CHROMIUM_ARGS = [
    "--no-sandbox",  # containers and CI runners rarely allow the setuid/user-namespace sandbox
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_DIR = REPO_ROOT / "test-artifacts" / "screenshots"
TIMEOUT_MS = 10_000  # for any single wait; a healthy page answers in well under a second
DEFAULT_POLL_MS = 3000  # a page's poll interval when the server is not told (rollouts.conf)
# Servers of tests that wait for live updates poll this often (data-poll-ms): short, so the
# tests are quick, and long enough that a loaded 2-core runner answers a poll well within it.
FAST_POLL_MS = 200
NAV_GRACE = 2.0  # s: a request aborted this soon after a navigation began was the old page's
FAST_POLL_ENV = {"RELAX_POLL_MS": str(FAST_POLL_MS)}
POLL_PATH = re.compile(r"/api/jsonl/[^/]+/poll$")  # what live.js asks, under any prefix
VIEWPORT: ViewportSize = {"width": 1280, "height": 900}

expect.set_options(timeout=TIMEOUT_MS)


def chromium_path() -> str | None:
    configured = os.environ.get("RELAX_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("chromium")


def _missing_browser(message: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the browser tests must run)", pytrace=False)
    pytest.skip(message)


# Module scope, not session: Playwright's sync API keeps an asyncio loop running in this thread
# while it is open, and the terminal UI tests (textual) need to start loops of their own.
@pytest.fixture(scope="module", name="playwright_driver")
def playwright_driver_fixture() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module", name="browser")
def browser_fixture(playwright_driver: Playwright) -> Iterator[Browser]:
    executable = chromium_path()
    if executable is None:
        _missing_browser(
            "no Chromium: set RELAX_CHROMIUM to its path or install Debian's `chromium`"
            + (f" (RELAX_CHROMIUM={os.environ['RELAX_CHROMIUM']} is not a file)"
               if os.environ.get("RELAX_CHROMIUM") else "")
        )  # fmt: skip
    launched = playwright_driver.chromium.launch(
        executable_path=executable, headless=True, args=CHROMIUM_ARGS
    )
    yield launched
    launched.close()


@dataclass
class Tab:
    """A page and everything it reported: what `assert_clean` checks."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "404 URL" or "failed URL: reason"
    navigated_at: float = -1e9  # time.monotonic() of the last document the tab asked for
    scripts: bool = True  # False: the tab runs no JavaScript (java_script_enabled=False)
    _asked_at: dict[int, float] = field(default_factory=dict)  # id(request) -> when

    @classmethod
    def attach(cls, page: Page, scripts: bool = True) -> Tab:
        tab = cls(page, scripts=scripts)
        page.on("console", tab._on_console)
        page.on("pageerror", lambda exc: tab.page_errors.append(str(exc)))
        page.on("dialog", tab._on_dialog)
        page.on("request", tab._on_request)
        page.on("response", tab._on_response)
        page.on("requestfailed", tab._on_request_failed)
        return tab

    def _on_console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(f"{message.text} ({message.location.get('url', '')})")

    def _on_dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def _on_response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")

    def _on_request(self, request: Request) -> None:
        self.requests.append(request.url)
        now = time.monotonic()
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.navigated_at = now
        self._asked_at[id(request)] = now

    def _on_request_failed(self, request: Request) -> None:
        """A request cancelled because the tab left its document (a poll or a prefetch asked
        before the navigation, or in the moment before the old page went) is what browsers do
        on every navigation, not a failure; anything else is."""
        asked = self._asked_at.get(id(request), time.monotonic())
        leaving = self.navigated_at >= asked or time.monotonic() - self.navigated_at < NAV_GRACE
        if request.failure == "net::ERR_ABORTED" and leaving:
            return
        if not self.scripts and request.resource_type == "script" and request.failure == "csp":
            # With JavaScript off, Chromium refuses the page's <link rel="modulepreload">s
            # itself (reported as "csp") instead of leaving them unfetched, as it does a
            # <script src>: nothing was asked of the server, and the page works without them.
            return
        self.failed.append(f"failed {request.url}: {request.failure}")

    def problems(self) -> list[str]:
        return [
            *(f"console error: {m}" for m in self.console_errors),
            *(f"page error: {m}" for m in self.page_errors),
            *(f"dialog: {m}" for m in self.dialogs),
            *(f"HTTP: {m}" for m in self.failed),
        ]

    def close(self) -> None:
        """Close the browser context now: a server stopped afterwards need not wait for the
        browser's keep-alive connections (gunicorn lets them finish, ~2 s)."""
        self.page.context.close()

    def assert_clean(self) -> None:
        """No console error, page error, dialog, or failed request since the tab opened."""
        problems = self.problems()
        assert not problems, problems


@pytest.fixture(name="tab")
def tab_fixture(browser: Browser) -> Iterator[Tab]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        yield Tab.attach(page)
    finally:
        context.close()  # a no-op when the test closed it already


@pytest.fixture(name="any_tab", params=["script", "no script"])
def any_tab_fixture(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Tab]:
    """A tab at 1440 x 900, once with JavaScript and once without: pages that must work both
    ways (the group, prompt and compare pages) run their tests twice."""
    scripts = request.param == "script"
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, java_script_enabled=scripts
    )
    try:
        yield Tab.attach(context.new_page(), scripts=scripts)
    finally:
        context.close()


# -- data ------------------------------------------------------------------------------------
def write_step_file(root: Path, bucket: str, step: int, lines: Iterable[Any]) -> Path:
    """root/bucket/step.jsonl ("" for a flat dir) from records or raw str lines; its path."""
    directory = root / bucket if bucket else root
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{step}.jsonl"
    path.write_text(
        "".join(line if isinstance(line, str) else relax_line(line) for line in lines),
        encoding="utf-8",
    )
    return path


# -- waiting for the live code ---------------------------------------------------------------
def live_timeout_ms(poll_ms: int) -> int:
    """How long a test waits for a live update on a server polling every `poll_ms`: two
    periods (a write may just miss one poll), then the budget of any single wait for what the
    answer sets off (indexing, a fragment, a page load)."""
    return 2 * poll_ms + TIMEOUT_MS


def is_poll_url(url: str) -> bool:
    return bool(POLL_PATH.search(urlsplit(url).path))


def is_poll(request: Request) -> bool:
    return is_poll_url(request.url)


def wait_for_polls(page: Page, count: int = 2, poll_ms: int = FAST_POLL_MS) -> None:
    """Wait until the page (or the page it went to) has sent `count` more poll requests.

    Positive evidence that time passed: live.js sends a poll only once the previous answer has
    been acted on, so after two requests at least one whole poll (ask, answer, act) happened
    since the call. What a poll would have done, it has done by now.
    """
    for _ in range(count):
        page.wait_for_event("request", predicate=is_poll, timeout=live_timeout_ms(poll_ms))


BARRIER = "rv-test-barrier"  # the query parameter that marks a barrier request


def requests_so_far(tab: Tab) -> list[str]:
    """Every request the page has sent until now, read after a barrier.

    Playwright reports a page's requests in the order it sent them, so once a request the test
    makes the page send (a stylesheet it already loaded) has been reported, so has every
    request sent before it. Barriers are left out of the list.
    """
    page = tab.page
    href = page.evaluate("() => document.querySelector('link[rel=stylesheet]').href")
    barrier = f"{href}{'&' if '?' in href else '?'}{BARRIER}={len(tab.requests)}"
    with page.expect_request(lambda request: request.url == barrier):
        page.evaluate("url => { fetch(url); }", barrier)
    seen = list(tab.requests)
    return [url for url in seen[: seen.index(barrier)] if BARRIER not in url]


# JS: the start times (performance.now() ms) of the poll requests this document completed, from
# the Resource Timing entries the browser keeps (the page's own clock, no Python in between).
POLL_STARTS_JS = """() => {
    const header = document.getElementById("rv-header");
    const poll = new URL(header.dataset.pollUrl, location.href).pathname;
    return performance.getEntriesByType("resource")
        .filter(e => new URL(e.name).pathname === poll).map(e => e.startTime);
}"""


def poll_starts(page: Page) -> list[float]:
    return page.evaluate(POLL_STARTS_JS)


def intervals(times: list[float]) -> list[float]:
    """The time between each of `times` and the next."""
    return [b - a for a, b in pairwise(times)]


def wait_for_poll_starts(page: Page, count: int, poll_ms: int = FAST_POLL_MS) -> list[float]:
    """The start times of the page's first `count` (or more) completed polls, once it has them."""
    page.wait_for_function(
        f"n => ({POLL_STARTS_JS})().length >= n",
        arg=count,
        timeout=count * live_timeout_ms(poll_ms),
    )
    return poll_starts(page)


# Run before the page's scripts: every rv:poll event live.js dispatches, in order, with the
# page-clock time it was seen and the answer's cursor (and room for every Resource Timing entry
# a long test makes: the browser keeps 250 by default).
RECORD_POLL_EVENTS_JS = """
    window.__rvPollEvents = [];
    performance.setResourceTimingBufferSize(10000);
    document.addEventListener("rv:poll", e => window.__rvPollEvents.push(
        {time: performance.now(), changed: e.detail.changed, cursor: e.detail.cursor}));
"""


def record_poll_events(page: Page) -> None:
    """From the next page load on, keep every rv:poll event in window.__rvPollEvents."""
    page.add_init_script(RECORD_POLL_EVENTS_JS)


def poll_events(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("() => window.__rvPollEvents")


def wait_until_every_poll_is_announced(page: Page, poll_ms: int = FAST_POLL_MS) -> None:
    """Wait until the page has announced (rv:poll) exactly as many answers as it completed polls.

    Between two polls the counts agree when live.js alone polls: each answer it reads is one
    event. A request any other code sent to the poll endpoint is never announced, so the counts
    never agree and this fails, saying both.
    """
    try:
        page.wait_for_function(
            f"() => window.__rvPollEvents.length === ({POLL_STARTS_JS})().length",
            timeout=live_timeout_ms(poll_ms),
        )
    except PlaywrightTimeoutError:
        polls, events = len(poll_starts(page)), len(poll_events(page))
        raise AssertionError(f"{polls} polls answered, {events} announced as rv:poll") from None


# JS: whether the neighbours of the sample on screen (data-next-url, data-prev-url) are fetched
# to the end: the page prefetches them, and a Resource Timing entry appears once one's body is in.
NEIGHBOURS_FETCHED_JS = """() => {
    const sample = document.getElementById("rv-sample");
    if (!sample) return false;
    const fetched = new Set(performance.getEntriesByType("resource").map(e => e.name));
    return [sample.dataset.nextUrl, sample.dataset.prevUrl].filter(Boolean)
        .every(url => fetched.has(new URL(url, location.href).href));
}"""


def wait_for_prefetch(page: Page) -> None:
    """Wait until the page has prefetched the neighbours of the sample on screen."""
    page.wait_for_function(NEIGHBOURS_FETCHED_JS)


# -- reading the page ------------------------------------------------------------------------
def url_path(page: Page) -> str:
    return urlsplit(page.url).path


def url_query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def position_text(rank: int, total: int) -> str:
    return f"Sample {rank} of {total}"


def shown(page: Page) -> tuple[int, int, int]:
    """(data-position, data-rank, data-total) of the sample on screen."""
    article = page.locator("article#rv-sample")
    return (
        int(article.get_attribute("data-position") or "-1"),
        int(article.get_attribute("data-rank") or "-1"),
        int(article.get_attribute("data-total") or "-1"),
    )


def blur(page: Page) -> None:
    """Keys go to the document again (after a select or input had the focus)."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def press_and_expect(page: Page, key: str, rank: int, total: int) -> None:
    """Press `key` on the document and wait until sample `rank` of `total` is on screen."""
    page.keyboard.press(key)
    expect(page.locator("#rv-position")).to_have_text(position_text(rank, total))
    expect(page.locator("article#rv-sample")).to_have_attribute("data-rank", str(rank))


def walk_positions(page: Page) -> list[int]:
    """data-position of every sample of the current ordering, from the first by keyboard."""
    blur(page)
    _, rank, total = shown(page)
    if rank != 1:
        press_and_expect(page, "Home", 1, total)
    positions = [shown(page)[0]]
    for rank in range(2, total + 1):
        press_and_expect(page, "ArrowRight", rank, total)
        positions.append(shown(page)[0])
    return positions


def mark_document(page: Page) -> None:
    """Tag this document; `same_document` tells whether a navigation kept it (JS, no reload)."""
    page.evaluate("() => { window.__rvTestMark = 1; }")


def same_document(page: Page) -> bool:
    return page.evaluate("() => window.__rvTestMark === 1")


def save_screenshot(page: Page, name: str) -> Path:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def open_indexed_trends(page: Page, url: str) -> Page:
    """The trends page at `url`, once it says every step is indexed."""
    page.goto(url)
    expect(page.locator("#rv-trends-progress")).to_have_attribute("data-done", "true")
    return page
