"""The run picker's rows, kept per process and filled in the background, so the picker answers
at once with a thousand runs.

A run's row (its latest mean reward, sparkline, steps, last change and reading) is valid while
its first bucket's steps have the sizes and mtimes it was made from. A request takes the rows
in memory; for the runs on the page it shows without one, it reads their compact entries in the
disk cache (`store.runsummary`) for up to `REQUEST_BUDGET_S`; every other row is made by the
one background `Indexer`: the runs a request asked for first, then the runs on the page shown,
then the rest, the most recently changed first. Memory: one row a run (about 9 kB, most of it
its reading), whatever its steps; the steps' points are on disk, not kept.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from ..conf import conf
from ..presentation import run_colour_index, spark_path, tone_class
from ..store import (
    Indexer,
    ListedRun,
    Point,
    StoreError,
    load_points,
    point_is_current,
    run_points,
    save_points,
    series,
    yield_to_requests,
)
from .runs import catalog_of
from .scalars import bucket_reading, rule_scalars

SPARK_STEPS = 30  # the last steps a run's sparkline draws
REQUEST_BUDGET_S = 0.25  # what one picker request spends reading the shown runs' entries
BUSY_RETRY_S = 0.5  # a run with a step another process is indexing: asked again after this
ASKED_KEEP_S = 60.0  # a run whose pages were asked for stays first in line this long
ASKED_KEPT = 1000  # the most such runs remembered (a page under any name counts: a 404 too)


@dataclass(frozen=True, slots=True)
class _Row:
    signature: tuple[Any, ...]
    listed_changed_ns: int  # the run's folders' time when it was made (`ListedRun.changed_ns`)
    values: dict[str, Any]


class PickerRows:
    """Every run's row in this process, and the background work that makes them."""

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}  # by data directory
        self._lock = threading.Lock()
        self._indexer = Indexer("run picker")
        self._asked: dict[str, float] = {}  # run name -> when its pages were last asked for
        self._queued: dict[str, tuple[str, int]] = {}  # run name -> (its key, its changed_ns)

    # -- what a request reads ------------------------------------------------------------
    @staticmethod
    def deadline() -> float:
        """Until when (time.monotonic) a request reads the shown runs' disk entries."""
        return time.monotonic() + REQUEST_BUDGET_S

    def known(self, run: ListedRun) -> dict[str, Any] | None:
        """The run's row as last made (not checked against its files), or None."""
        row = self._rows.get(str(run.data_dir))
        return row.values if row is not None else None

    def row(self, run: ListedRun, deadline: float) -> dict[str, Any]:
        """The run's row checked against its steps now. Without a current one: made from its
        disk entry when that is current and `deadline` (time.monotonic) has not passed; else
        queued, and the old row (state "updating") or what the listing knows ("pending")."""
        try:
            catalog, bucket, steps = _steps_of(run)
        except StoreError as exc:
            return _error_row(run, str(exc))
        rules = catalog.flag_rules.as_dict()
        signature = _signature(bucket, steps, rules)
        row = self._rows.get(str(run.data_dir))
        if row is not None and row.signature == signature:
            return row.values
        if time.monotonic() <= deadline and catalog.disk is not None:
            known = load_points(catalog.disk, catalog.root, bucket, rules)
            if all(point_is_current(known.get(s.filename), s) for s in steps):
                points = [known[s.filename] for s in steps]
                return self._keep(run, signature, _values(run, catalog.root, bucket, points, {}))
        self._indexer.submit(str(run.data_dir), (1, -run.changed_ns), self._task(run))
        if row is not None:
            return {**row.values, "state": "updating"}
        return {
            **_base(run),
            "state": "pending",
            "bucket": bucket,
            "steps": len(steps),
            "changed_ns": max((s.mtime_ns for s in steps), default=run.changed_ns) or None,
            "trends_url": _trends_url(run, bucket),
        }

    def pending(self, runs: list[ListedRun]) -> int:
        """How many of `runs` have no row yet, or one older than their folders."""
        return sum(1 for run in runs if self._stale(run))

    def asked(self, name: str) -> None:
        """A request for one of the run's pages: its row is made first (now, if it is queued)."""
        with self._lock:
            self._asked.pop(name, None)  # the most recent last
            self._asked[name] = time.monotonic()
            while len(self._asked) > ASKED_KEPT:
                del self._asked[next(iter(self._asked))]
            queued = self._queued.get(name)
        if queued is not None:
            self._indexer.rerank(queued[0], (0, -queued[1]))

    # -- the background work -------------------------------------------------------------
    def schedule(self, runs: list[ListedRun], shown: set[str]) -> None:
        """Queue every run without a current row: asked-for runs first, then `shown`, then the
        rest, the most recently changed first. Runs no longer listed leave the queue and memory."""
        now = time.monotonic()
        with self._lock:
            self._asked = {n: t for n, t in self._asked.items() if now - t < ASKED_KEEP_S}
            asked = set(self._asked)
        listed = {str(run.data_dir) for run in runs}
        for key in {*list(self._rows), *self._indexer.keys()} - listed:
            self._rows.pop(str(key), None)  # a run that left the folder
            self._indexer.discard(key)
        queued = {}
        for run in runs:
            if not self._stale(run):
                continue
            key = str(run.data_dir)
            tier = 0 if run.name in asked else 1 if run.name in shown else 2
            self._indexer.submit(key, (tier, -run.changed_ns), self._task(run))
            queued[run.name] = (key, run.changed_ns)
        with self._lock:
            self._queued = queued

    def indexing(self) -> int:
        """Runs queued or being made."""
        return len(self._indexer)

    def _stale(self, run: ListedRun) -> bool:
        row = self._rows.get(str(run.data_dir))
        return row is None or row.listed_changed_ns != run.changed_ns

    def _task(self, run: ListedRun) -> Any:
        return lambda: self._make(run)

    def _make(self, run: ListedRun) -> float | None:
        """Make the run's row (None: done), or in how many seconds to try again."""
        try:
            catalog, bucket, steps = _steps_of(run)
        except StoreError as exc:
            self._keep(run, (), _error_row(run, str(exc)))
            return None
        rules = catalog.flag_rules.as_dict()
        signature = _signature(bucket, steps, rules)
        row = self._rows.get(str(run.data_dir))
        if row is not None and row.signature == signature:
            self._keep(run, signature, row.values)
            return None
        disk = catalog.disk
        known = load_points(disk, catalog.root, bucket, rules) if disk is not None else {}
        processes = conf.INDEX_PROCESSES
        found = run_points(catalog, bucket, steps, known, processes, yield_to_requests)
        if found.busy:
            return BUSY_RETRY_S  # another process is indexing some: its entries, soon
        if disk is not None and (found.decoded or found.from_entries or len(known) != len(steps)):
            save_points(disk, catalog.root, bucket, rules, found.points)
        self._keep(run, signature, _values(run, catalog.root, bucket, found.points, found.failed))
        return None

    def _keep(self, run: ListedRun, signature: tuple[Any, ...], values: dict[str, Any]) -> Any:
        self._rows[str(run.data_dir)] = _Row(signature, run.changed_ns, values)
        return values


def _steps_of(run: ListedRun) -> tuple[Any, str, list[Any]]:
    catalog = catalog_of(run.data_dir)
    bucket = catalog.buckets()[0]
    return catalog, bucket, catalog.steps(bucket)


def _signature(bucket: str, steps: list[Any], rules: dict[str, Any]) -> tuple[Any, ...]:
    return (bucket, tuple((s.filename, s.size_bytes, s.mtime_ns) for s in steps), repr(rules))


def _trends_url(run: ListedRun, bucket: str) -> str:
    return reverse("rollouts:run:trends", kwargs={"run": run.name, "bucket": bucket})


def _error_row(run: ListedRun, message: str) -> dict[str, Any]:
    return {**_base(run), "state": "error", "error": message}


def _base(run: ListedRun) -> dict[str, Any]:
    return {
        "name": run.name,
        "url": reverse("rollouts:run:index", kwargs={"run": run.name}),
        "colour": run_colour_index(run.name),  # the run's colour on every page
    }


def _values(
    run: ListedRun, root: Any, bucket: str, points: list[Point], failed: dict[str, str]
) -> dict[str, Any]:
    """The row: what the picker shows of the run, from its points."""
    values: dict[str, Any] = {
        **_base(run),
        "state": "read",
        "bucket": bucket,
        "steps": len(points) + len(failed),
        "failed": len(failed),
        "trends_url": _trends_url(run, bucket),
    }
    if points:
        values["changed_ns"] = max(p.identity.mtime_ns for p in points)
    rewards = series(points, "reward_mean")
    finite = [(p.step, v) for p, v in zip(points, rewards, strict=True) if math.isfinite(v)]
    if finite:
        values["latest_reward"] = finite[-1][1]
        values["latest_step"] = finite[-1][0]
        values["spark_values"] = [v for _, v in finite[-SPARK_STEPS:]]
        values["spark"] = spark_path(values["spark_values"])
    # The reading its trends page shows: the same points, the same scalars' rules.
    reading = bucket_reading(points, rule_scalars(root, run.name))
    values["reading"] = reading
    values["verdict_class"] = tone_class(reading["verdict"]["tone"])
    return values


_rows: PickerRows | None = None
_rows_lock = threading.Lock()


def picker_rows() -> PickerRows:
    """This process's rows."""
    global _rows
    with _rows_lock:
        if _rows is None:
            _rows = PickerRows()
        return _rows
