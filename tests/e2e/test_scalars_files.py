"""Issue 26, item 9, on the store itself: how many event files are read (and what is said when
not all are), what an unchanged poll looks at, a file rewritten while it is read, negative
steps, and files that are not regular files. Event files are framed here record by record.

Here, not in tests/unit: tensorboard's checksum module costs about half a second to import.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from rollouts.store.scalars import ScalarStore, TensorBoardDir, eventfile, records, store
from rollouts.store.scalars.discovery import MAX_EVENT_FILES
from rollouts.store.scalars.entry import encode_event_file, restore_event_file
from rollouts.store.scalars.eventfile import READ_ATTEMPTS, EventFile
from rollouts.store.scalars.store import FILES_LISTED
from tests.support.events import record, scalar_event

pytestmark = pytest.mark.e2e

STARTED = 1_700_000_000  # the writer's start time, as writers put it in the file's name
BLOCK_S = 10.0  # bound on a call that must not block (a FIFO); it returns in milliseconds


def store_of(root: Path, max_files: int = MAX_EVENT_FILES) -> ScalarStore:
    return ScalarStore(TensorBoardDir(root.resolve(), root.name, "test"), max_files=max_files)


def values(board: ScalarStore, tag: str) -> list[tuple[int, float]]:
    return [(step, value) for step, value, _ in board.points(tag)]


def restart_file(board: Path, k: int, tags: int = 2) -> Path:
    """The k-th restart's event file: its writer started at STARTED + k and logged step k."""
    path = board / f"events.out.tfevents.{STARTED + k}.host.{k}.0"
    path.write_bytes(
        b"".join(record(scalar_event(f"train/m{t}", k, k + t, STARTED + k)) for t in range(tags))
    )
    return path


def version_bytes(steps: int, fraction: float) -> bytes:
    """One file's bytes: steps 0..steps-1 of tag "a", each value `step + fraction`. Two
    versions differ in every value and are the same length; their wall times are equal."""
    return b"".join(record(scalar_event("a", s, s + fraction, 100.0 + s)) for s in range(steps))


def fractions(board: ScalarStore) -> set[float]:
    """Which version each value of tag "a" came from (its fractional part)."""
    return {value - step for step, value in values(board, "a")}


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "tensorboard_log"
    path.mkdir()
    return path


def test_ten_thousand_event_files_are_all_read_and_one_more_is_said(board: Path) -> None:
    assert MAX_EVENT_FILES == 10_000
    for k in range(MAX_EVENT_FILES):
        restart_file(board, k)
    reader = store_of(board)
    reader.refresh()
    source = reader.source()
    assert source["files_total"] == MAX_EVENT_FILES and source["message"] is None
    assert len(source["files"]) == FILES_LISTED  # the answer names the newest few
    assert [s for s, _ in values(reader, "train/m0")] == list(range(MAX_EVENT_FILES))
    # The 10,001st restart: the oldest file is left out, and every answer says so.
    restart_file(board, MAX_EVENT_FILES)
    assert reader.refresh()
    source = reader.source()
    assert source["message"].startswith("Read the newest 10,000 of 10,001 event files")
    steps = [s for s, _ in values(reader, "train/m0")]
    assert steps[0] == 1 and steps[-1] == MAX_EVENT_FILES and len(steps) == MAX_EVENT_FILES


def test_over_the_limit_the_newest_writers_files_are_read(board: Path) -> None:
    # Started at 999, 1000, ... 1004: by name, "1000" sorts before "999"; by time it is newer.
    for started in range(999, 1005):
        name = f"events.out.tfevents.{started}.host"
        (board / name).write_bytes(record(scalar_event("a", started, 1.0, started)))
    reader = store_of(board, max_files=4)
    reader.refresh()
    assert [s for s, _ in values(reader, "a")] == [1001, 1002, 1003, 1004]
    assert reader.source()["message"] == (
        "Read the newest 4 of 6 event files (at most 4 are read: those whose writer started last)"
    )


def test_an_unchanged_poll_looks_at_a_few_files_and_a_sweep_at_all(
    board: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "SWEEP_S", 3600.0)  # no sweep until the test asks for one
    for k in range(300):
        os.utime(restart_file(board, k), (STARTED + k, STARTED + k))
    reader = store_of(board)
    reader.refresh()
    assert reader.checked == 300  # the first refresh reads them all
    version = reader.version
    assert not reader.refresh()
    assert reader.checked == store.HOT_FILES and reader.version == version
    # The newest files are the ones looked at: one of them grows and is seen at once.
    newest = board / f"events.out.tfevents.{STARTED + 299}.host.299.0"
    with newest.open("ab") as f:
        f.write(record(scalar_event("train/m0", 300, 7.0, STARTED + 300)))
    assert reader.refresh() and values(reader, "train/m0")[-1] == (300, 7.0)
    # An old file written after a pause is seen by the next sweep, which looks at every file.
    oldest = board / f"events.out.tfevents.{STARTED}.host.0.0"
    with oldest.open("ab") as f:
        f.write(record(scalar_event("train/m1", -1, 5.0, STARTED)))
    reader.refresh()
    assert (-1, 5.0) not in values(reader, "train/m1")  # not among the hot files
    monkeypatch.setattr(store, "SWEEP_S", 0.0)
    assert reader.refresh() and reader.checked == 300
    assert values(reader, "train/m1")[0] == (-1, 5.0)


def test_a_negative_step_is_in_the_tags_and_in_the_series(board: Path) -> None:
    scalars = [("a", -5, 1.0), ("a", 0, 2.0), ("a", 3, 3.0)]
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event(t, s, v)) for t, s, v in scalars))
    reader = store_of(board)
    reader.refresh()
    (tag,) = reader.tags()
    assert (tag["points"], tag["first_step"], tag["last_step"]) == (3, -5, 3)
    assert values(reader, "a") == [(-5, 1.0), (0, 2.0), (3, 3.0)]


# -- a file rewritten while it is read --------------------------------------------------------
def hook_once(phase: str, action: Callable[[], object]) -> Callable[[str, Path], None]:
    done: list[bool] = []

    def hook(name: str, path: Path) -> None:
        if name == phase and not done:
            done.append(True)
            action()

    return hook


def test_a_rewrite_between_the_check_and_the_read_is_not_mixed_in(
    board: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(version_bytes(10, 0.25))
    reader = store_of(board)
    reader.refresh()
    with path.open("ab") as f:  # it grew: the next read goes on from where this one stopped
        f.write(version_bytes(15, 0.25)[len(version_bytes(10, 0.25)) :])
    # ...and between the check of its first bytes and the read, it is rewritten whole.
    rewrite = hook_once("checked", lambda: path.write_bytes(version_bytes(15, 0.75)))
    monkeypatch.setattr(eventfile, "phase_hook", rewrite)
    reader.refresh()
    assert fractions(reader) == {0.75} and len(values(reader, "a")) == 15


def test_a_rewrite_between_two_chunks_of_a_read_is_read_again(
    board: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(version_bytes(40, 0.25))
    monkeypatch.setattr(records, "CHUNK", 256)  # a read of several chunks
    rewrite = hook_once("chunk", lambda: path.write_bytes(version_bytes(40, 0.75)))
    monkeypatch.setattr(eventfile, "phase_hook", rewrite)
    reader = store_of(board)
    reader.refresh()
    assert fractions(reader) == {0.75} and len(values(reader, "a")) == 40


def test_a_rewrite_after_the_read_keeps_the_previous_version_until_one_read_holds(
    board: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(version_bytes(20, 0.25))
    reader = store_of(board)
    reader.refresh()
    version = reader.version
    flip = [0.25, 0.75]

    def always(name: str, _: Path) -> None:  # rewritten after every attempt read it
        if name == "read":
            path.write_bytes(version_bytes(20, flip[0]))
            flip.reverse()

    path.write_bytes(version_bytes(20, 0.75))
    monkeypatch.setattr(eventfile, "phase_hook", always)
    assert not reader.refresh()
    assert fractions(reader) == {0.25} and reader.version == version  # the old one, whole
    assert reader.files[path.name].pending
    assert reader.files[path.name].records_read == 20 * (1 + READ_ATTEMPTS)
    monkeypatch.setattr(eventfile, "phase_hook", None)
    path.write_bytes(version_bytes(20, 0.75))
    assert reader.refresh()
    assert fractions(reader) == {0.75} and not reader.files[path.name].pending


def test_a_file_rewritten_again_and_again_never_gives_a_mixed_answer(board: Path) -> None:
    """A writer rewrites the file in place (truncate, write) 400 times while the reader polls:
    each answer holds one version (or the start of one, as a file being written does)."""
    path = board / "events.out.tfevents.1.host"
    versions = [version_bytes(60, 0.25), version_bytes(60, 0.75)]
    path.write_bytes(versions[0])
    reader = store_of(board)
    stop = threading.Event()

    def rewrite() -> None:
        for n in range(400):
            with path.open("r+b") as f:
                f.truncate(0)
                f.write(versions[n % 2])
        stop.set()

    writer = threading.Thread(target=rewrite, daemon=True)
    writer.start()
    answers = mixed = 0
    while not stop.is_set() and answers < 5000:
        reader.refresh()
        answers += 1
        mixed += len(fractions(reader)) > 1
    writer.join(timeout=BLOCK_S)
    assert not writer.is_alive() and answers > 0
    assert mixed == 0


# -- files that are not regular files --------------------------------------------------------
def returns_within(call: Callable[[], object]) -> object:
    """`call()`'s result, failing (not hanging) when it blocks."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(timeout=BLOCK_S)
    assert result, f"blocked for more than {BLOCK_S} s"
    return result[0]


def test_a_fifo_named_like_an_event_file_is_neither_listed_nor_opened(board: Path) -> None:
    (board / "events.out.tfevents.1.host").write_bytes(record(scalar_event("a", 0, 1.0)))
    os.mkfifo(board / "events.out.tfevents.2.fifo")
    (board / "events.out.tfevents.3.link").symlink_to(board / "events.out.tfevents.2.fifo")
    reader = store_of(board)
    returns_within(reader.refresh)
    assert sorted(reader.files) == ["events.out.tfevents.1.host"]
    # Swapped in after the listing: opened without blocking, refused in one line.
    state = EventFile("events.out.tfevents.2.fifo", board / "events.out.tfevents.2.fifo")
    assert returns_within(state.refresh) == (True, False)
    assert state.error == "is not a regular file"
    blob = encode_event_file(reader.files["events.out.tfevents.1.host"])
    assert blob is not None
    assert returns_within(lambda: restore_event_file(state, blob)) == "it is not a regular file"
