"""Search speed (`rollouts.store.search`), against `grep -c -F` on the same file in the same run.

    .venv/bin/python bench/bench_search.py                      # 1 GB step + 300 x 8 MB, temp dir
    .venv/bin/python bench/bench_search.py --keep /tmp/search   # reuse (or keep) the data
    .venv/bin/python bench/bench_search.py --big-mb 256 --steps 60   # a quick look

Writes (outside the repository) one big step of realistic samples (`rollouts.demo.write_big_step`:
long reasoning responses with full token-id and log-prob arrays) and a bucket of `--steps`
steps of about 8 MB (`rollouts.demo.make_sample` records, "I apologize" put at the start of a
share of the responses that grows with the step, so the per-step curve rises). Every file is
read once first, so it sits in the OS page cache: the figures are for a warm disk.

Printed: the load average (the machine is shared: figures taken under load are slower); a
literal search of the big step (the median of 3) and `grep -c -F` of the same literal on the
same file (median of 3), with their ratio, for a literal the step lacks and one in most of its
lines (every such line is decoded to confirm it); a rare and a frequent literal over the whole
bucket, as a client gets them (slices of the server's default budget until done, each step's
line table built once before, as a page that has shown the bucket has them); regex searches
with their slices.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.demo import make_sample, write_big_step  # noqa: E402
from rollouts.store import Catalog  # noqa: E402
from rollouts.store.search import Budget, Cursor, SearchResult, StepRange, search  # noqa: E402
from rollouts.store.search.query import Query  # noqa: E402

MB = 1_000_000
REPEATS = 3
LITERAL = "I apologize"  # absent from the big step: the scan itself, candidates decoded: none
RARE = "As an AI language model"  # in 0.2 % of the bucket's responses
FREQUENT = "\\boxed{"  # in most responses of the big step: every such line decoded
REGEXES = (r"apologi[sz]e\b", r"\b(?:sorry|apologi[sz]e)\b")
TARGET_BIG_S, TARGET_GREP_RATIO, TARGET_BUCKET_S = 0.5, 2.0, 1.5
SLICE_SECONDS = 1.0  # the server's default budget (ROLLOUTS_SEARCH_MS)


def write_bucket(root: Path, steps: int, step_mb: float) -> Path:
    """root/bucket/train/<step>.jsonl: one base step; "I apologize" in a growing share."""
    train = root / "bucket" / "train"
    if train.is_dir() and len(list(train.glob("*.jsonl"))) == steps:
        return root / "bucket"
    shutil.rmtree(root / "bucket", ignore_errors=True)
    train.mkdir(parents=True)
    rng = random.Random("bench-search")
    lines: list[bytes] = []
    size = 0
    while size < step_mb * MB:
        record = make_sample(rng, step=0, sample_index=len(lines), group_index=len(lines) // 8)
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        lines.append(line)
        size += len(line)
    for step in range(steps):
        share = 0.02 + 0.3 * step / max(1, steps - 1)
        step_rng = random.Random(f"bench-search:{step}")
        rare = b'"response": "' + RARE.encode() + b", "
        with (train / f"{step}.jsonl").open("wb") as f:
            for line in lines:
                if step_rng.random() < share:
                    line = line.replace(b'"response": "', b'"response": "I apologize, ', 1)
                if step_rng.random() < 0.002:
                    line = line.replace(b'"response": "', rare, 1)
                f.write(line)
    return root / "bucket"


def warm(paths: list[Path]) -> None:
    for path in paths:
        with path.open("rb") as f:
            while f.read(1 << 24):
                pass


def whole_search(catalog: Catalog, bucket: str, query: Query, seconds: float | None) -> dict:
    """Slices until done, as the page's script asks for them: time, slices, hits, matches."""
    cursor: Cursor | None = None
    slices = matches = hits = scanned = 0
    started = time.perf_counter()
    while True:
        part: SearchResult = search(
            catalog, bucket, query, StepRange(), after=cursor, budget=Budget(seconds)
        )
        slices += 1
        hits += len(part.hits)
        matches += sum(c.matches for c in part.per_step)
        scanned += part.scanned_bytes
        if part.done:
            break
        cursor = part.cursor
    seconds_total = time.perf_counter() - started
    return {
        "s": seconds_total,
        "slices": slices,
        "hits": hits,
        "matches": matches,
        "bytes": scanned,
    }


def grep_seconds(literal: str, path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(
        ["grep", "-c", "-F", "--", literal, str(path)], capture_output=True, text=True, check=False
    )
    return time.perf_counter() - started, int(done.stdout.strip() or 0)


def median_of(runs: list[float]) -> float:
    return statistics.median(runs)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def verdict(value: float, target: float) -> str:
    return "meets" if value < target else "MISSES"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mb", type=float, default=1000.0, help="size of the big step (MB)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--step-mb", type=float, default=8.0)
    parser.add_argument("--keep", type=Path, help="write (or reuse) the data here, and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-search-"))
    try:
        big_dir = root / "big"
        big = big_dir / "0.jsonl"
        if not big.exists() or abs(big.stat().st_size - args.big_mb * MB) > 2 * MB:
            started = time.perf_counter()
            write_big_step(big, int(args.big_mb * MB))
            print(f"wrote the big step in {time.perf_counter() - started:.0f} s")
        bucket_dir = write_bucket(root, args.steps, args.step_mb)
        steps = sorted((bucket_dir / "train").glob("*.jsonl"))
        warm([big, *steps])
        print(f"load average: {load()} (2 cores; other work on the machine slows every figure)")
        # Issue 26, item 12: a query of many distinct non-ASCII letters, before any budget.
        letters = "".join(chr(0x400 + i) for i in range(600))
        started = time.perf_counter()
        Query(letters).matcher()
        took = time.perf_counter() - started
        print(f"a query of 600 distinct Cyrillic letters: compiled in {took:.3f} s")
        size = big.stat().st_size
        print(
            f"big step: {size / MB:.0f} MB; bucket: {len(steps)} steps x "
            f"{sum(p.stat().st_size for p in steps) / len(steps) / MB:.1f} MB"
        )

        catalog = Catalog(big_dir)
        catalog.open_step("default", "0.jsonl")  # the line table, as any page of it builds
        for literal in (LITERAL, FREQUENT):
            query = Query(literal, case=True)
            ours, greps = [], []
            result: dict = {}
            count = 0
            for _ in range(REPEATS):
                greps.append(grep_seconds(literal, big)[0])
                result = whole_search(catalog, "default", query, None)
                ours.append(result["s"])
            count = grep_seconds(literal, big)[1]
            mine, theirs = median_of(ours), median_of(greps)
            print(
                f"literal {literal!r} in the big step: {mine:.3f} s ({size / MB / mine:.0f} MB/s),"
                f" {result['matches']} matching samples; grep -c -F: {theirs:.3f} s"
                f" ({count} lines); ratio {mine / theirs:.2f}x"
            )
            if literal == LITERAL:
                print(
                    f"  target < {TARGET_BIG_S} s: {verdict(mine, TARGET_BIG_S)};"
                    f" within {TARGET_GREP_RATIO}x of grep:"
                    f" {verdict(mine / theirs, TARGET_GREP_RATIO)}"
                )

        bucket = Catalog(bucket_dir)
        started = time.perf_counter()
        for path in steps:
            bucket.open_step("train", path.name)
        print(
            f"bucket: line tables of {len(steps)} steps built in"
            f" {time.perf_counter() - started:.2f} s (once, before the searches)"
        )
        for literal in (RARE, LITERAL):
            runs = [
                whole_search(bucket, "train", Query(literal, case=True), SLICE_SECONDS)
                for _ in range(REPEATS)
            ]
            best = median_of([r["s"] for r in runs])
            fastest = min(r["s"] for r in runs)
            last = runs[-1]
            print(
                f"literal {literal!r} in the bucket: {best:.3f} s (fastest of {REPEATS}:"
                f" {fastest:.3f} s) in {last['slices']} slice(s),"
                f" {last['matches']} matching samples ({last['bytes'] / MB:.0f} MB scanned);"
                f" target < {TARGET_BUCKET_S} s: {verdict(best, TARGET_BUCKET_S)}"
            )
        ci = whole_search(bucket, "train", Query(LITERAL.lower()), SLICE_SECONDS)
        print(
            f"  case-insensitive {LITERAL.lower()!r}: {ci['s']:.3f} s in {ci['slices']} slice(s),"
            f" {ci['matches']} matching samples"
        )
        for pattern in REGEXES:
            for name, cat, where in (("big step", catalog, "default"), ("bucket", bucket, "train")):
                found = whole_search(cat, where, Query(pattern, regex=True), SLICE_SECONDS)
                print(
                    f"regex {pattern!r} in the {name}: {found['s']:.3f} s in"
                    f" {found['slices']} slice(s) of <= {SLICE_SECONDS:.0f} s,"
                    f" {found['matches']} matching samples"
                )
        print(f"load average at the end: {load()}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
