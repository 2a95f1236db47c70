"""Reading a run's TensorBoard scalars: cold, after a restart (disk cache), an unchanged poll.

    .venv/bin/python bench/bench_scalars.py                     # 300 steps x 200 tags
    .venv/bin/python bench/bench_scalars.py --steps 1000 --tags 50

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
from rollouts.store.diskcache import DiskCache
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
    parser.add_argument("--tags", type=int, default=200)
    args = parser.parse_args()
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
