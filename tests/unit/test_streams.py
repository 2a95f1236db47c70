"""Streamed responses whose file changes after the 200 has gone out (issue 12, section 2): the
body still closes as valid JSON, with `complete: false` and the reason, never a path.

The streaming iterators are driven by hand: read the first chunk, change the real file, read
the rest. Steps are read in small blocks here (READ_BLOCK_BYTES) so that a few kB span several.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.cache import caches

from rollouts.store import lines
from rollouts.web.responses import stream_object
from tests.support.data import relax_line, sample
from tests.support.pages import PREFIX

RECORDS = 40


@pytest.fixture(autouse=True)
def _app(settings, data_dir, monkeypatch):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    caches["rollouts"].clear()
    monkeypatch.setattr(lines, "READ_BLOCK_BYTES", 1024)  # several blocks per step


def padded(i: int) -> dict:
    return sample(i, response="x" * 300)  # ~500 bytes a line: two a block


def step(write_step) -> Path:
    return write_step("train", 3, [padded(i) for i in range(RECORDS)])


def start(client, path: str) -> tuple[Iterator[bytes], bytes]:
    response = client.get(PREFIX + path)
    assert response.status_code == 200 and response.streaming
    chunks = iter(response.streaming_content)
    first = next(chunks) + next(chunks)  # the head, and the first sample
    return chunks, first


def finish(chunks: Iterator[bytes], first: bytes) -> dict:
    body = first + b"".join(chunks)
    return json.loads(body.decode("utf-8"))  # valid JSON, whatever happened


FILE = "/api/jsonl/train/file/3.jsonl"
SAMPLES = f"{FILE}/samples?page_size=40"


@pytest.mark.parametrize("path", [FILE, SAMPLES])
def test_an_untouched_stream_says_it_is_complete(client, write_step, path):
    step(write_step)
    data = finish(*start(client, path))
    assert data["complete"] is True and "error" not in data
    assert [s["sample_index"] for s in data["samples"]] == list(range(RECORDS))


@pytest.mark.parametrize("path", [FILE, SAMPLES])
def test_a_file_truncated_mid_stream_closes_as_incomplete(client, write_step, path):
    file = step(write_step)
    chunks, first = start(client, path)
    with file.open("r+b") as f:
        f.truncate(file.stat().st_size // 2)
    data = finish(chunks, first)
    assert data["complete"] is False
    assert data["error"] == "train/3.jsonl changed while being read (rewritten or truncated)"
    assert 1 <= len(data["samples"]) < RECORDS
    # Whatever was sent is what the file held, never a torn line.
    assert all(s["response"] == "x" * 300 for s in data["samples"] if s is not None)


@pytest.mark.parametrize("path", [FILE, SAMPLES])
def test_a_file_rewritten_in_place_mid_stream_closes_as_incomplete(client, write_step, path):
    file = step(write_step)
    chunks, first = start(client, path)
    # Same size, other bytes: what a resumed run rewriting the step does.
    size = file.stat().st_size
    other = [relax_line(sample(100 + i, response="y" * 300)) for i in range(50)]
    rewritten = "".join(other).encode()
    file.write_bytes(rewritten[:size])
    os.utime(file, ns=(1, 1))  # and a visibly different mtime
    data = finish(chunks, first)
    assert data["complete"] is False and "changed while being read" in data["error"]
    assert all(s is None or s["sample_index"] < 100 for s in data["samples"])


def test_a_file_growing_mid_stream_is_fine(client, write_step):
    file = step(write_step)
    chunks, first = start(client, FILE)
    with file.open("ab") as f:
        f.write(relax_line(padded(RECORDS)).encode())
    data = finish(chunks, first)
    assert data["complete"] is True and data["total"] == RECORDS


@pytest.mark.parametrize("path", [FILE, SAMPLES])
def test_a_file_deleted_mid_stream_is_sent_whole_from_the_open_file(client, write_step, path):
    # A page and the whole-file dump each read through one open descriptor: the deleted file's
    # bytes are still there, so the answer completes, consistent, rather than stopping.
    file = step(write_step)
    chunks, first = start(client, path)
    file.unlink()
    data = finish(chunks, first)
    assert data["complete"] is True and "error" not in data
    assert [s["sample_index"] for s in data["samples"]] == list(range(RECORDS))


def test_an_os_error_mid_stream_is_named_without_its_path(tmp_path):
    secret = str(tmp_path / "train" / "3.jsonl")

    def items() -> Iterator[bytes]:
        yield b"1"
        raise PermissionError(errno.EACCES, "Permission denied", secret)

    body = b"".join(stream_object({"filename": "3.jsonl"}, "samples", items(), lambda: {}))
    data = json.loads(body)
    assert data == {
        "filename": "3.jsonl",
        "samples": [1],
        "complete": False,
        "error": "3.jsonl cannot be read: permission denied",
    }
    assert str(tmp_path) not in body.decode()


def test_an_unexpected_error_mid_stream_still_closes_the_json(caplog):
    def items() -> Iterator[bytes]:
        yield b'{"a": 1}'
        raise RuntimeError("/secret/path went wrong")

    body = b"".join(stream_object({"filename": "3.jsonl"}, "samples", items(), lambda: {"n": 1}))
    data = json.loads(body)
    assert data["complete"] is False and data["error"] == "internal error; see the server log"
    assert "/secret/path" not in body.decode() and "/secret/path" in caplog.text
