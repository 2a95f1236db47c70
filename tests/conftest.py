from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest


def relax_line(record: Any) -> str:
    """One line exactly as the Relax writer writes it (bare NaN allowed, raw non-ASCII)."""
    return json.dumps(record, ensure_ascii=False) + "\n"


@pytest.fixture
def write_step(tmp_path: Path) -> Callable[..., Path]:
    """write_step("train", 3, [records or raw str/bytes lines]) -> path of train/3.jsonl."""

    def write(bucket: str, step: int | str, lines: Iterable[Any]) -> Path:
        directory = tmp_path / "data" / bucket if bucket else tmp_path / "data"
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / (f"{step}.jsonl" if isinstance(step, int) else step)
        chunks = []
        for line in lines:
            if isinstance(line, bytes):
                chunks.append(line)
            elif isinstance(line, str):
                chunks.append(line.encode())
            else:
                chunks.append(relax_line(line).encode())
        path.write_bytes(b"".join(chunks))
        return path

    return write


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir(exist_ok=True)
    return path


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
