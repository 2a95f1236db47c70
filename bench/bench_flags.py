"""What the degenerate-sample flags cost the column pass, measured against the pass alone.

    .venv/bin/python bench/bench_flags.py [--size-mb 1000] [--repeat 3] [--kinds tokens,small]

For each kind of step it writes one file of `--size-mb` MB, reads it once (the page cache warm),
then alternates two passes over it, `--repeat` times each, and prints the best of each:

- "columns": the column pass alone (`StepIndex.build` + `ensure_columns`, the response measures
  switched off: `Columns.measure_text = False`);
- "+ flags": the same pass with the response measures (`measures.py`), then what the flags add
  after it: the step's flag context and counts (`flags.flag_context`) and every row's marks
  (`flags.flag_marks`, what the `flag=` filter reads).

"tokens" is the Relax writer's shape (`rollouts.demo.write_big_step`: long responses with their
token ids and log-probs, ~300 kB a line); "small" is 3 kB lines without token arrays (100x
more rows for the same bytes: the worst case for per-row work), with realistic reasoning and a
final `\\boxed{}`, and a few degenerate samples of each kind (about 1 in 50) so the slower paths
run as often as they would on a real step. The target (issue 30) is "+ flags" at most 1.3x
"columns" on a 1 GB step.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollouts.demo import write_big_step
from rollouts.demo.samples import make_reasoning
from rollouts.store import DEFAULT_RULES, Columns, StepIndex
from rollouts.store.flags import flag_context, flag_marks

TARGET_RATIO = 1.3


def small_response(rng: random.Random, n: int, answer: int) -> str:
    """A ~1 kB response: reasoning and a final answer, 1 in 50 of them degenerate."""
    body = make_reasoning(rng, False, 8)
    kind = n % 50
    if kind == 1:  # ends in a loop
        return body + " Let me recheck the last step once more." * 40
    if kind == 2:  # switches to Chinese prose
        return body + " 所以我们需要重新计算这个值然后再检查一遍结果是否正确。" * 3
    if kind == 3:  # no final answer
        return body
    if kind == 4:  # empty
        return ""
    return f"<think>\n{body}\n</think>\n\nSo the answer is $\\boxed{{{answer}}}$.<|im_end|>"


def write_small(path: Path, target_bytes: int) -> int:
    rng = random.Random(0)
    prompt = "<|im_start|>user\n" + "Solve the problem step by step. " * 60 + "<|im_end|>\n"
    written = rows = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target_bytes:
            label = rows // 8 % 97
            answer = label if rng.random() < 0.6 else label + 1
            record = {
                "rollout_id": 0,
                "sample_index": rows,
                "prompt": prompt + f"<|im_start|>assistant\nProblem {rows // 8}.",
                "response": small_response(rng, rows, answer),
                "reward": float(answer == label),
                "response_length": 250 + rng.randint(0, 120),
                "total_length": 900,
                "status": "completed",
                "group_index": rows // 8,
                "label": str(label),
            }
            written += f.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows += 1
    return rows


def one_pass(path: Path, flags: bool) -> tuple[float, dict[str, int], int]:
    Columns.measure_text = flags
    try:
        started = time.perf_counter()
        index = StepIndex.build(path, "train/0.jsonl")
        columns = index.ensure_columns()
        counts: dict[str, int] = {}
        if flags:
            context = flag_context(columns, index.invalid, DEFAULT_RULES)
            flag_marks(columns, index.invalid, context, DEFAULT_RULES)
            counts = context["counts"]
        return time.perf_counter() - started, counts, columns.rows
    finally:
        Columns.measure_text = True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kinds", default="tokens,small")
    args = parser.parse_args()
    writers = {"tokens": write_big_step, "small": write_small}
    print(f"{'step':8} {'MB':>6} {'rows':>9} {'columns':>8} {'+ flags':>8} {'ratio':>6}  flagged")
    worst = 0.0
    for kind in args.kinds.split(","):
        with tempfile.TemporaryDirectory(prefix=f"bench-flags-{kind}-") as tmp:
            path = Path(tmp) / "0.jsonl"
            writers[kind](path, args.size_mb * 1_000_000)
            with path.open("rb") as f:  # the page cache warm for both passes
                while f.read(1 << 24):
                    pass
            alone, with_flags = [], []
            counts: dict[str, int] = {}
            rows = 0
            for _ in range(args.repeat):  # alternating, so both see the same machine
                alone.append(one_pass(path, flags=False)[0])
                seconds, counts, rows = one_pass(path, flags=True)
                with_flags.append(seconds)
            ratio = min(with_flags) / min(alone)
            worst = max(worst, ratio)
            flagged = ", ".join(f"{name} {n:,}" for name, n in counts.items() if n)
            print(
                f"{kind:8} {path.stat().st_size / 1e6:6.0f} {rows:9,} {min(alone):7.2f}s"
                f" {min(with_flags):7.2f}s {ratio:5.2f}x  {flagged or 'none'}"
            )
    verdict = "meets" if worst <= TARGET_RATIO else "misses"
    print(f"worst ratio {worst:.2f}x: {verdict} the target of {TARGET_RATIO}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
