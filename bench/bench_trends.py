"""The trends page of a long run: cold start, restart with the disk cache, and live polling.

    .venv/bin/python bench/bench_trends.py                      # 300 steps x 8 MB in a temp dir
    .venv/bin/python bench/bench_trends.py --keep /tmp/run300   # reuse (or keep) the data
    .venv/bin/python bench/bench_trends.py --steps 60 --step-mb 2   # a quick look

Writes a run of `--steps` train steps of about `--step-mb` MB each (realistic records from
`rollouts.demo.make_sample`, with the share of reward-1 samples rising step by step), then
starts `manage.py visualize` as a fresh process three times and measures what a user waits for:

1. cold (empty disk cache): the trends JSON answers at once with its progress; when did the
   first progress answer come, what did it say at 1 s, and when were all steps indexed;
   (the baseline: the same with RELAX_INDEX_PROCESSES=1, decoding on the server's thread);
2. restart with the disk cache the first run filled: what the trends page's own first answer
   (inlined in its HTML) holds, and when are all steps there;
3. polling an unchanged run (`api/jsonl/train/poll?after=N&size=S`), per request, against
   `api/cache/stats` (the cheapest endpoint) as the baseline in the same process.

The files sit in the OS page cache (they were just written or read): a warm disk, which is
also what a viewer following a live run sees.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import make_sample  # noqa: E402
from tests.support.servers import run_visualize  # noqa: E402

MB = 1_000_000
POLL_REQUESTS = 500
PROGRESS_EVERY_S = 0.1
TARGET_FULL_S, TARGET_RESTART_S, TARGET_POLL_MS = 10.0, 1.0, 5.0


def write_run(root: Path, steps: int, step_mb: float) -> Path:
    """root/rollout_result/train/<step>.jsonl; one base step, rewards redrawn per step."""
    train = root / "rollout_result" / "train"
    if train.is_dir() and len(list(train.glob("*.jsonl"))) == steps:
        return root / "rollout_result"
    shutil.rmtree(root / "rollout_result", ignore_errors=True)
    train.mkdir(parents=True)
    rng = random.Random("bench-trends")
    lines: list[bytes] = []
    size = 0
    while size < step_mb * MB:
        record = make_sample(rng, step=0, sample_index=len(lines), group_index=len(lines) // 8)
        record["reward"] = 0.0
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        lines.append(line)
        size += len(line)
    for step in range(steps):
        p = 0.2 + 0.6 * step / max(1, steps - 1)
        step_rng = random.Random(f"bench-trends:{step}")
        with (train / f"{step}.jsonl").open("wb") as f:
            for line in lines:
                if step_rng.random() < p:
                    line = line.replace(b'"reward": 0.0', b'"reward": 1.0', 1)
                f.write(line)
    return root / "rollout_result"


def get(url: str) -> tuple[float, dict]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        body = response.read()
    return time.perf_counter() - start, json.loads(body)


def watch_indexing(server, total: int) -> dict:
    """Poll the trends JSON until every step is in; when each milestone was reached."""
    url = server.base_url + "/api/jsonl/train/trends"
    figures: dict = {"progress": []}
    while True:
        _, data = get(url)
        now = time.perf_counter() - server.started_at
        figures.setdefault("first_answer_s", now)
        figures["progress"].append((round(now, 2), data["indexed"]))
        if data["done"] and len(data["points"]) == total:
            figures["full_s"] = now
            figures["reading"] = data["reading"]["reading"]
            return figures
        time.sleep(PROGRESS_EVERY_S)


def first_page(server) -> dict:
    """The trends page itself, first thing after start: what its inline answer holds."""
    start = time.perf_counter()
    with urllib.request.urlopen(server.base_url + "/train/trends/", timeout=60) as response:
        html = response.read().decode()
    done = time.perf_counter()
    found = re.search(r'<script type="application/json" id="rv-trends-data">(.*?)</script>', html)
    if found is None:
        raise SystemExit("the trends page carries no inline answer")
    data = json.loads(found.group(1))
    return {"request_s": done - start, "from_start_s": done - server.started_at,
            "points": len(data["points"]), "done": data["done"]}  # fmt: skip


def at_second(progress: list[tuple[float, int]], second: float) -> int:
    return max((n for t, n in progress if t <= second), default=0)


def poll_latency(server, total_steps: int) -> dict:
    _, cursor = get(server.base_url + "/api/jsonl/train/poll")
    after, size = cursor["cursor"]["after"], cursor["cursor"]["size"]
    poll = server.base_url + f"/api/jsonl/train/poll?after={after}&size={size}"
    base = server.base_url + "/api/cache/stats"
    figures = {}
    for name, url in (("baseline", base), ("poll", poll), ("baseline", base), ("poll", poll)):
        times = []
        for _ in range(POLL_REQUESTS):
            seconds, data = get(url)
            times.append(seconds * 1000)
            if name == "poll":
                assert data["changed"] is False and data["total"] == total_steps
        figures[name] = times  # the second round (warm) is kept
    return {
        name: {
            "median_ms": statistics.median(times),
            "p90_ms": statistics.quantiles(times, n=10)[-1],
        }
        for name, times in figures.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--step-mb", type=float, default=8.0)
    parser.add_argument("--keep", type=Path, help="write the run here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-trends-"))
    cache = Path(tempfile.mkdtemp(prefix="bench-trends-cache-"))
    try:
        started = time.perf_counter()
        data_dir = write_run(root, args.steps, args.step_mb)
        files = sorted((data_dir / "train").glob("*.jsonl"))
        total_bytes = sum(f.stat().st_size for f in files)
        samples = sum(1 for _ in files[0].open("rb"))
        print(f"run: {len(files)} steps x {total_bytes / len(files) / MB:.1f} MB "
              f"({total_bytes / 1e9:.2f} GB, {samples} samples a step), "
              f"ready in {time.perf_counter() - started:.1f} s")  # fmt: skip
        flags = ("--disk-cache", str(cache))
        # Baseline: the same cold start decoding on the server's own thread only.
        single = Path(tempfile.mkdtemp(prefix="bench-trends-cache-"))
        in_process = {"RELAX_INDEX_PROCESSES": "1"}
        with run_visualize(data_dir, "--disk-cache", str(single), env=in_process) as server:
            baseline = watch_indexing(server, len(files))
        shutil.rmtree(single, ignore_errors=True)
        with run_visualize(data_dir, *flags) as server:
            cold = watch_indexing(server, len(files))
        with run_visualize(data_dir, *flags) as server:
            page = first_page(server)
            warm = watch_indexing(server, len(files))
            polls = poll_latency(server, len(files))
        entries = list(cache.glob("*.msgpack"))
        cache_mb = sum(e.stat().st_size for e in entries) / MB
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)

    def line(name: str, value: float, unit: str, target: float) -> str:
        verdict = "meets" if value < target else "MISSES"
        return f"  {name:<44} {value:8.3f} {unit:<3} (target < {target:g} {unit}: {verdict})"

    print("cold server, empty disk cache (times from process start):")
    print(f"  first trends answer (with progress)          {cold['first_answer_s']:8.3f} s")
    print(f"  steps indexed at 1 s / 2 s / 5 s             "
          f"{at_second(cold['progress'], 1)} / {at_second(cold['progress'], 2)} / "
          f"{at_second(cold['progress'], 5)} of {len(files)}")  # fmt: skip
    print(line("all steps on the page", cold["full_s"], "s", TARGET_FULL_S))
    print(f"  reading                                      {cold['reading']}")
    print(
        f"  baseline: decoded on one thread, all steps   {baseline['full_s']:8.3f} s"
        f"  (baseline / pool: {baseline['full_s'] / cold['full_s']:.2f})"
    )
    print(f"restart, disk cache of {len(entries)} entries ({cache_mb:.1f} MB):")
    print(f"  the page's own first answer                  {page['points']} of {len(files)} "
          f"steps, done: {page['done']}")  # fmt: skip
    print(f"  trends page, the request alone               {page['request_s']:8.3f} s")
    print(f"  trends page, from process start              {page['from_start_s']:8.3f} s")
    print(line("all steps on the page", warm["full_s"], "s", TARGET_RESTART_S))
    print(
        f"  speed-up over the cold start                 {cold['full_s'] / warm['full_s']:8.1f} x"
    )
    print(f"polling an unchanged run ({POLL_REQUESTS} requests, loopback HTTP):")
    print(line("poll, median", polls["poll"]["median_ms"], "ms", TARGET_POLL_MS))
    print(f"  poll, p90                                    {polls['poll']['p90_ms']:8.3f} ms")
    print(
        f"  baseline api/cache/stats, median             {polls['baseline']['median_ms']:8.3f} ms"
        f"  (poll / baseline: {polls['poll']['median_ms'] / polls['baseline']['median_ms']:.2f})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
