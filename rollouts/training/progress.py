"""Progress from a training child's stdout: JSON progress lines and stable-baselines3 tables.

`timesteps` is the x axis and nothing invents a tick: a verbose table is grouped whole and placed
at its own `time/total_timesteps`; a table without it is dropped; a table cut short (the process
stopped mid-table) is placed at the last known tick when `finish` is called; a table at the
timesteps of a point already kept is skipped, so no point is doubled. The last MAX_POINTS stay.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

MAX_POINTS = 5000
# Which source's point a tick keeps when two give one: the progress JSON, then an SB3 table,
# then the job's TensorBoard scalars (`training/scalars.py`, read after the fact).
PRIORITY = {"json": 2, "table": 1, "tensorboard": 0}
TABLE_BORDER = re.compile(r"^-{5,}\s*$")
TABLE_ROW = re.compile(r"^\|\s*(\S.*?)\s*\|\s*(.*?)\s*\|\s*$")


@dataclass(frozen=True, slots=True)
class Point:
    seq: int  # the cursor: grows by one per point kept
    timesteps: int
    metrics: dict[str, float | None]
    source: str  # "json", "table" or "tensorboard"

    @property
    def step(self) -> int:  # what store.reading reads as the x of a point
        return self.timesteps

    def as_json(self) -> dict[str, Any]:
        return {"timesteps": self.timesteps, "metrics": self.metrics}


def progress_json(line: str) -> dict[str, Any] | None:
    """The object of a progress JSON line, or None."""
    text = line.strip()
    if not (text.startswith("{") and '"progress"' in text):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("event") != "progress":
        return None
    return data


def numeric(data: dict[str, Any]) -> dict[str, float | None]:
    return {
        k: float(v)
        for k, v in data.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
    }


class Progress:
    """Points parsed from lines, with the latest phase and totals. Thread-safe."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self.points: deque[Point] = deque(maxlen=max_points)
        self.seq = 0
        self.total: int | None = None
        self.phase: str | None = None
        self._table: dict[str, float | None] | None = None
        self._section = ""
        self._lock = threading.Lock()
        self._derived: tuple[int, Any] | None = None

    def feed(self, line: str) -> str | None:
        """Take one stdout line; returns its kind: "progress", "table" or None (plain text)."""
        with self._lock:
            data = progress_json(line)
            if data is not None:
                self._json(data)
                return "progress"
            return self._table_line(line)

    def finish(self) -> None:
        """The stream ended: a table cut short goes at the last known tick."""
        with self._lock:
            if self._table:
                self._add_table(self._table, truncated=True)
            self._table = None

    def _json(self, data: dict[str, Any]) -> None:
        if isinstance(data.get("phase"), str):
            self.phase = data["phase"]
        metrics = numeric(data)
        ticks = metrics.pop("timesteps", None)
        total = metrics.pop("total_timesteps", None)
        if total is not None:
            self.total = int(total)
        if ticks is None:
            return
        self._add(int(ticks), metrics, "json")

    def _table_line(self, line: str) -> str | None:
        text = line.rstrip()
        if TABLE_BORDER.match(text):
            if self._table is None:
                self._table, self._section = {}, ""
            else:
                self._add_table(self._table, truncated=False)
                self._table = None
            return "table"
        if self._table is None:
            return None
        row = TABLE_ROW.match(text)
        if row is None:  # something else interrupted the table: it was cut short
            self._add_table(self._table, truncated=True)
            self._table = None
            return None
        key, value = row.group(1), row.group(2)
        if key.endswith("/") and not value:
            self._section = key
        else:
            self._table[self._section + key] = _float(value)
        return "table"

    def _add_table(self, table: dict[str, float | None], truncated: bool) -> None:
        ticks = table.pop("time/total_timesteps", None)
        if ticks is None:
            if not truncated or not self.points:
                return  # no tick of its own: dropped, never invented
            ticks = self.points[-1].timesteps
        metrics = {key.rpartition("/")[2]: value for key, value in table.items()}
        self._add(int(ticks), metrics, "table")

    def _add(self, ticks: int, metrics: dict[str, float | None], source: str) -> None:
        last = self.points[-1] if self.points else None
        if last is not None and ticks <= last.timesteps:
            if ticks == last.timesteps and PRIORITY[source] > PRIORITY[last.source]:
                self.points.pop()  # e.g. the JSON point wins over the table at its tick
            else:
                # A table at a JSON point's tick, or an earlier tick again (a resume redoing
                # steps): skipped, so no tick has two points.
                return
        self.seq += 1
        self.points.append(Point(self.seq, ticks, metrics, source))

    def add_point(self, ticks: int, metrics: dict[str, float | None], source: str) -> None:
        """A point from another source than stdout (the job's TensorBoard scalars)."""
        with self._lock:
            self._add(ticks, metrics, source)

    def derived(self, compute: Callable[[list[Point]], T]) -> T:
        """`compute(every point)`, computed again only once a point has come since: a poll that
        brings nothing new does not redo the reading and the cards over 5,000 points. One
        `compute` per Progress (the snapshot's)."""
        with self._lock:
            if self._derived is not None and self._derived[0] == self.seq:
                return self._derived[1]
            seq, points = self.seq, list(self.points)
        value = compute(points)
        with self._lock:
            self._derived = (seq, value)
        return value

    def snapshot(self, after: int | None = None, limit: int | None = None) -> list[Point]:
        return self.since(after, limit)[0]

    def since(self, after: int | None = None, limit: int | None = None) -> tuple[list[Point], int]:
        """The points after cursor `after` (the last `limit`), and the cursor they reach: read
        together, so a point arriving in between is in the next answer, not lost."""
        with self._lock:
            points = [p for p in self.points if after is None or p.seq > after]
            seq = self.seq
        return (points[-limit:] if limit else points), seq


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
