"""The first answers about a big step on a fresh server, from a warm and from a cold page cache.

    .venv/bin/python bench/bench_cold_open.py --keep /tmp/big          # 1 GiB step, kept
    .venv/bin/python bench/bench_cold_open.py --size-mb 256 --trials 2

For each trial and each condition, a fresh `manage.py visualize` process answers one request:

- the first sample page (`/default/0/`, HTML): a page may open the step partly scanned;
- its JSON twin (`/api/view/default/0`), which counts every record first: the baseline, the
  same work as the page before partial scans;
- the original API's first page in file order (`samples?page=1&page_size=50`), answered from
  the newline scan without waiting for the column pass.

"Cold" evicts the step from the OS page cache first (`posix_fadvise(DONTNEED)`), as if another
process had churned it: every byte then comes from the disk. The time to read the whole file
cold in this process is printed too: what any design that scans the file first must pay.
Figures are the median of the trials, per request (the server is up and idle before it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.bench_big_step import MB, ensure_ok, fetch  # noqa: E402
from rollouts.demo import write_big_step  # noqa: E402
from tests.support.servers import run_visualize  # noqa: E402

FILENAME = "0.jsonl"
REQUESTS = {
    "first sample page (HTML)": "/default/0/",
    "its JSON twin, every record counted (baseline)": "/api/view/default/0",
    "original API, first page in file order": (
        f"/api/jsonl/default/file/{FILENAME}/samples?page=1&page_size=50"
    ),
}
TARGETS = {"first sample page (HTML)": 0.3, "original API, first page in file order": 0.5}


def evict(path: Path) -> None:
    """Drop the file's pages from the OS page cache (clean pages only; the file is not written)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_all(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb", buffering=0) as f:
        buf = bytearray(8 * 1024 * 1024)
        while f.readinto(buf):
            pass
    return time.perf_counter() - start


def one_request(data_dir: Path, path: Path, url: str, cold: bool) -> float:
    with tempfile.TemporaryDirectory(prefix="coldopen-") as logs:
        cache = ("--disk-cache", "off")
        with run_visualize(data_dir, *cache, log_dir=Path(logs)) as srv:
            if cold:
                evict(path)
            else:
                read_all(path)
            return ensure_ok(fetch(srv.url(url)), url).seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="step size in MiB")
    parser.add_argument("--keep", type=Path, default=None, help="directory to write/reuse it in")
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args(argv)
    data_dir = args.keep or Path(tempfile.mkdtemp(prefix="coldopen-data-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / FILENAME
    target = args.size_mb * 1024 * 1024
    if not (path.is_file() and path.stat().st_size >= target):
        write_big_step(path, target)
    size = path.stat().st_size
    print(f"step: {path.name}, {size / MB:,.0f} MB; {args.trials} trials, median shown")
    evict(path)
    cold_read = read_all(path)
    print(f"{'reading the whole file cold (this process)':52} {cold_read:8.3f} s")
    figures: dict[tuple[str, bool], float] = {}
    for cold in (False, True):
        for label, url in REQUESTS.items():
            runs = [one_request(data_dir, path, url, cold) for _ in range(args.trials)]
            figures[label, cold] = statistics.median(runs)
    for cold in (False, True):
        print(f"-- {'cold' if cold else 'warm'} page cache")
        for label in REQUESTS:
            seconds = figures[label, cold]
            target = TARGETS.get(label)
            verdict = "" if target is None else f"  (target < {target} s: "
            verdict += "" if target is None else ("met)" if seconds < target else "MISSED)")
            print(f"{label:52} {seconds:8.3f} s{verdict}")
        base = figures["its JSON twin, every record counted (baseline)", cold]
        page = figures["first sample page (HTML)", cold]
        print(f"{'ratio: baseline / first sample page':52} {base / page:8.1f}x")
    if args.keep is None:
        path.unlink()
        data_dir.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
