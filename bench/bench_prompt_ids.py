"""What the prompt-id column costs the column pass, measured against the same pass without it.

    .venv/bin/python bench/bench_prompt_ids.py [--size-mb 128] [--repeat 3]

Writes a step of ~3 kB first-generation lines whose prompts are chat-template text (with the
`\\n` escapes every real prompt has, so the id needs a decode), in groups of `--group` samples
sharing one prompt (GRPO), and a worst case where every sample has its own prompt. Each pass is
a fresh index of the same file (`StepIndex.ensure_columns`, the page cache warm); "without" is
the same pass with the prompt id replaced by a constant, in the same process, alternating with
"with" so both see the same machine. The best of `--repeat` passes is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollouts.store import Columns, StepIndex
from rollouts.store.jsonio import DecodedLine


def write_step(path: Path, target_bytes: int, group: int) -> int:
    written = rows = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target_bytes:
            k = rows // group
            record = {
                "rollout_id": 0,
                "sample_index": rows,
                "prompt": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                f"<|im_start|>user\nProblem {k}: " + "solve for x. " * 150 + "<|im_end|>\n"
                "<|im_start|>assistant\n",
                "response": "Let me think step by step. " * 40,
                "reward": float(rows % 3 == 0),
                "response_length": 300 + rows % 97,
                "total_length": 900 + rows % 97,
                "status": "completed",
                "group_index": k,
                "label": "42",
            }
            written += f.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows += 1
    return rows


def column_pass(path: Path) -> float:
    started = time.perf_counter()
    StepIndex.build(path, "train/0.jsonl").ensure_columns()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=128)
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    real = Columns._prompt_id

    def constant(self: Columns, decoded: DecodedLine) -> int:
        return 1

    print(f"{'prompts':22} {'MB':>5} {'rows':>8} {'without':>8} {'with':>8} {'cost':>7}")
    for label, group in ((f"groups of {args.group}", args.group), ("every row its own", 1)):
        with tempfile.TemporaryDirectory(prefix="bench-prompt-ids-") as tmp:
            path = Path(tmp) / "0.jsonl"
            rows = write_step(path, args.size_mb * 1_000_000, group)
            without, with_ids = [], []
            for _ in range(args.repeat):
                Columns._prompt_id = constant  # type: ignore[method-assign]
                without.append(column_pass(path))
                Columns._prompt_id = real  # type: ignore[method-assign]
                with_ids.append(column_pass(path))
            base, cost = min(without), min(with_ids)
            size = path.stat().st_size / 1e6
            print(
                f"{label:22} {size:5.0f} {rows:8,} {base:7.2f}s {cost:7.2f}s"
                f" {(cost / base - 1) * 100:+6.1f}%"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
