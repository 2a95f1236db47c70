"""Tiny records for tests: each test builds its input from these, in its own tmp_path."""

from __future__ import annotations

import json
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
