"""A page of samples is read with the step file opened once, runs of neighbours in one pread,
and gives exactly what reading each sample alone gives (unreadable lines included)."""

from __future__ import annotations

import json

import pytest
from django.core.cache import caches

import rollouts.store.index as index_module
import rollouts.store.lines as lines_module
from rollouts.store.errors import NotFound, StepChanged, UnreadableLine
from rollouts.store.index import StepIndex
from tests.support.data import sample

PREFIX = "/portal/rollouts"  # tests/urls.py
LINES = [json.dumps(sample(i, response=f"answer {i}")) + "\n" for i in range(12)]
LINES[4] = "{not json\n"
LINES[9] = "[1, 2]\n"  # JSON, but not an object


@pytest.fixture
def index(write_step) -> StepIndex:
    path = write_step("train", 0, LINES)
    return StepIndex.build(path, "train/0.jsonl")


def alone(index: StepIndex, position: int) -> tuple:
    try:
        got = index.read(position)
    except UnreadableLine as exc:
        return ("unreadable", exc.line, exc.reason)
    return (got.position, got.line, got.data, got.decoded)


def together(found) -> tuple:
    if isinstance(found, UnreadableLine):
        return ("unreadable", found.line, found.reason)
    return (found.position, found.line, found.data, found.decoded)


@pytest.mark.parametrize(
    "positions",
    [list(range(12)), [3, 4, 5], [11, 0, 7, 7, 8, 9, 2], [9], []],
    ids=["all", "a run over a bad line", "scattered and repeated", "one bad", "none"],
)
def test_reading_many_gives_what_reading_each_alone_gives(index, positions):
    got = [together(found) for found in index.read_many(positions)]
    assert got == [alone(index, p) for p in positions]
    assert [g[0] for g in got if g[0] != "unreadable"] == [p for p in positions if p not in (4, 9)]


def test_an_unreadable_line_names_its_line_and_the_others_still_come(index):
    got = list(index.read_many([3, 4, 5]))
    assert isinstance(got[1], UnreadableLine) and got[1].line == 5
    assert [s.decoded.value("sample_index") for s in (got[0], got[2])] == [3, 5]


@pytest.mark.parametrize("position", [12, -1])
def test_a_position_outside_the_step_is_not_found_before_anything_is_read(index, position):
    with pytest.raises(NotFound, match=f"no sample at position {position}"):
        list(index.read_many([0, position]))


def test_a_file_rewritten_under_the_reader_stops_it(index, write_step, monkeypatch):
    monkeypatch.setattr(lines_module, "READ_BLOCK_BYTES", 1)  # one pread, one check per record
    reading = index.read_many(list(range(12)))
    first = next(reading)
    assert first.decoded.value("sample_index") == 0
    write_step("train", 0, ['{"other": 1}\n'] * 12)  # same path, other bytes, shorter
    with pytest.raises(StepChanged):
        list(reading)


def test_the_api_page_opens_its_step_once(settings, data_dir, write_step, client, monkeypatch):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    write_step("train", 0, [sample(i) for i in range(80)])
    opened: list[str] = []
    real_open = index_module.StepIndex._open

    def counting_open(self):
        opened.append(self.name)
        return real_open(self)

    client.get(f"{PREFIX}/api/jsonl/train/file/0.jsonl/samples?page=1&page_size=50")  # index built
    monkeypatch.setattr(index_module.StepIndex, "_open", counting_open)
    answer = client.get(f"{PREFIX}/api/jsonl/train/file/0.jsonl/samples?page=2&page_size=50")
    body = json.loads(b"".join(answer.streaming_content))
    assert [s["sample_index"] for s in body["samples"]] == list(range(50, 80))
    assert opened == ["train/0.jsonl"]
