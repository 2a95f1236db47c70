"""A big step opened partly scanned: the page of its first sample need not wait for the whole
file (issue 12, 7.3). The size threshold and the scan's chunk are made tiny, so a few hundred
bytes behave as a big step read in many chunks."""

from __future__ import annotations

import json
import re

import pytest
from django.core.cache import caches

from rollouts.store import Catalog, Selection
from rollouts.store import index as index_module
from rollouts.store import lines as lines_module
from rollouts.store.errors import StepChanged
from rollouts.views import samples as sample_views
from tests.support.data import sample
from tests.support.pages import PREFIX, page

RECORDS = 40


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch, settings, data_dir):
    monkeypatch.setattr(index_module, "PARTIAL_SCAN_MIN_BYTES", 0)
    monkeypatch.setattr(lines_module, "SCAN_CHUNK_BYTES", 256)
    monkeypatch.setattr(sample_views, "INLINE_COLUMNS_BYTES", 0)
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()


@pytest.fixture
def records() -> list[dict]:
    return [sample(i, reward=i / RECORDS) for i in range(RECORDS)]


@pytest.fixture
def held_back(monkeypatch):
    """No background scan or column pass (which scans to the end first): what a request sees
    before they finish is then certain."""
    monkeypatch.setattr(Catalog, "_finish_in_background", lambda self, index: None)
    monkeypatch.setattr(Catalog, "prepare_columns", lambda self, index: None)


def test_a_partial_index_knows_the_records_asked_for_and_finishes_on_demand(
    write_step, data_dir, records, held_back
):
    path = write_step("train", 0, records)
    catalog = Catalog(data_dir)
    index = catalog.open_step("train", "0.jsonl", records=1)
    assert not index.complete
    assert 2 <= len(index) < RECORDS  # the sample and the next one, not the whole file
    assert index.committed < path.stat().st_size
    assert json.loads(index.read(1).data) == records[1]
    # Reading past what is scanned scans the rest; so does asking for every record.
    assert json.loads(index.read(RECORDS - 1).data) == records[-1]
    assert index.complete and len(index) == RECORDS
    again = Catalog(data_dir).open_step("train", "0.jsonl", records=1)
    assert not again.complete
    assert catalog.open_step("train", "0.jsonl") is index
    assert len(Catalog(data_dir).open_step("train", "0.jsonl")) == RECORDS


def test_columns_and_orderings_count_every_record_of_a_partial_index(
    write_step, data_dir, records, held_back
):
    write_step("train", 0, records)
    catalog = Catalog(data_dir)
    index = catalog.open_step("train", "0.jsonl", records=0)
    assert not index.complete and not index.columns_ready
    best = catalog.ordering(index, Selection(sort="reward", descending=True))
    assert list(best) == list(reversed(range(RECORDS)))
    assert index.complete and index.columns_ready


def test_a_partial_index_of_a_file_that_grew_scans_on_to_the_new_end(
    write_step, data_dir, records, held_back
):
    path = write_step("train", 0, records)
    catalog = Catalog(data_dir)
    index = catalog.open_step("train", "0.jsonl", records=0)
    with path.open("a") as f:
        f.write(json.dumps(sample(RECORDS)) + "\n")
    assert len(catalog.open_step("train", "0.jsonl", records=0)) == RECORDS + 1
    assert index.complete


def test_a_partial_index_of_a_rewritten_file_says_so(write_step, data_dir, records, held_back):
    path = write_step("train", 0, records)
    index = Catalog(data_dir).open_step("train", "0.jsonl", records=0)
    path.write_text("".join(json.dumps(sample(i, reward=-1)) + "\n" for i in range(RECORDS)))
    with pytest.raises(StepChanged, match="changed while it was being indexed"):
        index.finish_scan()


def test_the_background_scan_completes_the_index(write_step, data_dir, records):
    write_step("train", 0, records)
    catalog = Catalog(data_dir)
    index = catalog.open_step("train", "0.jsonl", records=0)
    with index.lock:  # taken by the background scan until it is done
        pass
    index.finish_scan()  # at most waits for it
    assert index.complete and len(index) == RECORDS


def position_text(html: str) -> str:
    found = re.search(r'id="rv-position"[^>]*>([^<]*)<', html)
    assert found is not None
    return found.group(1)


def test_the_first_sample_page_of_a_big_step_counts_on_while_it_shows(
    client, write_step, records, held_back
):
    path = write_step("train", 0, records)
    first = page(client, "/train/0/")
    counted = re.fullmatch(r"Sample 1 of (\d+)\+", position_text(first.html))
    assert counted is not None
    shown = int(counted.group(1))
    assert 2 <= shown < RECORDS
    assert first.by_id["rv-sample"]["data-position"] == "0"
    assert first.by_id["rv-sample"]["data-next-url"].endswith("/sample/1/")
    # The header's step size is what is counted so far: the next poll reports the step grown...
    header = first.by_id["rv-header"]
    assert int(header["data-step-size"]) < path.stat().st_size
    response = client.get(
        f"{PREFIX}/api/jsonl/train/poll",
        {"after": 0, "size": path.stat().st_size, "watch": "0",
         "watch_size": header["data-step-size"]},
    )  # fmt: skip
    watched = json.loads(response.content)["watched"]
    assert watched == {"name": "0", "size_bytes": path.stat().st_size, "records": RECORDS,
                       "partial_tail_bytes": 0}  # fmt: skip
    # ...and the page read again (what the poll's refresh does) has every record.
    again = page(client, "/train/0/")
    assert position_text(again.html) == f"Sample 1 of {RECORDS}"
    assert int(again.by_id["rv-header"]["data-step-size"]) == path.stat().st_size


def test_a_link_deep_into_a_big_step_scans_as_far_as_it_needs(
    client, write_step, records, held_back
):
    write_step("train", 0, records)
    deep = page(client, "/train/0/sample/30/")
    assert re.fullmatch(r"Sample 31 of (\d+)\+?", position_text(deep.html))
    assert deep.by_id["rv-sample"]["data-next-url"].endswith("/sample/31/")
    twin = json.loads(client.get(f"{PREFIX}/api/view/train/0/sample/1").content)
    assert twin["records"] == RECORDS and twin["total"] == RECORDS  # JSON counts them all
