"""The original API's first page of a big step goes out without waiting for the newline scan's
end or for a column pass, whatever was requested before it (here: the sample page, which starts
both in the background). The step is small; the size limits are lowered to make it "big"."""

from __future__ import annotations

import json
import threading

import pytest

import rollouts.store.index as index_module
import rollouts.store.lines as lines_module
import rollouts.views.api as api_module
import rollouts.views.samples as samples_module
from tests.support.data import sample

PREFIX = "/portal/rollouts"
RECORDS = 200
HANG_GUARD_S = 30  # only a broken build waits this long: the test then fails, it never hangs


pytestmark = pytest.mark.usefixtures("app_data_dir")  # tests/conftest.py


@pytest.fixture
def big(monkeypatch, write_step):
    """A step that counts as big, and every background scan of it held until `release` is set."""
    write_step("train", 0, [sample(i, response="x" * 2000) for i in range(RECORDS)])
    monkeypatch.setattr(index_module, "PARTIAL_SCAN_MIN_BYTES", 1)
    monkeypatch.setattr(lines_module, "SCAN_CHUNK_BYTES", 4096)
    monkeypatch.setattr(samples_module, "INLINE_COLUMNS_BYTES", 1)
    monkeypatch.setattr(api_module, "INLINE_COLUMNS_BYTES", 1, raising=False)
    release, held = threading.Event(), threading.Event()
    real_scan = index_module.scan_lines

    def scan_lines(*args, **kwargs):
        # The background threads: "scan train/0.jsonl" and "columns train/0.jsonl". Whichever
        # runs first holds the index's lock through its scan (the column pass: for seconds).
        if threading.current_thread().name.startswith(("scan ", "columns ")):
            held.set()
            release.wait(2 * HANG_GUARD_S)  # longer than the test waits: it fails first
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(index_module, "scan_lines", scan_lines)
    yield release, held
    release.set()


def test_the_first_page_goes_out_while_the_scan_and_the_column_pass_hold_the_step(client, big):
    release, held = big
    page = client.get(PREFIX + "/train/0/sample/30/")  # opens the step partly scanned
    assert page.status_code == 200
    assert held.wait(HANG_GUARD_S), "no background scan started"
    chunks: list[bytes] = []
    samples_out = threading.Event()

    def fetch() -> None:
        response = client.get(PREFIX + "/api/jsonl/train/file/0.jsonl/samples?page=1&page_size=10")
        for chunk in response.streaming_content:
            chunks.append(chunk)
            if len(chunks) == 11:  # the head, then ten samples: all before the totals
                samples_out.set()

    reader = threading.Thread(target=fetch)
    reader.start()
    try:
        assert samples_out.wait(HANG_GUARD_S), "the page waited for the scan or the columns"
        assert not release.is_set()  # the scan was still held when the samples were out
    finally:
        release.set()
        reader.join(HANG_GUARD_S)
    assert not reader.is_alive()
    body = json.loads(b"".join(chunks))
    assert [s["sample_index"] for s in body["samples"]] == list(range(10))
    assert body["positions"] == list(range(10)) and body["complete"] is True
    # The totals follow the samples, once the scan is done.
    assert (body["total"], body["total_pages"]) == (RECORDS, RECORDS // 10)
    assert body["columns_ready"] is False


def test_a_later_page_of_a_big_step_and_a_sorted_page_count_every_record(client, big):
    release, _ = big
    release.set()  # nothing held: the usual order of things
    response = client.get(PREFIX + "/api/jsonl/train/file/0.jsonl/samples?page=20&page_size=10")
    body = json.loads(b"".join(response.streaming_content))
    assert [s["sample_index"] for s in body["samples"]] == list(range(190, 200))
    assert (body["total"], body["total_pages"], body["complete"]) == (RECORDS, 20, True)
    response = client.get(
        PREFIX + "/api/jsonl/train/file/0.jsonl/samples?sort=sample_index&order=desc&page_size=5"
    )
    body = json.loads(b"".join(response.streaming_content))
    assert [s["sample_index"] for s in body["samples"]] == [199, 198, 197, 196, 195]
    assert (body["total"], body["columns_ready"]) == (RECORDS, True)


def test_a_reader_waits_for_the_scan_not_for_the_column_pass_that_holds_the_lock(
    monkeypatch, write_step
):
    """A column pass holds the index's lock for seconds: it scans the rest of the file first,
    then decodes. A reader that needs the whole line table waits for the scan's end only."""
    path = write_step("train", 0, [sample(i, response="x" * 2000) for i in range(RECORDS)])
    monkeypatch.setattr(index_module, "PARTIAL_SCAN_MIN_BYTES", 1)
    monkeypatch.setattr(lines_module, "SCAN_CHUNK_BYTES", 4096)
    index = index_module.StepIndex.build(path, "train/0.jsonl", records=5)
    assert not index.complete
    locked, go, decoding, release = (threading.Event() for _ in range(4))

    def column_pass() -> None:  # as `ensure_columns` does, with its decoding held
        with index.lock:
            locked.set()
            go.wait(HANG_GUARD_S)
            index.finish_scan()
            decoding.set()
            release.wait(HANG_GUARD_S)

    def reader() -> None:
        index.finish_scan()

    passer = threading.Thread(target=column_pass)
    passer.start()
    assert locked.wait(HANG_GUARD_S)
    waiting = threading.Thread(target=reader)
    waiting.start()  # finds the lock taken and the scan not done
    go.set()
    try:
        waiting.join(HANG_GUARD_S)
        assert not waiting.is_alive(), "the reader waited for the whole column pass"
        assert decoding.wait(HANG_GUARD_S) and not release.is_set()  # still "decoding"
    finally:
        release.set()
        passer.join(HANG_GUARD_S)
    assert index.complete and len(index) == RECORDS
