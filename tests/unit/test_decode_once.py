"""A step whose disk cache entry another process wrote after the caller looked for it is not
decoded again: `decode_step_unless_busy` takes the step's lock, then reads the entry before it
decodes. (Two gunicorn workers indexing the same runs did decode a step twice between one's
look for the entry and the other's release of the lock: tests/e2e/test_many_runs.py.)"""

from __future__ import annotations

import os
from pathlib import Path

from rollouts.store.history import decode_step_unless_busy
from tests.support.data import relax_line, sample


def write_step(directory: Path, count: int) -> Path:
    directory.mkdir(parents=True)
    path = directory / "0.jsonl"
    path.write_text("".join(relax_line(sample(i)) for i in range(count)), encoding="utf-8")
    return path


def entries(cache: Path) -> dict[str, int]:
    return {entry.name: entry.inode() for entry in os.scandir(cache)}


def test_an_entry_written_meanwhile_is_read_not_written_again(tmp_path):
    path = write_step(tmp_path / "data" / "train", 6)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    first = decode_step_unless_busy(str(path), "train/0.jsonl", str(cache))
    assert first is not None
    written = entries(cache)
    assert len(written) == 1  # the step's entry, and no lock left behind
    # Another caller that looked before the entry was there: it finds the entry, not a decode.
    again = decode_step_unless_busy(str(path), "train/0.jsonl", str(cache))
    assert again is not None
    assert again[0] == first[0] and again[1]["samples"] == first[1]["samples"] == 6
    assert entries(cache) == written  # the same file: not written again


def test_a_step_changed_since_its_entry_is_decoded_again(tmp_path):
    path = write_step(tmp_path / "data" / "train", 6)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    decode_step_unless_busy(str(path), "train/0.jsonl", str(cache))
    with path.open("a", encoding="utf-8") as f:
        f.write(relax_line(sample(6)))
    found = decode_step_unless_busy(str(path), "train/0.jsonl", str(cache))
    assert found is not None and found[1]["samples"] == 7
