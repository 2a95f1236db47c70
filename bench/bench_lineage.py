"""A prompt across a bucket of many steps (`rollouts.store.lineage.find_prompt`), in-process.

    .venv/bin/python bench/bench_lineage.py [--steps 300] [--samples 1024]

Writes `--steps` train steps of `--samples` records each (GRPO-like: groups of 8 samples of one
prompt, a 64-prompt pool revisited across steps, ~1.5 kB lines), then times:

- "no disk cache": the first lineage when nothing is cached (every step is read and decoded,
  its entry written to the disk cache on the way);
- "cold": a fresh catalog (a restarted viewer: empty memory) with the disk cache filled;
- "warm": the same catalog again, for another prompt (the prompt columns are in memory);
- the baseline, measured in the same run on the same files: `json.loads` of every line,
  comparing its prompt (what finding a prompt costs without the prompt-id column).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollouts.store import Catalog
from rollouts.store.disk.cache import DiskCache
from rollouts.store.lineage import find_prompt
from rollouts.store.promptid import prompt_id_of_value

POOL = 64  # distinct prompts; each step draws its groups from them
GROUP = 8


def prompt_text(k: int) -> str:
    return (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"
        f"Problem {k}: "
        + "find the value of x such that the equation holds. " * 12
        + "<|im_end|>\n<|im_start|>assistant\n"
    )


def write_bucket(root: Path, steps: int, samples: int) -> None:
    bucket = root / "train"
    bucket.mkdir(parents=True)
    for step in range(steps):
        lines = []
        for i in range(samples):
            k = (step * 7 + i // GROUP) % POOL
            record = {
                "rollout_id": step,
                "sample_index": i,
                "prompt": prompt_text(k),
                "response": f"Let me think. The answer is \\boxed{{{(i + step) % 5}}}. " * 8,
                "reward": float((i + step) % 3 == 0),
                "response_length": 120 + (i * 37) % 900,
                "total_length": 400 + (i * 37) % 900,
                "status": "truncated" if i % 50 == 0 else "completed",
                "group_index": i // GROUP,
                "label": "2",
            }
            lines.append(json.dumps(record, ensure_ascii=False))
        (bucket / f"{step}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def timed(catalog: Catalog, k: int) -> tuple[float, int, int]:
    started = time.perf_counter()
    found = find_prompt(catalog, "train", prompt_id_of_value(prompt_text(k)))
    return time.perf_counter() - started, len(found.appearances), len(found.steps)


def baseline(root: Path, k: int) -> tuple[float, int]:
    wanted = prompt_text(k)
    started = time.perf_counter()
    found = 0
    for path in sorted((root / "train").glob("*.jsonl")):
        with path.open("rb") as f:
            found += sum(1 for line in f if json.loads(line).get("prompt") == wanted)
    return time.perf_counter() - started, found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--samples", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-lineage-") as tmp:
        root, cache_dir = Path(tmp) / "data", Path(tmp) / "cache"
        write_bucket(root, args.steps, args.samples)
        size = sum(p.stat().st_size for p in (root / "train").iterdir()) / 1e6
        print(f"{args.steps} steps x {args.samples} samples ({size:.0f} MB)")
        disk = DiskCache(cache_dir)
        first, count, in_steps = timed(Catalog(root, disk=disk), 1)
        catalog = Catalog(root, disk=disk)
        cold, cold_count, _ = timed(catalog, 2)
        warm, warm_count, _ = timed(catalog, 3)
        base, base_count = baseline(root, 3)
        assert base_count == warm_count, (base_count, warm_count)
        print(f"{'no disk cache':14} {first:7.3f} s  ({count} appearances in {in_steps} steps)")
        print(f"{'cold':14} {cold:7.3f} s  ({cold_count} appearances)")
        print(f"{'warm':14} {warm:7.3f} s  ({warm_count} appearances)")
        ratios = f"cold is {base / cold:.0f}x faster, warm {base / warm:.0f}x"
        print(f"{'json.loads':14} {base:7.3f} s  baseline; {ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
