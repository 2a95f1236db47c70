"""Cold-server figures for one big step, against the targets in /work/shared/DESIGN.md.

    .venv/bin/python bench/bench_big_step.py                 # a 1 GiB step in a temp dir
    .venv/bin/python bench/bench_big_step.py --size-mb 256 --keep /tmp/big --no-baseline

Writes a realistic step with `rollouts.demo.write_big_step` (or reuses one with `--keep`),
starts `manage.py visualize` on a free loopback port as a fresh process, and measures what a
user waits for: the first sample, the first page, a sorted list, one sample at a time, and the
memory the server's worker holds for the step. The original tool's way of reading a step
(`[json.loads(l) for l in open(file)]`) runs in a child process as the baseline. Then restarts
on the disk cache the first server filled: a sorted page as the first request, and again right
after `sample/0`; the memory kept after opening and sorting the step, per GB.

The file has just been written (or was read before), so it sits in the OS page cache: the
figures are for a warm disk, which is also what a viewer following a live run sees.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import write_big_step  # noqa: E402
from tests.support.servers import ServerProcess, proc_status, run_visualize  # noqa: E402

MB = 1_000_000  # figures and targets are in decimal megabytes
BUCKET, FILENAME = "default", "0.jsonl"  # a flat data dir holds one bucket named "default"
STEP = f"/api/jsonl/{BUCKET}/file/{FILENAME}"
SORTED = f"{STEP}/samples?sort=reward&order=desc"
LATENCY_REQUESTS = 100
LAST_REQUESTS = 20
PAGE_REQUESTS = 20
PAGE = f"/{BUCKET}/{FILENAME.removesuffix('.jsonl')}"
SORT_READY_TIMEOUT = 300.0  # seconds
TINY_RECORDS = 8  # the step of a few lines whose memory figure is the server's warm-up

# Targets from DESIGN.md and issue 12; a figure meets its target when it is below it.
TARGET_FIRST_SAMPLE_S = 0.5
TARGET_RESTART_SORTED_S = 0.3
TARGET_MB_PER_GB = 10.0
TARGET_SORT_READY_S = 3.0
TARGET_ONE_SAMPLE_MS = 10.0
TARGET_MEMORY_ADDED_MB = 50.0

# The original tool's loading, measured in its own process so its memory is its own.
BASELINE_CODE = """
import json, resource, sys, time

def hwm_kb():  # peak RSS of this process image; ru_maxrss also counts the parent's before exec
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])

start = hwm_kb()
t = time.perf_counter()
rows = [json.loads(l) for l in open(sys.argv[1])]
seconds = time.perf_counter() - t
maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "records": len(rows), "start_kb": start,
                  "peak_kb": hwm_kb(), "maxrss_kb": maxrss}))
"""


@dataclass
class Fetched:
    status: int
    body: bytes
    seconds: float
    done_at: float  # time.perf_counter() when the body was read


def fetch(url: str, timeout: float = SORT_READY_TIMEOUT) -> Fetched:
    """GET on a fresh connection, as the first request of a browser tab would be."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            status, body = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        with exc:
            status, body = exc.code, exc.read()
    done = time.perf_counter()
    return Fetched(status, body, done - start, done)


class KeepAlive:
    """One persistent connection, like a browser's, so latency is the server's, not TCP's."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def get(self, path: str, headers: dict[str, str] | None = None) -> Fetched:
        start = time.perf_counter()
        self.conn.request("GET", path, headers=headers or {})
        resp = self.conn.getresponse()
        body = resp.read()
        done = time.perf_counter()
        return Fetched(resp.status, body, done - start, done)

    def close(self) -> None:
        self.conn.close()


def ensure_ok(fetched: Fetched, what: str) -> Fetched:
    if fetched.status != 200:
        raise SystemExit(f"{what} answered {fetched.status}: {fetched.body[:500]!r}")
    return fetched


def memory(server: ServerProcess) -> dict[str, dict[str, int]]:
    """/proc/<pid>/status figures of gunicorn's arbiter and its (single) worker."""
    workers = server.workers()
    if len(workers) != 1:
        raise SystemExit(f"expected one gunicorn worker, found {workers}")
    return {"arbiter": proc_status(server.pid), "worker": proc_status(workers[0])}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def prepare_step(args: argparse.Namespace) -> tuple[Path, Path, str]:
    """(data dir, step file, how it came to be); generates unless --keep has a big enough one."""
    target = args.size_mb * 1024 * 1024
    data_dir = args.keep if args.keep is not None else Path(tempfile.mkdtemp(prefix="bigstep-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / FILENAME
    if args.keep is not None and path.is_file() and path.stat().st_size >= target:
        return data_dir, path, "reused"
    start = time.perf_counter()
    count = write_big_step(path, target, seed=args.seed)
    took = time.perf_counter() - start
    return data_dir, path, f"written: {count} samples in {took:.1f} s"


def run_baseline(path: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", BASELINE_CODE, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def bench(args: argparse.Namespace, path: Path) -> dict[str, float | str]:
    # One disk cache for every server of this run, so that a restart finds what the first
    # server wrote (and never one left over from an earlier run).
    with tempfile.TemporaryDirectory(prefix="bigstep-cache-") as cache:
        return bench_servers(args, path, ("--disk-cache", cache))


def bench_servers(
    args: argparse.Namespace, path: Path, flags: tuple[str, ...]
) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    with (
        tempfile.TemporaryDirectory(prefix="bigstep-log-") as logs,
        run_visualize(path.parent, *flags, log_dir=Path(logs)) as srv,
    ):
        assert srv.ready_at is not None
        figures["server_up_s"] = srv.ready_at - srv.started_at
        before = memory(srv)

        first = ensure_ok(fetch(srv.url(f"{STEP}/sample/0")), "sample/0")
        opened_at = first.done_at - first.seconds
        figures["step_bytes"] = path.stat().st_size
        figures["first_sample_request_s"] = first.seconds
        figures["first_sample_from_start_s"] = first.done_at - srv.started_at
        opened = json.loads(first.body)
        records = figures["records"] = opened["records"]
        with path.open("rb") as f:
            if opened["sample"] != json.loads(f.readline()):
                raise SystemExit("sample/0 is not the first line of the file")

        page = ensure_ok(fetch(srv.url(f"{STEP}/samples?page=1")), "samples?page=1")
        figures["first_page_request_s"] = page.seconds
        figures["first_page_from_start_s"] = page.done_at - srv.started_at

        sort_url = srv.url(SORTED)
        deadline = time.monotonic() + SORT_READY_TIMEOUT
        while (sort := fetch(sort_url)).status != 200:
            if time.monotonic() > deadline:
                ensure_ok(sort, "sorted samples")
            time.sleep(0.02)
        figures["sort_ready_from_open_s"] = sort.done_at - opened_at
        figures["sort_ready_from_start_s"] = sort.done_at - srv.started_at
        figures["sort_request_s"] = sort.seconds
        # What opening and sorting the step keeps (issue 12, 7.4), before anything else runs.
        sorted_memory = memory(srv)["worker"]
        figures["sorted_added_mb"] = (sorted_memory["VmRSS"] - before["worker"]["VmRSS"]) / MB
        figures["sorted_anon_added_mb"] = (
            sorted_memory["RssAnon"] - before["worker"]["RssAnon"]
        ) / MB

        rng = random.Random(args.seed)
        client = KeepAlive(srv.port)
        try:
            timings, sizes = [], []
            for _ in range(LATENCY_REQUESTS):
                got = ensure_ok(client.get(f"{STEP}/sample/{rng.randrange(records)}"), "sample")
                timings.append(got.seconds * 1000)
                sizes.append(len(got.body))
            last = [
                ensure_ok(client.get(f"{STEP}/sample/{records - 1}"), "last sample").seconds * 1000
                for _ in range(LAST_REQUESTS)
            ]
            # The web viewer: a whole sample page (a reload or a pasted link), and the <main>
            # fragment its script fetches to move to a neighbour.
            for name, headers in (("html_page", None), ("html_fragment", {"RV-Fragment": "1"})):
                pages = []
                for _ in range(PAGE_REQUESTS):
                    url = f"{PAGE}/sample/{rng.randrange(records)}/"
                    pages.append(ensure_ok(client.get(url, headers), url).seconds * 1000)
                figures[f"{name}_median_ms"] = statistics.median(pages)
                figures[f"{name}_p90_ms"] = percentile(pages, 90)
        finally:
            client.close()
        figures["one_sample_median_ms"] = statistics.median(timings)
        figures["one_sample_p90_ms"] = percentile(timings, 90)
        figures["one_sample_mean_kb"] = statistics.mean(sizes) / 1000
        figures["last_sample_median_ms"] = statistics.median(last)

        columns = ensure_ok(fetch(srv.url(f"{STEP}/columns?names=reward")), "columns")
        summary = json.loads(columns.body)
        figures["columns_ready"] = str(summary["columns_ready"])
        figures["invalid_lines"] = len(summary["invalid"])

        after = memory(srv)

        # The whole step over the wire: it must stream, not gather the step in the worker.
        started = time.perf_counter()
        streamed, tail = 0, b""
        with urllib.request.urlopen(srv.url(STEP), timeout=SORT_READY_TIMEOUT) as response:
            while chunk := response.read(1 << 20):
                streamed += len(chunk)
                tail = (tail + chunk)[-64:]
        figures["whole_file_s"] = time.perf_counter() - started
        figures["whole_file_mb"] = streamed / MB
        if not tail.endswith(f'"total": {records}, "complete": true}}'.encode()):
            raise SystemExit(f"whole-file response ends oddly: {tail!r}")
        figures["worker_peak_after_stream_mb"] = (
            memory(srv)["worker"]["VmHWM"] - before["worker"]["VmRSS"]
        ) / MB

        for proc in ("arbiter", "worker"):
            for name in ("VmRSS", "RssAnon"):
                figures[f"{proc}_{name}_before_mb"] = before[proc][name] / MB
                figures[f"{proc}_{name}_after_mb"] = after[proc][name] / MB
        figures["worker_added_mb"] = (after["worker"]["VmRSS"] - before["worker"]["VmRSS"]) / MB
        figures["worker_anon_added_mb"] = (
            after["worker"]["RssAnon"] - before["worker"]["RssAnon"]
        ) / MB
        figures["worker_peak_added_mb"] = (
            after["worker"]["VmHWM"] - before["worker"]["VmRSS"]
        ) / MB
    figures["server_exit_code"] = str(srv.returncode)

    # A restart: the disk cache holds the step's columns, so a sorted page needs only the
    # newline scan and the entry, not the column pass. First as the first request; then
    # right after sample/0, whose background column pass the sorted request then meets.
    cache_dir = Path(flags[-1])
    figures["disk_entry_kb"] = sum(p.stat().st_size for p in cache_dir.glob("*.msgpack")) / 1000
    for name, first_path in (
        ("restart_sorted", None),
        ("restart_sorted_after_sample", "/sample/0"),
    ):
        with (
            tempfile.TemporaryDirectory(prefix="bigstep-log-") as logs,
            run_visualize(path.parent, *flags, log_dir=Path(logs)) as srv,
        ):
            started = memory(srv)["worker"]["VmRSS"]
            if first_path is not None:
                ensure_ok(fetch(srv.url(STEP + first_path)), first_path)
            figures[f"{name}_s"] = ensure_ok(fetch(srv.url(SORTED)), name).seconds
            if first_path is None:
                added = memory(srv)["worker"]["VmRSS"] - started
                figures["restart_worker_added_mb"] = added / MB

    # What the same requests keep on a step of a few lines: the server's own warm-up (modules,
    # threads), not the step's, so the big step's figure can be read net of it.
    with (
        tempfile.TemporaryDirectory(prefix="bigstep-tiny-") as tiny,
        tempfile.TemporaryDirectory(prefix="bigstep-log-") as logs,
    ):
        with path.open("rb") as f, (Path(tiny) / FILENAME).open("wb") as out:
            out.writelines(f.readline() for _ in range(TINY_RECORDS))
        with run_visualize(tiny, *flags, log_dir=Path(logs)) as srv:
            started = memory(srv)["worker"]["VmRSS"]
            for request in (f"{STEP}/sample/0", f"{STEP}/samples?page=1", SORTED):
                ensure_ok(fetch(srv.url(request)), request)
            figures["warmup_added_mb"] = (memory(srv)["worker"]["VmRSS"] - started) / MB

    # A colleague opens the link: a fresh server, and the landing page `/` (the latest step).
    with (
        tempfile.TemporaryDirectory(prefix="bigstep-log-") as logs,
        run_visualize(path.parent, *flags, log_dir=Path(logs)) as srv,
    ):
        landing = ensure_ok(fetch(srv.url("/")), "/ (landing page)")
        if b'class="rv-position">Sample 1 of' not in landing.body:
            raise SystemExit("the landing page does not show the first sample")
        figures["landing_from_start_s"] = landing.done_at - srv.started_at
        figures["landing_request_s"] = landing.seconds
    return figures


Row = tuple[str, str, str, str]


def row(label: str, value: str, limit: float | None = None, unit: str = "", got: float = 0) -> Row:
    """A table row; with `limit`, the target `< limit unit` and whether `got` meets it."""
    if limit is None:
        return (label, value, "", "")
    return (label, value, f"< {limit:g} {unit}", "PASS" if got < limit else "MISS")


def table(figures: dict[str, float | str], baseline: dict[str, float] | None) -> list[Row]:
    def num(key: str) -> float:
        return float(figures[key])

    def before_after(proc: str, name: str) -> str:
        return f"{num(f'{proc}_{name}_before_mb'):.1f} -> {num(f'{proc}_{name}_after_mb'):.1f} MB"

    first, first_alone = num("first_sample_from_start_s"), num("first_sample_request_s")
    sort_ready, median = num("sort_ready_from_start_s"), num("one_sample_median_ms")
    added = num("worker_added_mb")
    restart = num("restart_sorted_s")
    gb = float(figures["step_bytes"]) / 1e9
    per_gb = num("sorted_added_mb") / gb
    rows = [
        row("server up (process start -> API answers)", f"{num('server_up_s'):.3f} s"),
        row("first sample, process start -> /sample/0", f"{first:.3f} s",
            TARGET_FIRST_SAMPLE_S, "s", first),
        row("first sample, the request alone", f"{first_alone:.3f} s",
            TARGET_FIRST_SAMPLE_S, "s", first_alone),
        row("first samples?page=1, the request alone", f"{num('first_page_request_s'):.3f} s"),
        row("first samples?page=1, from process start",
            f"{num('first_page_from_start_s'):.3f} s"),
        row("sort-ready (reward desc), from process start", f"{sort_ready:.3f} s",
            TARGET_SORT_READY_S, "s", sort_ready),
        row("sort-ready, from opening the step", f"{num('sort_ready_from_open_s'):.3f} s"),
        row(f"one sample, median of {LATENCY_REQUESTS} random", f"{median:.2f} ms",
            TARGET_ONE_SAMPLE_MS, "ms", median),
        row("sorted page after restart (disk cache)", f"{restart:.3f} s",
            TARGET_RESTART_SORTED_S, "s", restart),
        row("  the same, right after sample/0", f"{num('restart_sorted_after_sample_s'):.3f} s",
            TARGET_RESTART_SORTED_S, "s", num("restart_sorted_after_sample_s")),
        row("  disk cache entry of the step", f"{num('disk_entry_kb'):,.0f} kB"),
        row("one sample, p90", f"{num('one_sample_p90_ms'):.2f} ms"),
        row(f"last sample, median of {LAST_REQUESTS}", f"{num('last_sample_median_ms'):.2f} ms"),
        row("web: landing page /, process start -> HTML", f"{num('landing_from_start_s'):.3f} s"),
        row("web: landing page /, the request alone", f"{num('landing_request_s'):.3f} s"),
        row(f"web: sample page, median of {PAGE_REQUESTS} random",
            f"{num('html_page_median_ms'):.1f} ms (p90 {num('html_page_p90_ms'):.1f})"),
        row("web: <main> fragment (next/prev), median",
            f"{num('html_fragment_median_ms'):.1f} ms (p90 {num('html_fragment_p90_ms'):.1f})"),
        row("worker VmRSS before -> after", before_after("worker", "VmRSS")),
        row("worker RssAnon before -> after", before_after("worker", "RssAnon")),
        row("memory added by the step (worker VmRSS)", f"{added:.1f} MB",
            TARGET_MEMORY_ADDED_MB, "MB", added),
        row("memory added (worker RssAnon)", f"{num('worker_anon_added_mb'):.1f} MB"),
        row("memory kept after opening and sorting", f"{num('sorted_added_mb'):.1f} MB"
            f" (RssAnon {num('sorted_anon_added_mb'):.1f})"),
        row("  per GB of step (VmRSS)", f"{per_gb:.1f} MB/GB", TARGET_MB_PER_GB, "MB/GB", per_gb),
        row(f"  the same requests on a {TINY_RECORDS}-line step (warm-up)",
            f"{num('warmup_added_mb'):.1f} MB"),
        row("  per GB of step, net of the warm-up",
            f"{(num('sorted_added_mb') - num('warmup_added_mb')) / gb:.1f} MB/GB"),
        row("memory added after restart, sorted (VmRSS)",
            f"{num('restart_worker_added_mb'):.1f} MB"),
        row("worker peak (VmHWM) over before", f"{num('worker_peak_added_mb'):.1f} MB"),
        row("whole step streamed (GET .../file/0.jsonl)",
            f"{num('whole_file_mb'):,.0f} MB in {num('whole_file_s'):.2f} s"),
        row("worker peak (VmHWM) over before, after it",
            f"{num('worker_peak_after_stream_mb'):.1f} MB"),
        row("arbiter VmRSS before -> after", before_after("arbiter", "VmRSS")),
        row("server exit code after SIGTERM", str(figures["server_exit_code"])),
    ]  # fmt: skip
    if baseline is not None:
        seconds = baseline["seconds"]
        peak, start = baseline["peak_kb"] * 1024 / MB, baseline["start_kb"] * 1024 / MB
        rows += [
            row("naive [json.loads(l) for l in open(f)]: time", f"{seconds:.1f} s"),
            row("naive: peak RSS, VmHWM (interpreter alone)", f"{peak:,.0f} MB ({start:.0f} MB)"),
            row("naive: ru_maxrss", f"{baseline['maxrss_kb'] * 1024 / MB:,.0f} MB"),
            row("ratio: naive time / first sample request", f"{seconds / first_alone:,.0f}x"),
            row("ratio: naive time / sort-ready from open",
                f"{seconds / num('sort_ready_from_open_s'):,.1f}x"),
            row("ratio: naive peak / worker memory added",
                f"{(peak - start) / max(added, 0.1):,.0f}x"),
        ]  # fmt: skip
    return rows


def print_table(
    path: Path, origin: str, figures: dict[str, float | str], baseline: dict[str, float] | None
) -> None:
    size = path.stat().st_size
    print(f"\nstep: {size:,} bytes ({size / MB:,.0f} MB), {origin}")
    print(
        f"records: {figures['records']}, columns ready: {figures['columns_ready']}, "
        f"invalid lines: {figures['invalid_lines']}, "
        f"mean sample {float(figures['one_sample_mean_kb']):.0f} kB"
    )
    rows = table(figures, baseline)
    header = ("figure", "value", "target", "result")
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    for cells in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="step size in MiB (1024)")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help=f"write the step to DIR/{FILENAME} (or reuse it there) and keep it",
    )
    parser.add_argument("--no-baseline", action="store_true", help="skip the json.loads baseline")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    data_dir, path, origin = prepare_step(args)
    try:
        print(f"step file: {path} ({origin})", flush=True)
        figures = bench(args, path)
        baseline = None
        if not args.no_baseline:
            print("baseline: json.loads of every line in a child process ...", flush=True)
            baseline = run_baseline(path)
            if baseline["records"] != figures["records"]:
                print(
                    f"warning: the baseline read {baseline['records']} records, "
                    f"the server {figures['records']}"
                )
        print_table(path, origin, figures, baseline)
    finally:
        if args.keep is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
