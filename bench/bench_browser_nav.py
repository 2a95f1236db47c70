"""Sample-to-sample navigation in a real browser: JS navigation against full page loads.

    .venv/bin/python bench/bench_browser_nav.py
    .venv/bin/python bench/bench_browser_nav.py --samples 200 --sample-kb 100 --presses 30

Writes a flat data dir with one step of ~100 KB samples (prompt and response text plus a
response token-id array), starts `manage.py visualize` on a free loopback port, and drives the
system's headless Chromium (`RELAX_CHROMIUM` or `chromium` on PATH; never a download):

- ArrowRight, one sample at a time, each press after the next sample was prefetched (as when
  a user reads a sample before moving on): the page's own `performance.measure("rv-nav")`,
  from the key press to the swapped DOM;
- quick jumps to samples nobody fetched before (`?i=K`, which the server answers with a
  redirect to the sample: two requests), i.e. navigation without the benefit of prefetch;
- full page loads (`page.goto` of the sample URL) as the baseline: the navigation entry's
  loadEventEnd, and page.goto's wall time.

It prints figures and asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from tests.support.browser import CHROMIUM_ARGS, VIEWPORT, chromium_path  # noqa: E402
from tests.support.servers import run_visualize  # noqa: E402

BUCKET, STEP = "default", 0  # a flat data dir holds one bucket named "default"
TIMEOUT_MS = 30_000
WORDS = [
    "so", "we", "add", "both", "sides", "then", "check", "the", "sum", "again", "carefully",
    "because", "next", "term", "depends", "on", "it", "and", "answer", "must", "be", "an",
]  # fmt: skip


# -- data ------------------------------------------------------------------------------------
def prose(rng: random.Random, chars: int) -> str:
    out, size = [], 0
    while size < chars:
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(8, 16))).capitalize() + "."
        if rng.random() < 0.3:
            sentence += f" {rng.randint(2, 999)} + {rng.randint(2, 999)}."
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)


def make_record(rng: random.Random, index: int, sample_bytes: int) -> dict:
    """~sample_bytes of JSON: 15 % prompt, 35 % response, the rest a token-id array."""
    prompt_text = prose(rng, sample_bytes * 15 // 100)
    response_text = prose(rng, sample_bytes * 35 // 100)
    ids = [rng.randrange(151_643) for _ in range(sample_bytes * 50 // 100 // 8)]
    return {
        "rollout_id": 0,
        "sample_index": index,
        "prompt": f"<|im_start|>user\n{prompt_text}<|im_end|>\n<|im_start|>assistant\n",
        "response": f"<think>\n{response_text}\n</think>\n\nDone.<|im_end|>",
        "reward": round(rng.random(), 4),
        "response_length": len(ids),
        "total_length": len(ids) + len(prompt_text) // 4,
        "status": "completed",
        "group_index": index // 8,
        "response_token_ids": ids,
        "label": str(rng.randint(0, 100)),
    }


def write_data(data_dir: Path, samples: int, sample_bytes: int, seed: int) -> Path:
    rng = random.Random(seed)
    path = data_dir / f"{STEP}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(samples):
            f.write(json.dumps(make_record(rng, i, sample_bytes)) + "\n")
    return path


# -- measuring -------------------------------------------------------------------------------
def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), math.ceil(q / 100 * len(ordered))))
    return ordered[rank - 1]


def nav_durations(page: Page) -> list[float]:
    return page.evaluate("() => performance.getEntriesByName('rv-nav').map(e => e.duration)")


def wait_for_prefetch(page: Page) -> None:
    """Until the fetch of the next sample (the page's data-next-url) has finished."""
    page.wait_for_function(
        """() => {
            const next = document.querySelector('#rv-sample').dataset.nextUrl;
            if (!next) return true;
            const url = new URL(next, location.href).href;
            return performance.getEntriesByType('resource')
                .some(e => e.name === url && e.responseEnd > 0);
        }"""
    )


def press_through(page: Page, presses: int, total: int) -> list[float]:
    """ArrowRight `presses` times from sample 1, each after the next one was prefetched."""
    wait_for_prefetch(page)
    before = len(nav_durations(page))
    for rank in range(2, presses + 2):
        page.keyboard.press("ArrowRight")
        expect(page.locator("#rv-position")).to_have_text(f"Sample {rank} of {total}")
        wait_for_prefetch(page)
    return nav_durations(page)[before:]


def jump_through(page: Page, ranks: list[int], total: int) -> list[float]:
    """Quick jumps to `ranks`, none of them fetched before."""
    before = len(nav_durations(page))
    for rank in ranks:
        page.fill("#rv-jump-input", str(rank))
        page.press("#rv-jump-input", "Enter")
        expect(page.locator("#rv-position")).to_have_text(f"Sample {rank} of {total}")
        wait_for_prefetch(page)
    return nav_durations(page)[before:]


def full_loads(page: Page, urls: list[str]) -> tuple[list[float], list[float]]:
    """(loadEventEnd, page.goto wall time) in ms for each URL, each a fresh document."""
    load_end, wall = [], []
    for url in urls:
        start = time.perf_counter()
        page.goto(url, wait_until="load")
        wall.append((time.perf_counter() - start) * 1000)
        load_end.append(
            page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
        )
    return load_end, wall


def bench(args: argparse.Namespace, data_dir: Path, executable: str) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}
    total = args.samples
    with (
        tempfile.TemporaryDirectory(prefix="browser-nav-log-") as logs,
        run_visualize(data_dir, log_dir=Path(logs)) as server,
        sync_playwright() as driver,
    ):
        browser = driver.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_context(viewport=VIEWPORT).new_page()
            page.set_default_timeout(TIMEOUT_MS)
            first = server.url(f"/{BUCKET}/{STEP}/sample/0/")
            page.goto(first)  # builds the step's index; not measured
            expect(page.locator("#rv-position")).to_have_text(f"Sample 1 of {total}")

            page.goto(first)
            figures["js_nav_prefetched"] = press_through(page, args.presses, total)

            # Ranks far from anything visited or prefetched so far, distinct and non-adjacent.
            start = args.presses + 5
            ranks = list(range(start, total + 1, 3))[: args.jumps]
            page.goto(first)
            expect(page.locator("#rv-position")).to_have_text(f"Sample 1 of {total}")
            figures["js_jump_not_prefetched"] = jump_through(page, ranks, total)

            # Positions none of the above visited, so no cache holds their page.
            positions = list(range(total - args.loads, total))
            urls = [server.url(f"/{BUCKET}/{STEP}/sample/{p}/") for p in positions]
            figures["full_load_event_end"], figures["full_goto_wall"] = full_loads(page, urls)
            sizes = page.evaluate(
                "() => performance.getEntriesByType('navigation').map(e => e.encodedBodySize)"
            )
            figures["page_kb"] = [s / 1000 for s in sizes]
        finally:
            browser.close()
    return figures


def print_table(figures: dict[str, list[float]], path: Path, samples: int) -> None:
    size = path.stat().st_size
    print(f"\nstep: {size:,} bytes, {samples} samples, mean {size / samples / 1000:.0f} kB a line")
    print(f"page HTML (one sample): {statistics.mean(figures['page_kb']):.0f} kB")
    labels = {
        "js_nav_prefetched": "JS nav, ArrowRight, next prefetched (rv-nav)",
        "js_jump_not_prefetched": "JS nav, quick jump, not prefetched (rv-nav)",
        "full_load_event_end": "full page load, loadEventEnd",
        "full_goto_wall": "full page load, page.goto wall time",
    }
    header = ("figure", "n", "median ms", "p90 ms", "max ms")
    rows = [
        (
            label,
            str(len(figures[key])),
            f"{statistics.median(figures[key]):.1f}",
            f"{percentile(figures[key], 90):.1f}",
            f"{max(figures[key]):.1f}",
        )
        for key, label in labels.items()
    ]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]
    for cells in (header, *rows):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    full = statistics.median(figures["full_load_event_end"])
    for key in ("js_nav_prefetched", "js_jump_not_prefetched"):
        ratio = full / max(statistics.median(figures[key]), 0.01)
        print(f"ratio: full page load / {labels[key]}: {ratio:.1f}x (medians)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="samples in the step (200)")
    parser.add_argument("--sample-kb", type=int, default=100, help="size of a sample (100 kB)")
    parser.add_argument("--presses", type=int, default=30, help="ArrowRight presses (30)")
    parser.add_argument("--jumps", type=int, default=30, help="quick jumps (30)")
    parser.add_argument("--loads", type=int, default=30, help="full page loads (30)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.samples < args.presses + 5 + 3 * args.jumps + args.loads:
        parser.error("--samples too small for --presses, --jumps and --loads")
    executable = chromium_path()
    if executable is None:
        raise SystemExit("no Chromium: set RELAX_CHROMIUM or install Debian's `chromium`")
    data_dir = Path(tempfile.mkdtemp(prefix="browser-nav-"))
    try:
        started = time.perf_counter()
        path = write_data(data_dir, args.samples, args.sample_kb * 1000, args.seed)
        print(f"step file: {path} (written in {time.perf_counter() - started:.1f} s)", flush=True)
        figures = bench(args, data_dir, executable)
        print_table(figures, path, args.samples)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
