"""The episode table: a page of the run's episode CSV (a stable-baselines3 Monitor file: an
optional `#{...}` line, a header, a row per episode), and how many episodes it holds.

The file grows for the whole run (millions of rows on a long one), and the page asks for it on
every poll: the rows are counted once, incrementally as the file grows (only the new bytes are
read), and every ROW_MARK-th row's byte offset is kept, so any page is one seek and one short read
however deep it is. The index is rebuilt when the file shrinks or is replaced.
"""

from __future__ import annotations

import csv
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .runfiles import Refused, open_read
from .spec import Spec

EPISODE_ROWS = 200  # rows a page holds by default
MAX_ROWS = 1000  # and at most
HEAD_BYTES = 64 * 1024  # where the header must be
BLOCK = 1024 * 1024
ROW_MARK = 1024  # an offset kept every this many rows
MAX_ROW_BYTES = 80 * 1024  # a longer line is not an episode: a page stops reading there


@dataclass
class _Index:
    inode: tuple[int, int]
    columns: list[str]
    counted_to: int  # the byte after the last complete line counted (the header's, at first)
    rows: int = 0
    marks: list[int] = field(default_factory=list)  # marks[k]: where row k * ROW_MARK starts
    page: tuple[int, int, int, list[list[Any]]] | None = None  # the last page read: rows, range


_indexes: dict[str, _Index] = {}
_lock = threading.Lock()


def empty(offset: int = 0, limit: int = EPISODE_ROWS) -> dict[str, Any]:
    return {"columns": [], "rows": [], "total": 0, "offset": offset, "limit": limit}


def episodes(
    spec: Spec, run_dir: Path | None, offset: int = 0, limit: int = EPISODE_ROWS
) -> dict[str, Any]:
    """{"columns", "rows", "total", "offset", "limit"}: the rows after skipping the `offset`
    newest, `limit` of them (oldest first within the page), numbers as numbers."""
    limit = max(1, min(int(limit), MAX_ROWS))
    offset = max(0, int(offset))
    if run_dir is None or not spec.episodes:
        return empty(offset, limit)
    path = run_dir / spec.episodes
    try:
        # A regular file only: a FIFO placed there would block the poll (links are followed,
        # as a script may point its CSV elsewhere).
        with open_read(path, follow=True) as f:
            st = os.fstat(f.fileno())
            with _lock:  # one counter of a file at a time; the reads are short
                index = _index_of(str(path), f, st)
                if index is None:
                    return empty(offset, limit)
                first = max(0, index.rows - offset - limit)
                last = max(0, index.rows - offset)
                if index.page is not None and index.page[:3] == (index.rows, first, last):
                    rows = index.page[3]  # nothing new since (the poll of an idle page)
                else:
                    cells = _rows_between(f, index, first, last)
                    rows = [[_cell(c) for c in row] for row in cells]
                    index.page = (index.rows, first, last, rows)
    except (OSError, Refused):
        return empty(offset, limit)
    return {
        "columns": index.columns,
        "rows": rows,
        "total": index.rows,
        "offset": offset,
        "limit": limit,
    }


def _index_of(key: str, f: BinaryIO, st: os.stat_result) -> _Index | None:
    index = _indexes.get(key)
    inode = (st.st_dev, st.st_ino)
    if index is None or index.inode != inode or st.st_size < index.counted_to:
        index = _new_index(f, inode)
        if index is None:
            return None
        _indexes[key] = index
    _count(f, index, st.st_size)
    return index


def _new_index(f: BinaryIO, inode: tuple[int, int]) -> _Index | None:
    f.seek(0)
    head = f.read(HEAD_BYTES)
    at = 0
    for line in head.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            return None  # the header is not complete yet
        at += len(line)
        text = line.decode("utf-8", "replace").strip()
        if text and not text.startswith("#"):
            columns = next(csv.reader([text]))
            return _Index(inode, columns, counted_to=at)
    return None


def _count(f: BinaryIO, index: _Index, size: int) -> None:
    """Count the complete rows written since the last count, marking every ROW_MARK-th."""
    f.seek(index.counted_to)
    position = index.counted_to
    while position < size:
        block = f.read(min(BLOCK, size - position))
        if not block:
            break
        end = block.rfind(b"\n")
        if end < 0:
            break  # a row still being written
        start = 0
        while start <= end:
            newline = block.index(b"\n", start)
            if newline > start and block[start : start + 1] != b"#":
                if index.rows % ROW_MARK == 0:
                    index.marks.append(position + start)
                index.rows += 1
            start = newline + 1
        position += end + 1
        f.seek(position)
    index.counted_to = position


def _rows_between(f: BinaryIO, index: _Index, first: int, last: int) -> list[list[str]]:
    """Rows [first, last): a seek to the nearest mark before `first`, then line by line."""
    if last <= first:
        return []
    mark = first // ROW_MARK
    f.seek(index.marks[mark])
    row = mark * ROW_MARK
    lines: list[str] = []
    while row < last:
        line = f.readline(MAX_ROW_BYTES)
        if not line.endswith(b"\n"):
            break
        if len(line) > 1 and not line.startswith(b"#"):  # as `_count` counts them
            if row >= first:
                lines.append(line.decode("utf-8", "replace").rstrip("\r\n"))
            row += 1
    return list(csv.reader(lines))


def _cell(text: str) -> Any:
    try:
        value = float(text)
    except ValueError:
        return text
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and "." not in text else value
