"""The Training page's API on a long job: a full snapshot, a live poll, and a viewer restart.

    .venv/bin/python bench/bench_training.py                 # 6,000 points, 4,000+ log lines
    .venv/bin/python bench/bench_training.py --points 1000   # a quick look

Writes a job spec whose command is a small script that prints `--points` progress JSON lines
(nine metrics each), a stable-baselines3 table every 50 points, a plain log line per point, and
an episode CSV of 20,000 rows, then exits. `manage.py train` (a fresh process on a loopback
port) starts it through `POST api/train/start`; once the job has ended and its output is read:

1. the full snapshot a page opening on the job asks for (`api/train/state?log_tail=4000`:
   every kept point, the last 4,000 log lines, the reading, the cards, the episodes): median and
   p90 of the request, and the answer's size;
2. a live poll with both cursors (`after_metric`, `after_log`: nothing new), median and p90,
   against `api/cache/stats` (the cheapest endpoint) in the same server as the baseline;
3. a restart: a second `manage.py train` on the same spec re-attaches to the ended job and
   reads its logs again; the time from process start to a snapshot holding every point.

Requests go over loopback HTTP, a new connection each, as `urllib` makes them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.support.servers import run_visualize  # noqa: E402

TRAIN = (sys.executable, "manage.py", "train")
FULL_REQUESTS, POLL_REQUESTS = 30, 300

SCRIPT = """
import argparse, json, math, random
from pathlib import Path
p = argparse.ArgumentParser()
p.add_argument("--run-dir"); p.add_argument("--points", type=int)
a = p.parse_args()
rng, n = random.Random(0), a.points
for i in range(n):
    t = (i + 1) * 64
    print(json.dumps({"event": "progress", "timesteps": t, "total_timesteps": n * 64,
        "phase": "rollout", "ep_rew_mean": 0.2 + 0.6 * i / n + rng.gauss(0, 0.02),
        "ep_len_mean": 500 + rng.gauss(0, 20), "approx_kl": abs(rng.gauss(0.01, 0.003)),
        "explained_variance": 0.5 + rng.gauss(0, 0.05), "entropy_loss": -1 + i / n,
        "value_loss": 0.1 * math.exp(-i / n), "clip_fraction": 0.05 + rng.gauss(0, 0.01),
        "learning_rate": 3e-4, "fps": 900 + rng.gauss(0, 30)}))
    print(f"update {i}: {t} timesteps, loss {rng.random():.4f}")
    if i % 50 == 49:
        print("-" * 40)
        for key, value in [("rollout/", ""), ("    ep_rew_mean", 0.5), ("time/", ""),
                           ("    total_timesteps", t + 32), ("train/", ""),
                           ("    approx_kl", 0.01), ("    clip_fraction", 0.05)]:
            print(f"| {key:<24}| {value:<12}|")
        print("-" * 40)
with open(Path(a.run_dir) / "episodes.csv", "w") as f:
    f.write("r,l,t\\n")
    for k in range(20000):
        f.write(f"{rng.random():.3f},{rng.randint(10, 2048)},{k * 0.01:.2f}\\n")
"""

SPEC = """
[job]
name = "bench"
command = ["{python}", "chatty.py", "--run-dir", "{run_dir}", "--points", "{points}"]
episodes = "episodes.csv"
control = false

[[fields]]
name = "points"
type = "int"
default = 1000
min = 1
max = 1000000
"""


def get(url: str, data: bytes | None = None) -> tuple[float, bytes]:
    headers = {"Content-Type": "application/json"} if data is not None else {}
    request = urllib.request.Request(url, data=data, headers=headers)
    start = time.perf_counter()
    with urllib.request.urlopen(request, timeout=120) as response:
        body = response.read()
    return time.perf_counter() - start, body


def state(server, query: str = "") -> dict:
    return json.loads(get(server.url("/api/train/state" + query))[1])


def wait_for(what: str, check, timeout: float = 300.0) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if check():
            return time.monotonic() - start
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def ms(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=6000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-training-") as tmp:
        root = Path(tmp)
        (root / "chatty.py").write_text(SCRIPT)
        spec = root / "bench.toml"
        spec.write_text(SPEC)
        kept = min(args.points, 5000)
        with run_visualize(spec, "--no-browser", launcher=TRAIN) as server:
            body = json.dumps({"values": {"points": args.points}}).encode()
            get(server.url("/api/train/start"), body)
            ran = wait_for(
                "the job to end",
                lambda: state(server, "?log_tail=0")["job"]["status"] in ("exited", "failed"),
            )
            snap = state(server, "?log_tail=4000")
            points, lines = len(snap["metrics"]["points"]), len(snap["log"]["lines"])
            full = [get(server.url("/api/train/state?log_tail=4000")) for _ in range(FULL_REQUESTS)]
            query = f"?after_metric={snap['metrics']['cursor']}&after_log={snap['log']['cursor']}"
            polls = [get(server.url("/api/train/state" + query))[0] for _ in range(POLL_REQUESTS)]
            base = [get(server.url("/api/cache/stats"))[0] for _ in range(POLL_REQUESTS)]
        started = time.monotonic()
        with run_visualize(spec, "--no-browser", launcher=TRAIN) as again:
            wait_for(
                "the curves after a restart",
                lambda: len(state(again, "?log_tail=0")["metrics"]["points"]) >= kept,
            )
            restart = time.monotonic() - started
    full_ms, poll_ms, base_ms = ms([t for t, _ in full]), ms(polls), ms(base)
    size = len(full[0][1]) / 1_000_000
    print(f"job: {args.points} progress points, {args.points // 50} tables; ran {ran:.1f} s")
    print(
        f"  kept: {points} points, {lines} log lines, {len(snap['episodes']['rows'])} episode rows"
    )
    print(f"full snapshot (log_tail=4000), {FULL_REQUESTS} requests:")
    print(f"  median {full_ms[0]:8.1f} ms   p90 {full_ms[1]:8.1f} ms   answer {size:.2f} MB")
    print(f"live poll with both cursors (nothing new), {POLL_REQUESTS} requests:")
    print(f"  median {poll_ms[0]:8.2f} ms   p90 {poll_ms[1]:8.2f} ms")
    print(
        f"  baseline api/cache/stats median {base_ms[0]:.2f} ms (poll / baseline: "
        f"{poll_ms[0] / base_ms[0]:.2f})"
    )
    print(f"restart: every point back after {restart:.2f} s from process start")


if __name__ == "__main__":
    main()
