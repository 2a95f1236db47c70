"""Reading TensorBoard event files (issue 17) with the store's own reader, on files the tests
write with tensorboardX (both value encodings) or frame record by record (to cut or damage them).

Here, not in tests/unit: importing tensorboard's checksum module and tensorboardX costs about
half a second per process (numpy, protobuf), more than the fast tier can spend.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from rollouts.store.disk.cache import DiskCache
from rollouts.store.scalars import ScalarStore, TensorBoardDir
from rollouts.store.scalars.store import CACHE_MIN_BYTES
from tests.support.events import (
    event_file,
    record,
    scalar_event,
    tensor_summary,
    write_scalars,
    writer,
)

pytestmark = pytest.mark.e2e


def store_of(root: Path, disk: DiskCache | None = None) -> ScalarStore:
    return ScalarStore(TensorBoardDir(root.resolve(), root.name, "test"), disk)


def values(store: ScalarStore, tag: str) -> list[tuple[int, float]]:
    return [(step, value) for step, value, _ in store.points(tag)]


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "tensorboard_log"
    path.mkdir()
    return path


@pytest.mark.parametrize("style", ["simple", "tensor", "packed"])
def test_both_value_encodings_read_the_same_numbers(board: Path, style: str) -> None:
    scalars = [("train/kl_loss", step, 0.25 * step) for step in range(4)]
    write_scalars(board, scalars, style=style)
    store = store_of(board)
    assert store.refresh()
    assert values(store, "train/kl_loss") == [(0, 0.0), (1, 0.25), (2, 0.5), (3, 0.75)]


def test_a_double_tensor_and_other_plugins_tensors(board: Path) -> None:
    from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
    from tensorboardX.proto.tensor_pb2 import TensorProto

    w = writer(board)
    w.file_writer.add_summary(tensor_summary("eval/acc", 0.125, double=True), 3)
    text = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    not_scalar = TensorProto(dtype=7, string_val=[b"hello"])  # a text summary: no scalar
    w.file_writer.add_summary(
        Summary(value=[Summary.Value(tag="notes", tensor=not_scalar, metadata=text)]), 3
    )
    w.close()
    store = store_of(board)
    store.refresh()
    assert store.tag_names() == ["eval/acc"]
    assert values(store, "eval/acc") == [(3, 0.125)]


def test_a_growing_file_is_read_from_where_the_last_read_stopped(board: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    first = b"".join(record(scalar_event("train/loss", s, float(s), 10.0 + s)) for s in range(3))
    path.write_bytes(first)
    store = store_of(board)
    store.refresh()
    state = store.files[path.name]
    assert (state.records_read, state.bytes_read) == (3, len(first))
    more = b"".join(record(scalar_event("train/loss", s, float(s), 10.0 + s)) for s in (3, 4))
    with path.open("ab") as f:
        f.write(more)
    assert store.refresh()
    # Only the two new records were read: the first three were not read again.
    assert (state.records_read, state.bytes_read) == (5, len(first) + len(more))
    assert [s for s, _ in values(store, "train/loss")] == [0, 1, 2, 3, 4]
    version = store.version
    assert not store.refresh()  # an unchanged file: nothing read, nothing new
    assert (state.records_read, store.version) == (5, version)


def test_a_half_written_last_record_waits_for_its_end(board: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    whole = record(scalar_event("train/loss", 0, 1.0))
    last = record(scalar_event("train/loss", 1, 2.0))
    cut = 7 + len(last) // 2  # through the header, into the data
    path.write_bytes(whole + last[:cut])
    store = store_of(board)
    store.refresh()
    state = store.files[path.name]
    assert values(store, "train/loss") == [(0, 1.0)]
    assert state.offset == len(whole) and state.error is None
    with path.open("ab") as f:
        f.write(last[cut:])
    store.refresh()
    assert values(store, "train/loss") == [(0, 1.0), (1, 2.0)]
    assert state.records_read == 2


def test_a_second_event_file_joins_and_its_later_write_wins(board: Path) -> None:
    old = board / "events.out.tfevents.1.host"
    old.write_bytes(
        b"".join(record(scalar_event("train/loss", s, 1.0, 100.0 + s)) for s in range(3))
    )
    store = store_of(board)
    store.refresh()
    # The run restarted from step 2 and wrote a new file (in a subdirectory, as some loggers do).
    (board / "resumed").mkdir()
    new = board / "resumed" / "events.out.tfevents.2.host"
    new.write_bytes(b"".join(record(scalar_event("train/loss", s, 5.0, 200.0 + s)) for s in (2, 3)))
    assert store.refresh()
    assert values(store, "train/loss") == [(0, 1.0), (1, 1.0), (2, 5.0), (3, 5.0)]
    assert sorted(store.files) == [
        "events.out.tfevents.1.host",
        "resumed/events.out.tfevents.2.host",
    ]
    new.unlink()  # gone: its scalars leave the curve
    assert store.refresh()
    assert values(store, "train/loss") == [(0, 1.0), (1, 1.0), (2, 1.0)]


def test_a_damaged_record_stops_the_read_with_a_message(board: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    good = record(scalar_event("train/loss", 0, 1.0))
    bad = bytearray(record(scalar_event("train/loss", 1, 2.0)))
    bad[14] ^= 0xFF  # a byte of the event's data: its checksum no longer matches
    path.write_bytes(good + bytes(bad) + record(scalar_event("train/loss", 2, 3.0)))
    garbage = board / "events.out.tfevents.2.host"
    garbage.write_bytes(b"this is not an event file at all, just text")
    store = store_of(board)
    store.refresh()
    assert values(store, "train/loss") == [(0, 1.0)]
    files = {f["name"]: f for f in store.source()["files"]}
    assert files[path.name]["error"] == f"a damaged record (checksum) at byte {len(good)}"
    assert files[garbage.name]["error"] == "a damaged record header at byte 0"
    assert "/" not in str(files[path.name]["error"])  # no path in what pages show


def test_many_records_of_one_length_are_checked_together(board: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    frames = [record(scalar_event("train/loss", s, float(s), 1.0)) for s in range(10, 60)]
    assert len({len(f) for f in frames}) == 1  # one length: checked side by side (numpy)
    path.write_bytes(b"".join(frames))
    whole = store_of(board)
    whole.refresh()
    assert [s for s, _ in values(whole, "train/loss")] == list(range(10, 60))
    damaged = bytearray(b"".join(frames))
    damaged[30 * len(frames[0]) + 20] ^= 0x01  # one bit of the 31st record's data
    path.write_bytes(bytes(damaged))
    store = store_of(board)
    store.refresh()
    assert [s for s, _ in values(store, "train/loss")] == list(range(10, 40))
    error = store.files[path.name].error
    assert error == f"a damaged record (checksum) at byte {30 * len(frames[0])}"


def test_a_rewritten_file_is_read_again_from_the_start(board: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event("a", s, 1.0)) for s in range(4)))
    store = store_of(board)
    store.refresh()
    path.write_bytes(record(scalar_event("a", 0, 9.0)))  # shorter: rewritten, not grown
    assert store.refresh()
    assert values(store, "a") == [(0, 9.0)]


def test_a_restart_reads_nothing_the_disk_cache_has(board: Path, tmp_path: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event("a", s, float(s))) for s in range(200)))
    assert path.stat().st_size >= CACHE_MIN_BYTES  # smaller ones are read again (cheaper)
    disk = DiskCache(tmp_path / "cache")
    store_of(board, disk).refresh()
    restarted = store_of(board, disk)  # a new viewer process: a new store, the same disk cache
    restarted.refresh()
    assert restarted.records_read() == 0
    assert values(restarted, "a") == [(s, float(s)) for s in range(200)]
    with path.open("ab") as f:  # written while the viewer was down: read from the entry's offset
        f.write(record(scalar_event("a", 200, 5.0)))
    again = store_of(board, disk)
    again.refresh()
    assert again.records_read() == 1
    assert values(again, "a")[-1] == (200, 5.0)
    assert not list(board.rglob("*.msgpack"))  # the TensorBoard directory is never written


def test_a_small_file_is_read_again_rather_than_kept_on_disk(board: Path, tmp_path: Path):
    """Below CACHE_MIN_BYTES, reading a file costs less than looking its entry up."""
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event("a", s, float(s))) for s in range(5)))
    disk = DiskCache(tmp_path / "cache")
    store_of(board, disk).refresh()
    assert not list((tmp_path / "cache").glob("scalars-*.msgpack"))
    restarted = store_of(board, disk)
    restarted.refresh()
    assert restarted.records_read() == 5
    assert values(restarted, "a") == [(s, float(s)) for s in range(5)]


def test_a_damaged_disk_cache_entry_is_a_miss(board: Path, tmp_path: Path) -> None:
    path = board / "events.out.tfevents.1.host"
    path.write_bytes(b"".join(record(scalar_event("a", s, float(s))) for s in range(200)))
    disk = DiskCache(tmp_path / "cache")
    store_of(board, disk).refresh()
    (entry,) = (tmp_path / "cache").glob("scalars-*.msgpack")
    entry.write_bytes(entry.read_bytes()[:20])
    fresh = store_of(board, disk)
    fresh.refresh()
    assert fresh.records_read() == 200  # read from the file instead
    assert len(values(fresh, "a")) == 200


def test_nan_and_infinity_are_kept_as_such_in_the_store(board: Path) -> None:
    write_scalars(board, [("a", 0, math.nan), ("a", 1, math.inf), ("a", 2, 1.0)])
    store = store_of(board)
    store.refresh()
    got = values(store, "a")
    assert math.isnan(got[0][1]) and got[1][1] == math.inf and got[2] == (2, 1.0)
    assert event_file(board).stat().st_size > 0


def test_the_demo_runs_scalars_are_read_back_as_written(tmp_path: Path):
    """`python -m rollouts.demo` writes each run's scalars beside rollout_result/ with
    TensorBoard's own writer; the reader finds them all, on the train steps' axis."""
    from rollouts.demo.cli import main
    from rollouts.demo.scalars import demo_scalars

    assert main([str(tmp_path / "runs"), "--runs", "--steps", "6", "--samples", "8"]) == 0
    for name, curve in (("steady-rise", "rise"), ("collapse", "collapse")):
        store = store_of(tmp_path / "runs" / name / "tensorboard_log")
        store.refresh()
        expected = demo_scalars(6, curve)
        assert sorted(store.tag_names()) == sorted(expected[0])
        for tag in expected[0]:  # float32 on disk
            got = values(store, tag)
            assert [step for step, _ in got] == list(range(6))
            assert [v for _, v in got] == pytest.approx([expected[s][tag] for s in range(6)])
    collapse = store_of(tmp_path / "runs" / "collapse" / "tensorboard_log")
    collapse.refresh()
    rise = store_of(tmp_path / "runs" / "steady-rise" / "tensorboard_log")
    rise.refresh()
    # The collapse drifts past the trends' "KL too large" line (0.05); the healthy run does not.
    assert values(collapse, "train/kl_loss")[-1][1] > 0.05 > values(rise, "train/kl_loss")[-1][1]


def test_the_demo_module_runs_as_a_script(tmp_path: Path):
    """`python -m rollouts.demo`, in a fresh interpreter: the run, and beside rollout_result/
    the scalars a run with --use-tensorboard writes (the test extra has tensorboard). Here, not
    in tests/unit/test_demo.py, which calls `main` in-process: a child that imports tensorboard
    cost the fast tier 0.5 to 2 s."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "rollouts.demo", str(tmp_path), "--steps", "2", "--samples", "8"],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(tmp_path / "rollout_result") in done.stdout
    assert (tmp_path / "rollout_result" / "train" / "1.jsonl").is_file()
    assert [p.name for p in (tmp_path / "tensorboard_log").iterdir()] == [
        "events.out.tfevents.1764547200.demo"
    ]
