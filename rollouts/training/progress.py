"""Progress from a training child's stdout: JSON progress lines and stable-baselines3 tables.

`timesteps` is the x axis and nothing invents a tick: a verbose table is grouped whole and placed
at its own `time/total_timesteps`; a table without it is dropped; a table cut short (the process
stopped mid-table) is placed at the last known tick when `finish` is called. Two sources at one
tick make one point: a progress JSON line printed at a rollout's end lands on the tick of the
table SB3 prints next, and the table fills in what the JSON lacks (approx_kl, explained_variance,
the losses, fps), the JSON's own values winning where both have a key.

A run resumed from a checkpoint is a new *attempt*: its ticks start again at the checkpoint's, so
the points are kept per attempt (an attempt's curve ends where its process was killed, the next
starts at its resume point). An attempt begins explicitly (`begin_attempt`, from the job's
record) or when the ticks go back within one stream (a script that restarted itself). The last
MAX_POINTS stay.

Phases: a JSON line's `phase` ("collect", "update", ...); plain SB3 output, which names none, gets
one phase per PPO iteration (from one table to the next), so the timeline is never empty.
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
MAX_PHASES = 200
MAX_PHASE_NAME = 80  # characters of a phase's name kept (a JSON `phase`, "iteration N")
# Which source's values win at a tick both give: the progress JSON, then an SB3 table, then the
# job's TensorBoard scalars (`training/scalars.py`, read after the fact).
PRIORITY = {"json": 2, "table": 1, "tensorboard": 0}
TABLE_BORDER = re.compile(r"^-{5,}\s*$")
TABLE_ROW = re.compile(r"^\|\s*(\S.*?)\s*\|\s*(.*?)\s*\|\s*$")
COLLECT = ("collect", "rollout", "rollouts", "sample", "sampling", "generate")
UPDATE = ("update", "train", "training", "optimize", "learn")


@dataclass(frozen=True, slots=True)
class Point:
    seq: int  # the cursor: grows by one per point kept (a point merged again gets a new one)
    timesteps: int
    metrics: dict[str, float | None]
    source: str  # "json", "table" or "tensorboard": the highest-priority source it holds
    attempt: int = 0  # 0: the first process of the job; n: after the n-th resume
    at: float | None = None  # when its first line was read as it was written (None: read back)

    @property
    def step(self) -> int:  # what store.reading reads as the x of a point
        return self.timesteps

    def as_json(self) -> dict[str, Any]:
        return {"timesteps": self.timesteps, "metrics": self.metrics, "attempt": self.attempt}


@dataclass(frozen=True, slots=True)
class Running:
    """The running attempt, for the progress bar (`Progress.running`)."""

    attempts: list[dict[str, Any]]
    last: Point | None  # its newest point
    first_timed: tuple[int, float] | None  # (timesteps, when) of its first point seen written
    fps: float | None  # the newest fps it printed
    phases: list[dict[str, Any]]


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


def phase_kind(name: str) -> str:
    """ "collect", "update" or "other": what the timeline colours a phase as."""
    word = name.strip().lower()
    if word in COLLECT:
        return "collect"
    if word in UPDATE:
        return "update"
    return "other"


def effective(points: list[Point], attempts: list[dict[str, Any]]) -> list[Point]:
    """The history of the model now training: each earlier attempt's points up to where the next
    attempt resumed from, then the last attempt's (what the reading and the cards read)."""
    starts = {a["index"]: a["start_timesteps"] for a in attempts}
    last = attempts[-1]["index"] if attempts else 0
    redone = {(p.attempt, p.timesteps) for p in points}
    kept = []
    for point in points:
        if point.attempt == last:
            kept.append(point)
            continue
        resumed_at = starts.get(point.attempt + 1)
        if resumed_at is None or (
            point.timesteps <= resumed_at and (point.attempt + 1, point.timesteps) not in redone
        ):
            kept.append(point)
    return kept


class Progress:
    """Points parsed from lines, with the attempts, the phases and the total. Thread-safe."""

    def __init__(self, max_points: int = MAX_POINTS) -> None:
        self.points: deque[Point] = deque(maxlen=max_points)
        self.seq = 0
        self.total: int | None = None  # from a JSON line's total_timesteps (this attempt's)
        self.phase: str | None = None
        self.phases: list[dict[str, Any]] = []  # {"name", "kind", "started_at", "attempt"}
        self.attempts: list[dict[str, Any]] = [
            {"index": 0, "started_at": None, "start_timesteps": 0, "resumed_from": None}
        ]
        # The running attempt's first point written while watched: (timesteps, when), for its
        # throughput without a pass over the points on every poll.
        self._first_timed: tuple[int, float] | None = None
        self._table: dict[str, float | None] | None = None
        self._table_at: float | None = None
        self._section = ""
        self._named_phases = False  # this attempt's JSON names its phases: no table phases
        self._lock = threading.Lock()
        self._derived: tuple[int, Any] | None = None

    @property
    def attempt(self) -> int:
        return int(self.attempts[-1]["index"])

    def feed(self, line: str, at: float | None = None) -> str | None:
        """Take one stdout line (`at`: when it was written, None when read back from an older
        log); returns its kind: "progress", "table" or None (plain text)."""
        with self._lock:
            data = progress_json(line)
            if data is not None:
                self._json(data, at)
                return "progress"
            return self._table_line(line, at)

    def finish(self) -> None:
        """The stream ended: a table cut short goes at the last known tick."""
        with self._lock:
            self._close_table(truncated=True)

    def begin_attempt(
        self, start_timesteps: int, resumed_from: str | None = None, at: float | None = None
    ) -> None:
        """A new process of the job, resumed from a checkpoint at `start_timesteps`."""
        with self._lock:
            self._begin(start_timesteps, resumed_from, at)

    def _begin(self, start_timesteps: int, resumed_from: str | None, at: float | None) -> None:
        self._close_table(truncated=True)
        self.attempts.append(
            {
                "index": self.attempt + 1,
                "started_at": at,
                "start_timesteps": int(start_timesteps),
                "resumed_from": resumed_from,
            }
        )
        self.total = None
        self._named_phases = False
        self._first_timed = None
        self.seq += 1  # the attempts changed: what is derived from them is computed again

    def _json(self, data: dict[str, Any], at: float | None) -> None:
        if isinstance(data.get("phase"), str) and data["phase"].strip():
            self._named_phases = True
            self._enter_phase(data["phase"].strip(), at)
        metrics = numeric(data)
        ticks = metrics.pop("timesteps", None)
        total = metrics.pop("total_timesteps", None)
        if total is not None:
            self.total = int(total)
        if ticks is not None:
            self._add(int(ticks), metrics, "json", at)

    def _enter_phase(self, name: str, at: float | None) -> None:
        name = self.phase = name[:MAX_PHASE_NAME]
        last = self.phases[-1] if self.phases else None
        if last is not None and last["name"] == name and last["attempt"] == self.attempt:
            return
        self.phases.append(
            {"name": name, "kind": phase_kind(name), "started_at": at, "attempt": self.attempt}
        )
        del self.phases[:-MAX_PHASES]

    def _table_line(self, line: str, at: float | None) -> str | None:
        text = line.rstrip()
        if TABLE_BORDER.match(text):
            if self._table is None:
                self._table, self._section, self._table_at = {}, "", at
            else:
                self._close_table(truncated=False)
            return "table"
        if self._table is None:
            return None
        row = TABLE_ROW.match(text)
        if row is None:  # something else interrupted the table: it was cut short
            self._close_table(truncated=True)
            return None
        key, value = row.group(1), row.group(2)
        if key.endswith("/") and not value:
            self._section = key
        else:
            self._table[self._section + key] = _float(value)
        return "table"

    def _close_table(self, truncated: bool) -> None:
        table, self._table = self._table, None
        if not table:
            return
        ticks = table.pop("time/total_timesteps", None)
        if ticks is None:
            last = self._last_of_attempt()
            if not truncated or last is None:
                return  # no tick of its own: dropped, never invented
            ticks = last.timesteps
        iteration = table.get("time/iterations")
        if not self._named_phases and iteration is not None:
            self._enter_phase(f"iteration {int(iteration)}", self._table_at)
        metrics = {key.rpartition("/")[2]: value for key, value in table.items()}
        # A table cut short may be a later iteration's: at the last known tick it only fills
        # in what that point lacks.
        self._add(int(ticks), metrics, "table", self._table_at, fill_only=truncated)

    def _last_of_attempt(self) -> Point | None:
        last = self.points[-1] if self.points else None
        return last if last is not None and last.attempt == self.attempt else None

    def _add(
        self,
        ticks: int,
        metrics: dict[str, float | None],
        source: str,
        at: float | None,
        fill_only: bool = False,
    ) -> None:
        last = self._last_of_attempt()
        if last is not None and ticks < last.timesteps:
            # The ticks went back within one stream: a process that started again from an
            # earlier point (a resume nobody announced). Its points are a new attempt.
            self._begin(ticks, None, at)
            last = None
        if last is not None and ticks == last.timesteps:
            if PRIORITY[source] >= PRIORITY[last.source] and not fill_only:
                merged, winner = {**last.metrics, **metrics}, source
            else:
                merged, winner = {**metrics, **last.metrics}, last.source
            if merged == last.metrics:
                return  # nothing new at this tick (a phase line repeating it)
            self.points.pop()
            at = last.at if last.at is not None else at
            ticks, metrics, source = last.timesteps, merged, winner
        self.seq += 1
        self.points.append(Point(self.seq, ticks, metrics, source, self.attempt, at))
        if self._first_timed is None and at is not None:
            self._first_timed = (ticks, at)

    def add_point(self, ticks: int, metrics: dict[str, float | None], source: str) -> None:
        """A point from another source than stdout (the job's TensorBoard scalars): it fills in
        a tick stdout gave, or adds one after the last; never one before it."""
        with self._lock:
            last = self._last_of_attempt()
            if last is None or ticks >= last.timesteps:
                self._add(ticks, metrics, source, None, fill_only=True)

    def derived(self, compute: Callable[[list[Point], list[dict[str, Any]]], T]) -> T:
        """`compute(every point, the attempts)`, computed again only once a point has come
        since: a poll that brings nothing new does not redo the reading and the cards over
        5,000 points. One `compute` per Progress (the snapshot's)."""
        with self._lock:
            if self._derived is not None and self._derived[0] == self.seq:
                return self._derived[1]
            seq, points, attempts = self.seq, list(self.points), [*self.attempts]
        value = compute(points, attempts)
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

    def running(self) -> Running:
        """What the progress bar needs of the running attempt, read together and without a pass
        over every point: a poll that brings nothing new stays cheap on a 5,000-point job."""
        with self._lock:
            attempt = self.attempt
            last = self._last_of_attempt()
            fps = None
            for point in reversed(self.points):  # the newest point with an fps, in this attempt
                if point.attempt != attempt:
                    break
                if point.metrics.get("fps") is not None:
                    fps = point.metrics["fps"]
                    break
            return Running(
                [dict(a) for a in self.attempts], last, self._first_timed, fps, [*self.phases]
            )


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
