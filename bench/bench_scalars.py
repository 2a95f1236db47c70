"""Reading a run's TensorBoard scalars: cold, after a restart (disk cache), an unchanged poll.

    .venv/bin/python bench/bench_scalars.py                     # 300 steps x 200 tags
    .venv/bin/python bench/bench_scalars.py --steps 1000 --tags 50
    .venv/bin/python bench/bench_scalars.py --files 10000        # a run restarted 10,000 times
    .venv/bin/python bench/bench_scalars.py --files 10000 --repo /tmp/old-checkout  # compare

`--files N` measures a directory of N small event files instead (a run that restarted N times,
each file `--tags` scalars at one step, dated a second apart): the cold read (how many files it
read), the read after a restart, the unchanged poll over all of them, a poll that checks every
file (the reader's sweep), a poll after one more file is written (the next restart), and the
unchanged poll of a directory of one such file, all in one child process. `--repo` runs the
reader of another checkout (the figures of a change, before and after, from the same bench).

Writes `--steps` x `--tags` scalars with tensorboardX (torch's SummaryWriter format: one event
per scalar, `simple_value`) into a temp dir, then, each in a fresh Python process (so the
figures include what a restarted viewer pays, imports aside):

1. cold: `ScalarStore.refresh()` reads every record (empty disk cache); the baseline in the same
   run is tensorboard's own `EventAccumulator.Reload()` on the same file (scalars kept whole);
2. restart: a new process with the disk cache the first filled: `refresh()` reads no record;
3. an unchanged poll: `refresh()` again with nothing new (median of 200), and one more step
   appended (`--tags` scalars: the incremental read a live run's poll pays);
4. the same over HTTP: a real `manage.py visualize` on loopback, the page's unchanged poll
   (`api/jsonl/train/poll` with the scalars' version in its cursor) 200 times, against the same
   poll of a viewer started with `--tensorboard off` in the same run.

The file sits in the OS page cache (it was just written): a warm disk.
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET_COLD_S, TARGET_RESTART_S, TARGET_POLL_MS = 2.0, 0.2, 5.0
POLLS = 200

# Run in a child process: argv = [board, cache, what]; prints one JSON object.
CHILD = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
from pathlib import Path
sys.path.insert(0, REPO)
from rollouts.store.disk import DiskCache
from rollouts.store.scalars import ScalarStore, TensorBoardDir
import tensorboard.compat.tensorflow_stub.pywrap_tensorflow, tensorboard.compat.proto.event_pb2
board, cache, what = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
imported = time.perf_counter() - t0
out = {"import_s": imported}
if what == "baseline":
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    t = time.perf_counter()
    acc = EventAccumulator(str(board), size_guidance={"scalars": 0})
    acc.Reload()
    out["read_s"] = time.perf_counter() - t
    out["scalars"] = sum(len(acc.Scalars(tag)) for tag in acc.Tags()["scalars"])
else:
    store = ScalarStore(TensorBoardDir(board.resolve(), board.name, "bench"), DiskCache(cache))
    t = time.perf_counter()
    store.refresh()
    out["read_s"] = time.perf_counter() - t
    out["records_read"] = store.records_read()
    out["scalars"] = sum(len(store.points(tag)) for tag in store.tag_names())
    if what == "restart":
        polls = []
        for _ in range(POLLS):
            t = time.perf_counter()
            store.refresh()
            polls.append(time.perf_counter() - t)
        out["poll_ms"] = statistics.median(polls) * 1000
        out["poll_p90_ms"] = sorted(polls)[int(0.9 * len(polls))] * 1000
        from tensorboardX import SummaryWriter
        w = SummaryWriter(str(board), flush_secs=3600)  # a new file: a restarted writer
        for k in range(TAGS):
            w.add_scalar(f"train/metric_{k}", 1.0, STEPS)
        w.close()
        t = time.perf_counter()
        store.refresh()
        out["grown_poll_ms"] = (time.perf_counter() - t) * 1000
        out["grown_records"] = store.records_read()
print(json.dumps(out))
"""

# --files: argv = [board, single, cache]; prints one JSON object.
CHILD_FILES = r"""
import json, statistics, sys, time
from pathlib import Path
sys.path.insert(0, REPO)
from rollouts.store.disk import DiskCache
from rollouts.store.scalars import ScalarStore, TensorBoardDir
import tensorboard.compat.tensorflow_stub.pywrap_tensorflow, tensorboard.compat.proto.event_pb2
board, single, cache = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
def store_of(root, disk):
    return ScalarStore(TensorBoardDir(root.resolve(), root.name, "bench"), disk)
def polls(store):
    times = []
    for _ in range(POLLS):
        t = time.perf_counter()
        store.refresh()
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times) * 1000, times[int(0.9 * len(times))] * 1000
out = {}
store = store_of(board, DiskCache(cache))
t = time.perf_counter()
store.refresh()
out["cold_s"] = time.perf_counter() - t
source = store.source()
out["files_read"] = len(source["files"])
out["message"] = source["message"]
out["scalars"] = sum(len(store.points(tag)) for tag in store.tag_names())
out["first_step"] = min(store.points(store.tag_names()[0]))[0]
restarted = store_of(board, DiskCache(cache))
t = time.perf_counter()
restarted.refresh()
out["restart_s"] = time.perf_counter() - t
out["restart_records"] = restarted.records_read()
out["poll_ms"], out["poll_p90_ms"] = polls(restarted)
import rollouts.store.scalars.store as module
if hasattr(module, "SWEEP_S"):  # a poll that lists and checks every file (every SWEEP_S)
    module.SWEEP_S, saved = 0.0, module.SWEEP_S
    t = time.perf_counter()
    restarted.refresh()
    out["sweep_ms"] = (time.perf_counter() - t) * 1000
    module.SWEEP_S = saved
else:  # every poll of this reader does
    out["sweep_ms"] = out["poll_ms"]
from tests.support.events import record, scalar_event
k = FILES  # the next restart's file: the directory changed
wall = 1_700_000_000.0 + k
(board / f"events.out.tfevents.{int(wall)}.host.{k}.0").write_bytes(
    record(scalar_event("train/m0", k, 1.0, wall)))
t = time.perf_counter()
restarted.refresh()
out["new_file_ms"] = (time.perf_counter() - t) * 1000
out["new_file_seen"] = restarted.points("train/m0")[-1][0] == k
one = store_of(single, None)
one.refresh()
out["one_poll_ms"], out["one_poll_p90_ms"] = polls(one)
print(json.dumps(out))
"""


def write_files(board: Path, files: int, tags: int) -> None:
    """`files` event files of `tags` scalars each, one step per file: file k holds step k and
    is named (and dated) as the k-th restart's writer would name it."""
    import os

    sys.path.insert(0, str(REPO_ROOT))
    from tests.support.events import record, scalar_event

    board.mkdir(parents=True)
    for k in range(files):
        wall = 1_700_000_000.0 + k
        path = board / f"events.out.tfevents.{int(wall)}.host.{k}.0"
        path.write_bytes(
            b"".join(record(scalar_event(f"train/m{t}", k, k + t, wall)) for t in range(tags))
        )
        os.utime(path, (wall, wall))


def bench_files(args: argparse.Namespace, repo: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-scalars-files-"))
    try:
        board, single = work / "many" / "tensorboard_log", work / "one" / "tensorboard_log"
        started = time.perf_counter()
        write_files(board, args.files, args.tags)
        write_files(single, 1, args.tags)
        print(
            f"{args.files:,} event files of {args.tags} scalars each (one step per file),"
            f" written in {time.perf_counter() - started:.1f} s; reader of {repo}"
        )
        code = f"REPO = {str(repo)!r}; POLLS = {POLLS}; FILES = {args.files}\n" + CHILD_FILES
        done = subprocess.run(
            [sys.executable, "-c", code, str(board), str(single), str(work / "cache")],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
        expected = args.files * args.tags
        rows = [
            ("cold read (empty disk cache)", f"{r['cold_s']:.3f} s",
             f"{r['files_read']:,} of {args.files:,} files, {r['scalars']:,} of {expected:,}"
             f" scalars, first step {r['first_step']}"),
            ("source.message", "", repr(r["message"])),
            ("read after a restart (disk cache)", f"{r['restart_s']:.3f} s",
             f"{r['restart_records']} records read from the event files"),
            (f"unchanged poll, {r['files_read']:,} files (median, p90)",
             f"{r['poll_ms']:.3f} ms, {r['poll_p90_ms']:.3f} ms", f"{POLLS} refreshes"),
            ("a poll that checks every file", f"{r['sweep_ms']:.3f} ms",
             "a sweep (the new reader: every 10 s; the old one: every poll)"),
            ("poll after one more file", f"{r['new_file_ms']:.3f} ms",
             f"the new file read: {r['new_file_seen']}"),
            ("unchanged poll, 1 file (median, p90)",
             f"{r['one_poll_ms']:.3f} ms, {r['one_poll_p90_ms']:.3f} ms",
             f"many / one: {r['poll_ms'] / max(r['one_poll_ms'], 1e-6):.1f}x"),
        ]  # fmt: skip
        width = max(len(row[0]) for row in rows)
        for name, value, note in rows:
            print(f"  {name:<{width}}  {value:>20}  {note}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_board(board: Path, steps: int, tags: int) -> float:
    from tensorboardX import SummaryWriter

    started = time.perf_counter()
    w = SummaryWriter(str(board), flush_secs=3600, max_queue=steps * tags + 1)
    for step in range(steps):
        for k in range(tags):
            w.add_scalar(f"train/metric_{k}", step * 0.001 + k, step)
    w.close()
    return time.perf_counter() - started


def child(board: Path, cache: Path, what: str, steps: int, tags: int) -> dict:
    code = f"REPO = {str(REPO_ROOT)!r}; POLLS = {POLLS}; STEPS = {steps}; TAGS = {tags}\n" + CHILD
    done = subprocess.run(
        [sys.executable, "-c", code, str(board), str(cache), what],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def http_polls(work: Path, cache: Path, *flags: str) -> tuple[float, float, dict]:
    """Median and p90 ms of the unchanged poll of a real viewer of `work`, and its cursor."""
    sys.path.insert(0, str(REPO_ROOT))
    from tests.support.servers import run_visualize

    data = work / "rollout_result"
    size = (data / "train" / "0.jsonl").stat().st_size
    with run_visualize(data, "--disk-cache", str(cache), *flags) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        path = f"/api/jsonl/train/poll?after=0&size={size}"
        connection.request("GET", path)
        cursor = json.loads(connection.getresponse().read())["cursor"]
        path += "".join(f"&{k}={v}" for k, v in cursor.items() if k not in ("after", "size"))
        times = []
        for _ in range(POLLS):
            started = time.perf_counter()
            connection.request("GET", path)
            answer = json.loads(connection.getresponse().read())
            times.append((time.perf_counter() - started) * 1000)
            assert not answer["changed"], answer
        connection.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)], cursor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--tags", type=int, default=None, help="200; 4 with --files")
    parser.add_argument("--files", type=int, default=0, help="N small event files instead")
    parser.add_argument("--repo", type=Path, default=REPO_ROOT, help="whose reader (--files)")
    args = parser.parse_args()
    if args.files:
        args.tags = 4 if args.tags is None else args.tags
        bench_files(args, args.repo.resolve())
        return
    args.tags = 200 if args.tags is None else args.tags
    work = Path(tempfile.mkdtemp(prefix="bench-scalars-"))
    try:
        board, cache = work / "tensorboard_log", work / "cache"
        written = write_board(board, args.steps, args.tags)
        size = sum(p.stat().st_size for p in board.iterdir())
        total = args.steps * args.tags
        print(
            f"{args.steps} steps x {args.tags} tags = {total:,} scalars, one event file of"
            f" {size / 1e6:.1f} MB (written with tensorboardX in {written:.1f} s)"
        )
        baseline = child(board, work / "no-cache", "baseline", args.steps, args.tags)
        cold = child(board, cache, "cold", args.steps, args.tags)
        restart = child(board, cache, "restart", args.steps, args.tags)
        assert cold["scalars"] == baseline["scalars"] == total, (cold, baseline)
        assert restart["records_read"] == 0 and restart["scalars"] == total, restart
        ratio = baseline["read_s"] / cold["read_s"]
        rows = [
            ("cold read (empty disk cache)", f"{cold['read_s']:.3f} s", f"< {TARGET_COLD_S} s",
             f"{cold['records_read']:,} records; imports {cold['import_s']:.2f} s"),
            ("baseline: EventAccumulator.Reload()", f"{baseline['read_s']:.3f} s", "",
             f"cold read is {ratio:.1f}x faster"),
            ("read after a restart (disk cache)", f"{restart['read_s']:.3f} s",
             f"< {TARGET_RESTART_S} s", "0 records read from the event file"),
            ("unchanged poll (median, p90)",
             f"{restart['poll_ms']:.2f} ms, {restart['poll_p90_ms']:.2f} ms",
             f"< {TARGET_POLL_MS} ms", f"{POLLS} refreshes"),
            ("poll after one more step", f"{restart['grown_poll_ms']:.2f} ms", "",
             f"{restart['grown_records']} records read (a new event file)"),
        ]  # fmt: skip
        # The viewer of a run: one small step beside the scalars (the poll's own work is the
        # step list; the scalars add a stat per event file).
        train = work / "rollout_result" / "train"
        train.mkdir(parents=True)
        (train / "0.jsonl").write_text('{"rollout_id": 0, "reward": 1.0}\n')
        with_tb = http_polls(work, cache)
        without = http_polls(work, cache, "--tensorboard", "off")
        assert "scalars" in with_tb[2] and "scalars" not in without[2], (with_tb, without)
        rows += [
            ("HTTP unchanged poll (median, p90)", f"{with_tb[0]:.2f} ms, {with_tb[1]:.2f} ms",
             f"< {TARGET_POLL_MS} ms", f"{POLLS} polls of a real viewer on loopback"),
            ("baseline: the same, --tensorboard off", f"{without[0]:.2f} ms, {without[1]:.2f} ms",
             "", f"scalars add {with_tb[0] - without[0]:+.2f} ms"),
        ]  # fmt: skip
        width = max(len(r[0]) for r in rows)
        for name, value, target, note in rows:
            print(f"  {name:<{width}}  {value:>18}  {target:>8}  {note}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
