"""A user regex cannot stall the viewer (issue 26, item 1), against a real `visualize` process.

Python's `re` held the GIL through a catastrophic match: `^(\\w+\\s?)+[.!?]$` (`regex=1`) over a
long response froze every request of the process until gunicorn killed the worker, dropping
the requests in flight; marking `x*` on the sample page of a 20 MB response took 8 s more than
the page itself. Patterns now run on RE2 (linear time, the GIL released while it matches).

The bounds here are wall-clock ones because the issue states them ("a sample page answers in
its usual time"): generous ones, 2 s for a page that takes about 0.1 s, so a loaded machine
does not fail them while a frozen process (minutes) always does.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.support.servers import ServerProcess, loads_strict, request, run_visualize

pytestmark = pytest.mark.e2e

CATASTROPHIC = r"^(\w+\s?)+[.!?]$"  # exponential for a backtracking engine on a long text
LONG_RESPONSE_BYTES = 20_000_000
USUAL = 2.0  # seconds: a small sample page's "usual time", generously (it takes ~0.1 s)
OVERHEAD = 3.0  # seconds a search's marks may add to the 20 MB sample page (they added 8 s)
PATIENCE = 120.0  # seconds a request may take before the test gives up on it
PROBE_PATIENCE = 10.0  # ...and the request timed against USUAL (a frozen server fails sooner)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """train/1: a short sample, then one with a 20 MB response of words without an end mark
    (what the catastrophic pattern backtracks over); train/2: four short samples."""
    data = tmp_path_factory.mktemp("stall") / "data"
    (data / "train").mkdir(parents=True)
    words = ("the model answers so we get a result and then " * 500_000)[:LONG_RESPONSE_BYTES]
    step_1 = [
        {"sample_index": 0, "prompt": "Say hi.", "response": "A short answer.", "reward": 1.0},
        {"sample_index": 1, "prompt": "Talk.", "response": words.strip(), "reward": 0.0},
    ]
    step_2 = [
        {"sample_index": i, "prompt": "Say hi.", "response": f"Hello {i}.", "reward": 1.0}
        for i in range(4)
    ]
    for step, records in ((1, step_1), (2, step_2)):
        lines = "".join(json.dumps(record) + "\n" for record in records)
        (data / "train" / f"{step}.jsonl").write_text(lines)
    with run_visualize(data, "--disk-cache", "off") as running:
        for path in ("/train/1/sample/1/", "/train/2/sample/0/"):  # indexed before any timing
            assert request(running.url(path), timeout=PATIENCE)[0] == 200
        yield running


def timed_get(
    server: ServerProcess, path: str, params: dict[str, str], patience: float = PATIENCE
) -> tuple[float, int, bytes]:
    url = server.url(path) + ("?" + urlencode(params) if params else "")
    started = time.monotonic()
    status, _, body = request(url, timeout=patience)
    return time.monotonic() - started, status, body


def probe(server: ServerProcess, path: str) -> None:
    """`path` answers in its usual time."""
    elapsed, status, _ = timed_get(server, path, {}, PROBE_PATIENCE)
    assert status == 200 and elapsed < USUAL, f"{status} after {elapsed:.2f} s"


class InBackground(threading.Thread):
    """One request in a thread; its answer (or the error that replaced it) kept."""

    def __init__(self, server: ServerProcess, path: str, **params: str) -> None:
        super().__init__(daemon=True)
        self.args_ = (server, path, params)
        self.answer: tuple[float, int, bytes] | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        server, path, params = self.args_
        try:
            self.answer = timed_get(server, path, params)
        except BaseException as exc:  # a dropped connection or a timeout: the test says which
            self.error = exc

    def result(self) -> tuple[float, int, bytes]:
        self.join(PATIENCE)
        assert not self.is_alive(), f"no answer in {PATIENCE} s"
        assert self.error is None, f"the request failed: {self.error!r}"
        assert self.answer is not None
        return self.answer


def test_a_sample_page_answers_in_its_usual_time_while_a_catastrophic_search_runs(
    server: ServerProcess,
) -> None:
    bad = InBackground(  # in step order: the long response's step is searched as designed
        server,
        "/api/jsonl/train/search",
        q=CATASTROPHIC,
        regex="1",
        field="response",
        order="oldest",
    )
    bad.start()
    time.sleep(0.3)  # under way: the step is indexed, so it is matching by now
    probe(server, "/train/2/sample/0/")
    # The search itself ends with an answer: every short sample ends with a full stop, the
    # long one does not.
    _, status, body = bad.result()
    data: Any = loads_strict(body)
    assert status == 200, data
    hits = [(h["step"], h["position"]) for h in data["hits"]]
    assert hits == [(1, 0), (2, 0), (2, 1), (2, 2), (2, 3)] and data["done"] is True


def test_the_search_page_with_a_catastrophic_pattern_answers(server: ServerProcess) -> None:
    page = InBackground(server, "/train/search/", q=CATASTROPHIC, regex="1")
    page.start()
    time.sleep(0.3)
    probe(server, "/api/view/train/2/sample/1")
    _, status, body = page.result()
    assert status == 200 and b'class="rv-hit"' in body


@pytest.mark.parametrize("pattern", ["x*", CATASTROPHIC])
def test_marking_a_search_on_a_20_mb_sample_page_is_bounded(
    server: ServerProcess, pattern: str
) -> None:
    plain, status, _ = timed_get(server, "/train/1/sample/1/", {})
    assert status == 200
    marked = InBackground(server, "/train/1/sample/1/", q=pattern, regex="1")
    marked.start()
    time.sleep(0.3)
    probe(server, "/train/2/sample/0/")
    took, status, body = marked.result()
    assert status == 200 and b'id="rv-search-nav"' in body
    assert took < plain + OVERHEAD, f"{took:.2f} s with the search, {plain:.2f} s without"
