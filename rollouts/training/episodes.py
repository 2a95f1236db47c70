"""The episode table: the last EPISODE_ROWS rows of the run's episode CSV (a stable-baselines3
Monitor file: an optional `#{...}` line, a header, a row per episode).

The file grows for the whole run (millions of rows on a long one), and the page asks for it on
every poll: only its first lines (the header) and its tail are read, and the answer is kept
until the file's size or mtime changes.
"""

from __future__ import annotations

import csv
import math
import os
import threading
from pathlib import Path
from typing import Any

EPISODE_ROWS = 200
HEAD_BYTES = 64 * 1024  # where the header must be
TAIL_BLOCK = 64 * 1024
TAIL_MAX = 16 * 1024 * 1024  # 200 rows of 80 kB each at most: a longer row is not an episode

_cache: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}
_lock = threading.Lock()


def episodes(spec: Any, run_dir: Path | None) -> dict[str, Any]:
    """{"columns", "rows"}: the newest EPISODE_ROWS rows, numbers as numbers."""
    if run_dir is None or not spec.episodes:
        return empty()
    path = run_dir / spec.episodes
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            identity = (st.st_size, st.st_mtime_ns)
            with _lock:
                kept = _cache.get(str(path))
            if kept is not None and kept[0] == identity:
                return kept[1]
            answer = _read(f, st.st_size)
    except OSError:
        return empty()
    with _lock:
        _cache[str(path)] = (identity, answer)
    return answer


def empty() -> dict[str, Any]:
    return {"columns": [], "rows": []}


def _read(f: Any, size: int) -> dict[str, Any]:
    head = _lines(f.read(min(size, HEAD_BYTES)))
    header_at = next((n for n, line in enumerate(head) if not line.startswith("#")), None)
    if header_at is None:
        return empty()
    columns = _rows([head[header_at]])[0]
    start = max(0, size - TAIL_BLOCK)
    while True:  # back from the end until the block holds the rows wanted (or the header)
        f.seek(start)
        block = f.read(size - start)
        if start == 0 or block.count(b"\n") > EPISODE_ROWS + 1 or size - start >= TAIL_MAX:
            break
        start = max(0, size - 2 * (size - start))
    # From the first row on; else past the block's first line, which may be cut.
    lines = _lines(block)[header_at + 1 if start == 0 else 1 :]
    rows = _rows([line for line in lines if line and not line.startswith("#")][-EPISODE_ROWS:])
    return {"columns": columns, "rows": [[_cell(c) for c in r] for r in rows]}


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def _rows(lines: list[str]) -> list[list[str]]:
    return list(csv.reader(lines))


def _cell(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and "." not in text else value
