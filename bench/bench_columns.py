"""The store alone, in-process: newline scan, column pass and a sort, for two kinds of step.

    .venv/bin/python bench/bench_columns.py [--size-mb 256]

"tokens": lines of ~300 kB holding token ids and log-probs, as the Relax writer writes them
(rollouts.demo.write_big_step). "small": 3 kB lines of the first-generation format (no token
ids), i.e. ~100x more rows for the same bytes: the worst case for per-row work. The baseline,
measured in the same process on the same file, parses every line with `json.loads`, which is
what a viewer that builds Python objects for the whole step must do before it can sort.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollouts.demo import write_big_step
from rollouts.store import Catalog, Selection


def write_small_lines(path: Path, target_bytes: int) -> int:
    record = {
        "rollout_id": 0,
        "sample_index": 0,
        "prompt": "<|im_start|>user\n" + "p" * 2000 + "<|im_end|>\n<|im_start|>assistant\n",
        "response": "r" * 1000,
        "reward": 0.0,
        "response_length": 300,
        "total_length": 900,
        "status": "completed",
        "group_index": 0,
        "label": "42",
    }
    written = rows = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target_bytes:
            record.update(sample_index=rows, reward=(rows % 7) / 7, group_index=rows // 8)
            written += f.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows += 1
    return rows


def measure(data_dir: Path) -> dict[str, float]:
    catalog = Catalog(data_dir)
    started = time.perf_counter()
    index = catalog.open_step("default", "0.jsonl")
    scanned = time.perf_counter()
    catalog.columns(index)
    columned = time.perf_counter()
    catalog.ordering(index, Selection("reward", descending=True))
    sorted_at = time.perf_counter()
    with (data_dir / "0.jsonl").open("rb") as f:
        rewards = [json.loads(line).get("reward") for line in f if line.strip()]
    baseline = time.perf_counter()
    assert len(rewards) == len(index)
    return {
        "rows": len(index),
        "scan_s": scanned - started,
        "columns_s": columned - scanned,
        "sort_s": sorted_at - columned,
        "index_mb": index.cache_nbytes() / 1e6,
        "baseline_s": baseline - sorted_at,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=256)
    args = parser.parse_args()
    target = args.size_mb * 1_000_000
    header = f"{'step':8} {'MB':>6} {'rows':>8} {'scan':>7} {'columns':>8} {'sort':>7}"
    print(header + f" {'sort-ready':>10} {'index MB':>9} {'json.loads':>10} {'ratio':>6}")
    for kind, write in (("tokens", write_big_step), ("small", write_small_lines)):
        with tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as tmp:
            path = Path(tmp) / "0.jsonl"
            write(path, target)
            f = measure(Path(tmp))
            ready = f["scan_s"] + f["columns_s"] + f["sort_s"]
            print(
                f"{kind:8} {path.stat().st_size / 1e6:6.0f} {f['rows']:8,} {f['scan_s']:6.2f}s"
                f" {f['columns_s']:7.2f}s {f['sort_s']:6.2f}s {ready:9.2f}s {f['index_mb']:9.1f}"
                f" {f['baseline_s']:9.2f}s {f['baseline_s'] / ready:5.1f}x"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
