"""Tiny records for tests: each test builds its input from these, in its own tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def relax_line(record: Any) -> str:
    """One line exactly as the Relax writer writes it (bare NaN allowed, raw non-ASCII)."""
    return json.dumps(record, ensure_ascii=False) + "\n"


def sample(i: int, **extra: Any) -> dict[str, Any]:
    """A small first-generation record."""
    return {
        "rollout_id": 0,
        "sample_index": i,
        "prompt": f"<|im_start|>user\nquestion {i}<|im_end|>\n<|im_start|>assistant\n",
        "response": f"answer {i}",
        "reward": float(i % 2),
        "response_length": 10 + i,
        "total_length": 30 + i,
        "status": "completed",
        "group_index": i // 2,
        **extra,
    }


def write_picker_runs(parent: Path, rising: int, flat: int, steps: int = 4) -> list[str]:
    """A folder of runs for the run picker: `grpo-NN` runs whose mean reward climbs step by
    step and `ppo-NN` runs whose mean reward stays level, `steps` steps of 4 samples each.
    Their names, in the picker's order (by name)."""
    names = [f"grpo-{n:02d}" for n in range(rising)] + [f"ppo-{n:02d}" for n in range(flat)]
    for name in names:
        bucket = parent / name / "rollout_result" / "train"
        bucket.mkdir(parents=True)
        for step in range(steps):
            level = step / steps if name.startswith("grpo") else 0.5
            lines = (relax_line(sample(i, reward=level + (i % 2) * 0.01)) for i in range(4))
            (bucket / f"{step}.jsonl").write_text("".join(lines), encoding="utf-8")
    return sorted(names)
