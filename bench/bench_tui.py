"""The terminal UI on one big step, driven by textual's own pilot (no real terminal).

    .venv/bin/python bench/bench_tui.py                        # 1 GiB step in a temp dir
    .venv/bin/python bench/bench_tui.py --keep /tmp/big        # write (or reuse) /tmp/big/0.jsonl

Measures what a user waits for after `visualize DATA_DIR --tui`: the first sample on screen
(app start, newline scan in a worker thread, first render), the columns (sorting, datasets and
the key list; indexed in the background), and moving to the next sample (`n`), split into our
own work (reading and formatting the sample) and textual's repaint. The same figures for the
demo data (small samples) are the baseline, measured in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from rollouts.conf import DEFAULT_MASK_STR  # noqa: E402
from rollouts.demo import write_big_step, write_demo  # noqa: E402
from rollouts.tui.app import RolloutsApp  # noqa: E402
from rollouts.tui.pane import SamplePane  # noqa: E402

FILENAME = "0.jsonl"
MOVES = 20


async def measure(data_dir: Path) -> dict[str, float]:
    started = time.perf_counter()
    app = RolloutsApp(data_dir, DEFAULT_MASK_STR)
    figures: dict[str, float] = {}
    async with app.run_test(size=(140, 45)) as pilot:
        pane = app.query_one(SamplePane)
        while pane.presented is None:
            await asyncio.sleep(0.002)
        # pause(0), not pause(): the latter waits for the CPU to go idle, i.e. for the column
        # pass running in the background; this waits for the screen to process the update.
        await pilot.pause(0)
        figures["first_sample_s"] = time.perf_counter() - started
        await app.workers.wait_for_complete()
        figures["columns_ready_s"] = time.perf_counter() - started
        figures["samples"] = app.session.total
        ours, repaint = [], []
        for _ in range(MOVES):
            start = time.perf_counter()
            app.action_move(1)
            middle = time.perf_counter()
            await pilot.pause()
            ours.append((middle - start) * 1000)
            repaint.append((time.perf_counter() - middle) * 1000)
        figures["next_ours_ms"] = statistics.median(ours)
        figures["next_repaint_ms"] = statistics.median(repaint)
        figures["chars_shown"] = len(pane.plain)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1024, help="step size in MiB (1024)")
    parser.add_argument("--keep", type=Path, metavar="DIR", help=f"write or reuse DIR/{FILENAME}")
    args = parser.parse_args(argv)
    big_dir = args.keep or Path(tempfile.mkdtemp(prefix="tui-big-"))
    demo_dir = Path(tempfile.mkdtemp(prefix="tui-demo-"))
    try:
        big_dir.mkdir(parents=True, exist_ok=True)
        path = big_dir / FILENAME
        if not (path.is_file() and path.stat().st_size >= args.size_mb * 1024 * 1024):
            print(f"writing {args.size_mb} MiB to {path} ...", flush=True)
            write_big_step(path, args.size_mb * 1024 * 1024)
        write_demo(demo_dir)
        rows = [
            ("big step", path.stat().st_size, asyncio.run(measure(big_dir))),
            ("demo (baseline)", None, asyncio.run(measure(demo_dir / "rollout_result"))),
        ]
    finally:
        if args.keep is None:
            shutil.rmtree(big_dir, ignore_errors=True)
        shutil.rmtree(demo_dir, ignore_errors=True)
    header = ("data", "samples", "first sample", "columns", "next: ours", "next: repaint", "chars")
    print("  ".join(header))
    for name, size, f in rows:
        label = f"{name} ({size / 1e6:,.0f} MB)" if size else name
        print(
            f"{label}  {f['samples']:,.0f}  {f['first_sample_s']:.3f} s  "
            f"{f['columns_ready_s']:.3f} s  {f['next_ours_ms']:.1f} ms  "
            f"{f['next_repaint_ms']:.1f} ms  {f['chars_shown']:,.0f}"
        )
    big, demo = rows[0][2], rows[1][2]
    ratio = big["first_sample_s"] / demo["first_sample_s"]
    print(f"ratio: first sample, big step / demo: {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
