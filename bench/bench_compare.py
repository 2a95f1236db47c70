"""Two revisions side by side: the same data, the same requests, one run, one machine.

    .venv/bin/python bench/bench_compare.py                  # HEAD against this tree, demo data
    .venv/bin/python bench/bench_compare.py --base 0a09372   # an older revision against this tree
    .venv/bin/python bench/bench_compare.py --base main --head my-branch
    .venv/bin/python bench/bench_compare.py --base 0a09372 --big-mb 1024 --keep /tmp/big  # 1 GiB
    .venv/bin/python bench/bench_compare.py --base 0a09372 --load  # + 2,000 requests, 50 at once

Each revision is checked out as a git worktree (in a temp dir, removed after); `--head` defaults
to this checkout as it is, uncommitted changes included, so a change is measured before it is
committed. Both serve the same data (written once, by this checkout's generator: the demo's runs,
or one `--big-mb` step) with `manage.py visualize DATA --workers 1`, each with a disk cache of its
own made for this run, both running at once on loopback ports.

Before timing, every URL is fetched once from each server and the script waits until both
workers are idle (their CPU time stops moving): the figures are for a warm server, the indexes
built. Then, per page type, each URL is fetched from both servers one after the other, the order
alternating from URL to URL so that drift on a shared machine falls on both alike. Printed per
page type: how many requests, p50 and p99 (nearest rank) of each, the ratio head / base of each,
the median answer size, and "ok" when both ratios are within `--tolerance` (10 %) or faster.
A page type one revision does not have (a 404) is printed as absent. Then the sample pages again,
`--concurrency` (20) at a time, as requests/s.

Page types: sample (random samples), long (the longest lines of the data), sample JSON (the
twin), group, table, stats, trends JSON, search (the search page, a literal from the data), API
page (`samples?page=K&page_size=50` in file order).

`--load`: each server in turn gets a copy of the data with one more step that a writer appends
to while 2,000 requests (a mix: sample pages of the finished steps and of the growing one, the
page's poll, the trends JSON, the API page of the growing step) go out 50 at a time; printed:
requests/s and p50 / p99 of each (bounded: the load stops after `--load-seconds` whatever is
left). Before it, as before the page types, the server is warmed (the trends, and one sample page
of each finished step: every step's index opened) and left to go idle: the load measures a
server that is up, not its first minute (the cold first page has its own figures).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import write_big_step  # noqa: E402
from tests.support.servers import ServerProcess, proc_status, start_visualize  # noqa: E402

MB = 1_000_000
TIMEOUT = 120.0  # seconds for one request: a page that takes longer is a failure, not a figure
IDLE_SECONDS = 1.0  # a worker whose CPU time has not moved for this long has finished indexing
IDLE_DEADLINE = 600.0
HEAVY_LINE_BYTES = 100_000
COLD_TRIALS, SEARCH_TRIALS = 3, 3
TARGET_FIRST_PAGE_S, TARGET_GREP_RATIO = 0.5, 2.0
SERVER_ARGS: list[str] = []  # more `visualize` flags for both servers (--server-args)


# --- the revisions -------------------------------------------------------------------------


@contextlib.contextmanager
def checkout(rev: str | None, scratch: Path) -> Iterator[tuple[str, Path]]:
    """(label, directory) of `rev` as a temporary worktree; None: this checkout as it is."""
    if rev is None:
        yield "this tree", REPO_ROOT
        return
    sha = git("rev-parse", "--short", f"{rev}^{{commit}}")
    path = scratch / f"rev-{sha}"
    git("worktree", "add", "--detach", "--force", str(path), sha)
    try:
        yield sha, path
    finally:
        git("worktree", "remove", "--force", str(path))


def git(*args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


# --- the data ------------------------------------------------------------------------------


@dataclass
class Step:
    bucket: str
    step: str  # as the file names it
    path: Path
    offsets: list[int]  # where each line starts, and the end of the last

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def length(self, position: int) -> int:
        return self.offsets[position + 1] - self.offsets[position]

    def record(self, position: int) -> dict:
        with self.path.open("rb") as f:
            f.seek(self.offsets[position])
            return json.loads(f.read(self.length(position)))


def scan_step(bucket: str, path: Path) -> Step:
    offsets = [0]
    with path.open("rb") as f:
        for line in f:
            offsets.append(offsets[-1] + len(line))
    return Step(bucket, path.stem, path, offsets)


def find_steps(run_dir: Path) -> list[Step]:
    """The step files of a run: rollout_result/{train,eval}, {train,eval}, or the folder itself."""
    for root in (run_dir / "rollout_result", run_dir):
        if not root.is_dir():
            continue
        buckets = [d for d in sorted(root.iterdir()) if d.is_dir() and any(d.glob("*.jsonl"))]
        if buckets:
            return [scan_step(b.name, p) for b in buckets for p in sorted_steps(b)]
    if any(run_dir.glob("*.jsonl")):
        return [scan_step("default", p) for p in sorted_steps(run_dir)]
    raise SystemExit(f"no step files under {run_dir}")


def sorted_steps(folder: Path) -> list[Path]:
    """The step files (`<digits>.jsonl`) in step order; other files are not steps."""
    steps = (p for p in folder.glob("*.jsonl") if p.stem.isdigit())
    return sorted(steps, key=lambda p: int(p.stem))


# --- the page types ------------------------------------------------------------------------


@dataclass
class PageType:
    name: str
    urls: list[str]
    headers: dict[str, str] = field(default_factory=dict)


def page_types(prefix: str, steps: list[Step], rng: random.Random, n: int) -> list[PageType]:
    first = "train" if any(s.bucket == "train" for s in steps) else steps[0].bucket
    train = [s for s in steps if s.bucket == first and len(s)]
    bucket = train[0].bucket

    def sample_url(step: Step, position: int) -> str:
        return f"{prefix}{bucket}/{step.step}/sample/{position}/"

    def random_sample() -> tuple[Step, int]:
        step = rng.choice(train)
        return step, rng.randrange(len(step))

    samples = [random_sample() for _ in range(3 * n)]
    longest = sorted(
        ((s.length(i), s.step, i) for s in train for i in range(len(s))), reverse=True
    )[:20]
    by_name = {s.step: s for s in train}
    groups = []
    for step, position in samples[:n]:
        group = step.record(position).get("group_index")
        if isinstance(group, int):
            groups.append(f"{prefix}{bucket}/{step.step}/group/{group}/")
    words = search_words(train[-1])
    return [
        PageType("sample", [sample_url(s, i) for s, i in samples]),
        PageType(
            "long",
            [sample_url(by_name[name], i) for _, name, i in longest] * max(1, n // len(longest)),
        ),
        PageType(  # what the sample page's script asks for after the page (the long samples')
            "tokens card",
            [f"{sample_url(by_name[name], i)}tokens/" for _, name, i in longest]
            * max(1, n // len(longest)),
            {"RV-Fragment": "1"},
        ),
        PageType(
            "sample JSON",
            [f"{prefix}api/view/{bucket}/{s.step}/sample/{i}" for s, i in samples[:n]],
        ),
        PageType("group", groups),
        PageType("table", [f"{prefix}{bucket}/{rng.choice(train).step}/table/" for _ in range(n)]),
        PageType("stats", [f"{prefix}{bucket}/{rng.choice(train).step}/stats/" for _ in range(n)]),
        PageType("trends JSON", [f"{prefix}api/jsonl/{bucket}/trends"] * n),
        PageType(
            "search",
            [f"{prefix}{bucket}/search/?q={quote(rng.choice(words))}" for _ in range(n // 2)],
        ),
        PageType("API page", [api_page(prefix, rng.choice(train), rng) for _ in range(n)]),
    ]


def api_page(prefix: str, step: Step, rng: random.Random) -> str:
    pages = max(1, -(-len(step) // 50))
    return (
        f"{prefix}api/jsonl/{step.bucket}/file/{step.path.name}/samples"
        f"?page={rng.randrange(pages) + 1}&page_size=50"
    )


def search_words(step: Step) -> list[str]:
    """A few words of the step's responses: frequent ones, so a search has hits to show."""
    responses = (str(step.record(i).get("response", "")) for i in range(min(8, len(step))))
    text = " ".join(r[:2000] for r in responses)
    words = [w for w in text.split() if w.isalpha() and len(w) > 5]
    return sorted(set(words))[:10] or ["the"]


# --- requests ------------------------------------------------------------------------------


@dataclass
class Timed:
    status: int
    seconds: float
    size: int
    body: bytes = b""  # `fetch`'s answer (not kept by the load's clients)


def fetch(port: int, url: str, headers: dict[str, str] | None = None) -> Timed:
    """GET on a fresh loopback connection, the whole body read; the time until its last byte."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        conn.request("GET", url, headers=headers or {})
        response = conn.getresponse()
        body = response.read()
        return Timed(response.status, time.perf_counter() - started, len(body), body)
    finally:
        conn.close()


async def fetch_async(port: int, url: str) -> Timed:
    """`fetch` for the load's event loop: the same request, the whole answer read."""
    started = time.perf_counter()
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)
    try:
        request = f"GET {url} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        writer.write(request.encode())
        answer = await asyncio.wait_for(reader.read(), TIMEOUT)  # until the server closes
    finally:
        writer.close()
    status = int(answer[9:12]) if answer.startswith(b"HTTP/1.1 ") else 0
    return Timed(status, time.perf_counter() - started, len(answer))


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(servers: list[ServerProcess]) -> None:
    """Until no worker of any server has used CPU for IDLE_SECONDS (its background work done)."""
    deadline = time.monotonic() + IDLE_DEADLINE
    pids = [pid for s in servers for pid in s.workers()]
    last = [cpu_seconds(pid) for pid in pids]
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = [cpu_seconds(pid) for pid in pids]
        if any(b - a > 0.01 for a, b in zip(last, now, strict=True)):
            quiet_since = time.monotonic()
        last = now
        if time.monotonic() - quiet_since >= IDLE_SECONDS:
            return
    print(f"  (workers still busy after {IDLE_DEADLINE:.0f} s; timing anyway)")


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


@dataclass
class Side:
    label: str
    server: ServerProcess
    times: dict[str, list[float]] = field(default_factory=dict)
    sizes: dict[str, list[int]] = field(default_factory=dict)
    absent: set[str] = field(default_factory=set)


def time_page_types(sides: list[Side], types: list[PageType]) -> None:
    for kind in types:
        for side in sides:
            side.times[kind.name], side.sizes[kind.name] = [], []
        for k, url in enumerate(kind.urls):
            for side in sides if k % 2 == 0 else reversed(sides):
                if kind.name in side.absent:
                    continue
                got = fetch(side.server.port, url, kind.headers)
                if got.status == 404 and k == 0:  # the revision has no such page
                    side.absent.add(kind.name)
                    continue
                if got.status != 200:
                    raise SystemExit(f"{side.label}: {url} answered {got.status}")
                side.times[kind.name].append(got.seconds)
                side.sizes[kind.name].append(got.size)


def print_table(base: Side, head: Side, types: list[PageType], tolerance: float) -> bool:
    print(
        f"\n{'page type':<12} {'n':>4}  {'base p50':>9} {'p99':>8}  {'head p50':>9} {'p99':>8}"
        f"  {'p50 x':>6} {'p99 x':>6}  {'size base/head':>16}"
    )
    all_ok = True
    for kind in types:
        a, b = base.times[kind.name], head.times[kind.name]
        if not b:
            print(f"{kind.name:<12} {'':>4}  absent in head ({head.label})")
            continue
        size_b = statistics.median(head.sizes[kind.name]) / 1000
        if not a:
            print(
                f"{kind.name:<12} {len(b):>4}  {'absent':>9} {'':>8}  {ms(quantile(b, 0.5)):>9}"
                f" {ms(quantile(b, 0.99)):>8}  {'':>6} {'':>6}  {'-':>7} / {size_b:>6.0f} kB"
            )
            continue
        r50 = quantile(b, 0.5) / quantile(a, 0.5)
        r99 = quantile(b, 0.99) / quantile(a, 0.99)
        ok = r50 <= 1 + tolerance and r99 <= 1 + tolerance
        all_ok &= ok
        size_a = statistics.median(base.sizes[kind.name]) / 1000
        print(
            f"{kind.name:<12} {len(b):>4}  {ms(quantile(a, 0.5)):>9} {ms(quantile(a, 0.99)):>8}"
            f"  {ms(quantile(b, 0.5)):>9} {ms(quantile(b, 0.99)):>8}  {r50:>6.2f} {r99:>6.2f}"
            f"  {size_a:>6.0f} / {size_b:>6.0f} kB  {'ok' if ok else 'SLOWER'}"
        )
    return all_ok


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def concurrent_rate(port: int, urls: list[str], concurrency: int) -> float:
    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        for got in pool.map(lambda u: fetch(port, u), urls):
            if got.status != 200:
                raise SystemExit(f"concurrent request answered {got.status}")
    return len(urls) / (time.perf_counter() - started)


# --- a big step's own figures ------------------------------------------------------------


def cold_first_page(
    checkouts: list[tuple[str, Path]], data: Path, scratch: Path, step: Step
) -> None:
    """The original API's first page on a fresh server (empty disk cache), alone and right
    after the sample page (which starts the scan's rest and the column pass in the background)."""
    api = f"/api/jsonl/{step.bucket}/file/{step.path.name}/samples?page=1&page_size=50"
    print(f"\ncold first API page of the big step (50 samples), median of {COLD_TRIALS}:")
    for label, directory in checkouts:
        figures: dict[str, list[float]] = {"alone": [], "after the sample page": []}
        for trial in range(COLD_TRIALS):
            for case, before in (
                ("alone", []),
                ("after the sample page", [f"/{step.bucket}/{step.step}/sample/0/"]),
            ):
                server = serve(directory, data, scratch, f"cold-{label}-{trial}-{len(before)}")
                try:
                    for url in before:
                        fetch(server.port, url)
                    got = fetch(server.port, api)
                    if got.status != 200:
                        raise SystemExit(f"{label}: {api} answered {got.status}")
                    figures[case].append(got.seconds)
                finally:
                    server.stop()
        print(
            f"  {label}: "
            + "; ".join(f"{case} {statistics.median(v):.2f} s" for case, v in figures.items())
            + f" (target < {TARGET_FIRST_PAGE_S} s)"
        )


def literal_against_grep(server: ServerProcess, step: Step, literal: str) -> None:
    """A search of the big step for `literal` over the API (slices until done), against
    `grep -c -F` on the same file, alternating, medians of SEARCH_TRIALS."""
    ours, greps, count = [], [], 0
    for _ in range(SEARCH_TRIALS):
        started = time.perf_counter()
        done = subprocess.run(
            ["grep", "-c", "-F", "--", literal, str(step.path)], capture_output=True, text=True
        )
        greps.append(time.perf_counter() - started)
        count = int(done.stdout.strip() or 0)
        started = time.perf_counter()
        url = f"/api/jsonl/{step.bucket}/search?q={quote(literal)}&case=1"
        cursor, matches = None, 0
        while True:
            got = json.loads(
                fetch(server.port, url + (f"&after={quote(cursor)}" if cursor else "")).body
            )
            matches = sum(s["matches"] for s in got["per_step"]) if got["done"] else matches
            if got["done"]:
                break
            cursor = got["cursor"]
        ours.append(time.perf_counter() - started)
    share = count / max(1, len(step))
    mine, theirs = statistics.median(ours), statistics.median(greps)
    print(
        f"\nsearch of the big step for {literal!r} (in {count} of {len(step)} lines, {share:.1%}):"
        f" {mine:.2f} s over HTTP, {matches} matching samples; grep -c -F {theirs:.2f} s;"
        f" {mine / theirs:.2f}x grep (target < {TARGET_GREP_RATIO}x)"
    )


# --- load while a step grows ---------------------------------------------------------------


def url_kind(url: str) -> str:
    """What a load URL asks for: "sample page", "growing sample", "poll", "trends", "API page"."""
    if "/999999/sample/" in url:
        return "sample of growing step"
    if "/sample/" in url:
        return "sample page"
    if url.endswith("/poll"):
        return "poll"
    if url.endswith("/trends"):
        return "trends JSON"
    return "API page of growing step"


def grow(path: Path, lines: list[bytes], stop: threading.Event, per_second: float) -> None:
    """Append `lines` to `path` at `per_second`, as a trainer writes a step, until told to stop."""
    with path.open("ab") as f:
        for line in lines:
            if stop.wait(1 / per_second):
                return
            f.write(line)
            f.flush()


def load_run(
    side_dir: Path,
    server: ServerProcess,
    prefix: str,
    steps: list[Step],
    rng: random.Random,
    args: argparse.Namespace,
) -> dict[str, float]:
    first = "train" if any(s.bucket == "train" for s in steps) else steps[0].bucket
    done_steps = [s for s in steps if s.bucket == first and len(s)]
    source = done_steps[-1]
    growing = side_dir / source.path.relative_to(args.data_root).parent / "999999.jsonl"
    lines = source.path.read_bytes().splitlines(keepends=True)
    growing.write_bytes(b"".join(lines[:2]))
    bucket = source.bucket

    def sample_of(step: Step) -> str:
        return f"{prefix}{bucket}/{step.step}/sample/{rng.randrange(len(step))}/"

    mix: list[Callable[[], str]] = [
        lambda: sample_of(rng.choice(done_steps)),
        lambda: f"{prefix}{bucket}/999999/sample/{rng.randrange(2)}/",
        lambda: f"{prefix}api/jsonl/{bucket}/poll",
        lambda: f"{prefix}api/jsonl/{bucket}/trends",
        lambda: f"{prefix}api/jsonl/{bucket}/file/999999.jsonl/samples?page=1&page_size=50",
    ]
    urls = [rng.choice(mix)() for _ in range(args.load_requests)]
    stop = threading.Event()
    times: list[float] = []
    errors = 0
    by_kind: dict[str, list[float]] = {}
    failures: dict[str, int] = {}

    async def clients() -> None:
        """`load_concurrency` clients on one event loop, each taking the next URL until none
        are left or `load_seconds` have passed: a client that costs the shared CPU little."""
        nonlocal errors
        queue = iter(urls)
        deadline = time.monotonic() + args.load_seconds

        async def client() -> None:
            nonlocal errors
            for url in queue:
                if time.monotonic() > deadline:
                    return
                try:
                    got = await fetch_async(server.port, url)
                except (OSError, TimeoutError):
                    got = Timed(0, TIMEOUT, 0)  # no answer at all: an error, at the timeout
                times.append(got.seconds)
                kind = url_kind(url)
                by_kind.setdefault(kind, []).append(got.seconds)
                if got.status >= 500 or got.status == 0:
                    errors += 1
                    failures[f"{got.status} {kind}"] = failures.get(f"{got.status} {kind}", 0) + 1

        await asyncio.gather(*(client() for _ in range(args.load_concurrency)))

    writer = threading.Thread(target=grow, args=(growing, lines[2:] * 4, stop, 20.0), daemon=True)
    writer.start()
    started = time.perf_counter()
    worker = server.workers()[0]
    cpu_before = cpu_seconds(worker)
    try:
        asyncio.run(clients())
    finally:
        stop.set()
        writer.join()
    wall = time.perf_counter() - started
    print(f"    worker CPU: {cpu_seconds(worker) - cpu_before:.1f} s in {wall:.1f} s")
    for kind, seconds in sorted(by_kind.items()):
        print(
            f"    {kind:<22} {len(seconds):>5}  p50 {ms(quantile(seconds, 0.5)):>9}"
            f"  p99 {ms(quantile(seconds, 0.99)):>9}"
        )
    for failure, count in sorted(failures.items()):
        print(f"    {count} x {failure}")
    return {
        "requests": len(times),
        "rate": len(times) / wall,
        "p50": quantile(times, 0.5),
        "p99": quantile(times, 0.99),
        "errors": errors,
    }


# --- main ----------------------------------------------------------------------------------


def write_heavy_step(path: Path, target_bytes: int, demo: Path) -> int:
    """A step of the demo's heaviest samples (4,096 tokens with their ids and log-probs, about
    136 kB a line), in a seeded shuffled order, repeated until `target_bytes`: 8,192 lines for
    1 GiB, the shape of a long-context run's step. Returns the number of lines."""
    heavy = [
        line
        for f in sorted(demo.glob("*/rollout_result/*/*.jsonl"))
        for line in f.read_bytes().splitlines(keepends=True)
        if len(line) > HEAVY_LINE_BYTES
    ]
    random.Random(0).shuffle(heavy)
    written = count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        while written < target_bytes:
            line = heavy[count % len(heavy)]
            f.write(line)
            written += len(line)
            count += 1
    return count


def make_data(args: argparse.Namespace, scratch: Path) -> tuple[Path, str]:
    """(the folder to serve, the URL prefix of the run measured)."""
    if args.big_mb:
        root = Path(args.keep) if args.keep else scratch / "big"
        path = root / "0.jsonl"
        if not path.exists():
            print(f"writing a {args.big_mb} MiB step to {path} ...", flush=True)
            if args.big_kind == "long":
                write_big_step(path, args.big_mb * 1024 * 1024)
            else:
                demo = scratch / "demo-for-heavy"
                subprocess.run(
                    [sys.executable, "-m", "rollouts.demo", str(demo), "--runs"], check=True
                )
                write_heavy_step(path, args.big_mb * 1024 * 1024, demo)
        return root, "/"
    if args.data:
        return Path(args.data), f"/runs/{args.run}/" if args.run else "/"
    root = Path(args.keep) if args.keep else scratch / "demo"
    if not root.exists():  # what `./run demo` serves: three runs, with their TensorBoard scalars
        subprocess.run([sys.executable, "-m", "rollouts.demo", str(root), "--runs"], check=True)
    return root, "/runs/steady-rise/"


def serve(checkout_dir: Path, data: Path, scratch: Path, label: str) -> ServerProcess:
    cache = scratch / f"cache-{label.replace(' ', '-')}"
    cache.mkdir(exist_ok=True)
    server = start_visualize(
        data, "--workers", "1", "--disk-cache", str(cache), *SERVER_ARGS, cwd=checkout_dir
    )
    server.wait_until_ready(60)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="HEAD", help="the revision compared against (HEAD)")
    parser.add_argument("--head", default=None, help="the revision measured (this checkout)")
    parser.add_argument("--big-mb", type=int, default=0, help="serve one step of this many MiB")
    parser.add_argument(
        "--big-kind",
        choices=("heavy", "long"),
        default="heavy",
        help="heavy: 136 kB samples with token ids (8,192 a GiB); long: 60-600 kB ones",
    )
    parser.add_argument("--keep", help="write (or reuse) the data here instead of a temp dir")
    parser.add_argument("--data", help="serve this folder instead (with --run for a run of it)")
    parser.add_argument("--run", help="the run of --data to measure, when it is a folder of runs")
    parser.add_argument("-n", type=int, default=100, help="requests per page type (sample: 3n)")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--only", help="comma-separated page types to time")
    parser.add_argument(
        "--literal", default="sqrt", help="searched in the big step (in 7.7 %% of its lines)"
    )
    parser.add_argument("--server-args", default="", help='more visualize flags: "--threads 4"')
    parser.add_argument("--load", action="store_true", help="also the load while a step grows")
    parser.add_argument("--load-requests", type=int, default=2000)
    parser.add_argument("--load-concurrency", type=int, default=50)
    parser.add_argument("--load-seconds", type=float, default=120.0)
    args = parser.parse_args()
    SERVER_ARGS[:] = args.server_args.split()

    scratch = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    try:
        with (
            checkout(args.base, scratch) as (base_label, base_dir),
            checkout(args.head, scratch) as (head_label, head_dir),
        ):
            data, prefix = make_data(args, scratch)
            args.data_root = data
            run_dir = data / prefix.strip("/").removeprefix("runs/") if "runs/" in prefix else data
            steps = find_steps(run_dir)
            rng = random.Random(args.seed)
            types = page_types(prefix, steps, rng, args.n)
            if args.only:
                wanted = {w.strip() for w in args.only.split(",")}
                types = [t for t in types if t.name in wanted]
            size = sum(s.offsets[-1] for s in steps) / MB
            print(f"data: {run_dir} ({len(steps)} steps, {size:.0f} MB), prefix {prefix}")
            load = os.getloadavg()[0]
            print(f"base: {base_label}   head: {head_label}   load average {load:.2f}")
            compare(args, scratch, data, prefix, steps, types, (base_label, base_dir),
                    (head_label, head_dir))  # fmt: skip
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compare(
    args: argparse.Namespace,
    scratch: Path,
    data: Path,
    prefix: str,
    steps: list[Step],
    types: list[PageType],
    base: tuple[str, Path],
    head: tuple[str, Path],
) -> None:
    sides: list[Side] = []
    try:
        for label, directory in (base, head):
            sides.append(Side(label, serve(directory, data, scratch, label)))
        print("warming up: every URL once from each, then until both workers are idle ...")
        for kind in types:
            for url in dict.fromkeys(kind.urls):
                for side in sides:
                    fetch(side.server.port, url, kind.headers)
        wait_idle([s.server for s in sides])
        time_page_types(sides, types)
        ok = print_table(sides[0], sides[1], types, args.tolerance)
        sample = next((t for t in types if t.name == "sample"), None)
        if sample:
            print(
                f"\n{len(sample.urls)} sample pages one at a time, the sum: "
                + "; ".join(f"{s.label} {sum(s.times['sample']):.2f} s" for s in sides)
            )
            rates: dict[str, list[float]] = {s.label: [] for s in sides}
            for _ in range(2):
                for side in sides:
                    rates[side.label].append(
                        concurrent_rate(side.server.port, sample.urls, args.concurrency)
                    )
            print(
                f"\n{len(sample.urls)} sample pages {args.concurrency} at a time, requests/s"
                " (two rounds each, alternating): "
                + "; ".join(f"{k}: {', '.join(f'{r:.1f}' for r in v)}" for k, v in rates.items())
            )
        for side in sides:
            rss = proc_status(side.server.workers()[0]).get("VmRSS", 0) / MB
            print(f"{side.label}: worker VmRSS {rss:.0f} MB")
        print("\nall page types within tolerance" if ok else "\nSOME PAGE TYPES ARE SLOWER")
        if args.big_mb:
            literal_against_grep(sides[1].server, steps[0], args.literal)
    finally:
        for side in sides:
            side.server.stop()
    if args.big_mb:
        cold_first_page([base, head], data, scratch, steps[0])
    if args.load:
        print(
            f"\nload: {args.load_requests} requests, {args.load_concurrency} at a time, one worker,"
            " while a step grows (each server alone, on its own copy of the data)"
        )
        for label, directory in (base, head):
            copy = scratch / f"load-{label.replace(' ', '-')}"
            shutil.copytree(data, copy, symlinks=True)
            server = serve(directory, copy, scratch, f"load-{label}")
            try:
                # Warm, as the page types are (see the docstring): the trends, and each step once
                # (its index opened, its columns decoded), then quiet.
                fetch(server.port, f"{prefix}api/jsonl/{steps[0].bucket}/trends")
                for step in steps:
                    fetch(server.port, f"{prefix}{step.bucket}/{step.step}/sample/0/")
                wait_idle([server])
                got = load_run(copy, server, prefix, steps, random.Random(args.seed), args)
            finally:
                server.stop()
                shutil.rmtree(copy, ignore_errors=True)
            print(
                f"{label}: {got['requests']:.0f} requests, {got['rate']:.1f} requests/s,"
                f" p50 {ms(got['p50'])}, p99 {ms(got['p99'])}, {got['errors']:.0f} errors 5xx"
            )


if __name__ == "__main__":
    main()
