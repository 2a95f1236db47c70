"""A bucket's per-step statistics over time: what the trends page draws, kept current.

`History.snapshot()` answers at once with whatever is indexed so far and starts (or continues)
a background thread for the steps that are new, grown or rewritten; a page polls it and fills
in. A step comes from, in order: this process's memory, the disk cache (`diskcache.py`, a
`stat` and a small read), or its file: decoded on a few spawned processes when there are many
(private indexes, so hundreds of steps never push the viewer's own out of the shared cache).
Only the newest step, the one a live run is writing, goes through the shared catalog, which
extends its index instead of rereading it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from .catalog import Catalog
from .disk import DiskCache, served_roots
from .errors import StoreError, unreadable
from .files import FileIdentity, StepFile, step_name
from .flags import FlagRules
from .index import StepIndex
from .indexer import is_exiting, reset_pool, shared_pool, submitting
from .reading import metrics_of
from .stats import step_stats

logger = logging.getLogger("rollouts.store")

# Many steps are decoded on `History.processes` processes (spawned, never forked from a
# threaded server; 1 keeps it in-process); fewer steps than POOL_MIN_STEPS are decoded on the
# history's own thread.
POOL_MIN_STEPS = 8
LOCK_WAIT_S = 120.0  # how long to wait for another process indexing the same step
LOCK_POLL_S = 0.05


@dataclass(slots=True)
class Point:
    step: int
    filename: str
    size_bytes: int
    identity: FileIdentity
    metrics: dict[str, float | None]

    @property
    def name(self) -> str:
        return step_name(self.filename)

    @property
    def wall_time(self) -> float:
        """When the step file was last written (its mtime), in seconds since the epoch: the
        step's place on a wall-clock axis."""
        return self.identity.mtime_ns / 1e9


@dataclass(slots=True)
class Snapshot:
    """What is indexed now: points in step order, and how far the background pass got."""

    points: list[Point]
    total: int
    pending: int
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.pending == 0


class History:
    """One bucket's points. The web keeps one per bucket of each catalog (`rollouts.web.runs`)."""

    def __init__(self, catalog: Catalog, bucket: str, processes: int = 1) -> None:
        self.catalog = catalog
        self.bucket = bucket
        self.processes = processes
        self._points: dict[str, Point] = {}
        self._failed: dict[str, tuple[FileIdentity, str]] = {}
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._queue: list[StepFile] = []

    def snapshot(self, disk_budget_s: float = 0.0) -> Snapshot:
        """What is indexed now; first, for up to `disk_budget_s` seconds, the stale steps the
        disk cache has (a small read each), so a restarted viewer's first answer has them."""
        steps = self.catalog.steps(self.bucket)
        if disk_budget_s > 0 and self.catalog.disk is not None:
            self._read_disk_cache(steps, time.monotonic() + disk_budget_s)
        with self._lock:
            stale = [s for s in steps if not self._current(s)]
            known = {s.filename for s in steps}
            for gone in set(self._points) - known:  # removed files leave the curve
                del self._points[gone]
            self._queue = stale
            if stale and (self._worker is None or not self._worker.is_alive()):
                self._worker = threading.Thread(
                    target=self._work, name=f"history {self.bucket}", daemon=True
                )
                self._worker.start()
            points = [self._points[s.filename] for s in steps if s.filename in self._points]
            failed = {name: message for name, (_, message) in self._failed.items() if name in known}
        return Snapshot(points, len(steps), len(stale), failed)

    def _read_disk_cache(self, steps: list[StepFile], deadline: float) -> None:
        with self._lock:
            stale = [s for s in steps if not self._current(s)]
        for step in stale:
            if time.monotonic() > deadline:  # the background thread reads the rest
                return
            self._attempt(step, self._index_from_disk)

    def wait(self, timeout: float | None = None) -> Snapshot:
        """Index everything now (for scripts and tests), then return the snapshot."""
        snapshot = self.snapshot()
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self.snapshot() if not snapshot.done else snapshot

    def _current(self, step: StepFile) -> bool:
        """Whether the step is indexed (or failed) as its file is now."""
        point = self._points.get(step.filename)
        failure = self._failed.get(step.filename)
        identity = point.identity if point is not None else failure[0] if failure else None
        return is_current(identity, step)

    def _work(self) -> None:
        while True:
            with self._lock:
                queue = [s for s in self._queue if not self._current(s)]
                self._queue = []
                if not queue:
                    self._worker = None
                    return
                newest = queue[-1] if self._is_newest(queue[-1]) else None
            if newest is not None:  # a live run's step: first, and through the shared index
                self._attempt(newest, self._index_shared)
            misses = []
            for step in queue:
                if step is not newest and not self._attempt(step, self._index_from_disk):
                    misses.append(step)
            self._decode(misses)

    def _is_newest(self, step: StepFile) -> bool:
        """Whether `step` is after every indexed step. Called with the lock held."""
        return not self._points or step.step >= max(p.step for p in self._points.values())

    def _attempt(self, step: StepFile, index: Callable[[StepFile], Point | None]) -> bool:
        """Index `step` one way; False when that way does not have it (a disk cache miss)."""
        try:
            point = index(step)
        except (OSError, StoreError) as exc:
            self._fail(step, exc)
            return True
        if point is None:
            return False
        self._store(step, point)
        return True

    def _store(self, step: StepFile, point: Point) -> None:
        with self._lock:
            self._points[step.filename] = point
            self._failed.pop(step.filename, None)

    def _fail(self, step: StepFile, exc: BaseException) -> None:
        logger.warning("could not index %s/%s: %s", self.bucket, step.filename, exc)
        identity = FileIdentity(0, 0, step.size_bytes, step.mtime_ns)
        message = failure_message(self._name(step), exc)
        with self._lock:
            self._failed[step.filename] = (identity, message)

    def _index_shared(self, step: StepFile) -> Point:
        index = self.catalog.open_step(self.bucket, step.filename)
        return point_of(step, index.identity, self.catalog.stats(index))

    def _index_from_disk(self, step: StepFile) -> Point | None:
        disk = self.catalog.disk
        if disk is None:
            return None
        path = self.catalog.step_path(self.bucket, step.filename)
        identity = FileIdentity.of(os.stat(path))
        stats = disk.load_stats(path, identity)
        if stats is not None and not self.catalog.judged_by_rules(stats):
            return self._index_shared(step)  # other flag thresholds: the columns re-judged
        return point_of(step, identity, stats) if stats is not None else None

    def _decode(self, steps: list[StepFile]) -> None:
        """Read and decode steps the disk cache did not have: on a few processes when there
        are many (the JSON decoding is CPU-bound, and the web server keeps its GIL)."""
        paths = []
        for step in steps:
            try:
                paths.append((step, self.catalog.step_path(self.bucket, step.filename)))
            except StoreError as exc:
                self._fail(step, exc)
        disk = str(self.catalog.disk.directory) if self.catalog.disk is not None else None
        roots = served_roots()  # a pool process must not write into them either
        rules = self.catalog.flag_rules.as_dict()
        processes = self.processes
        if len(paths) >= POOL_MIN_STEPS and processes > 1:
            # The process's one pool (`indexer.shared_pool`), which the run picker's indexing
            # also uses: a page's steps queue behind one run's at most, never behind all runs.
            try:
                pool = shared_pool(processes)
                futures = {}
                for s, p in paths:
                    with submitting() as may:
                        if not may:
                            return  # the process is exiting: its indexing with it
                        args = (str(p), self._name(s), disk, roots, rules)
                        job = pool.submit(decode_step, *args)  # type: ignore[union-attr]
                    futures[job] = s
                for future in as_completed(futures):
                    self._take(futures[future], future)
                return
            except (OSError, RuntimeError, BrokenProcessPool) as exc:  # decode in-thread
                if is_exiting():
                    return  # the pool was shut down with the process
                logger.warning("indexing in this process (%s)", exc)
                if isinstance(exc, BrokenProcessPool | RuntimeError):
                    reset_pool()  # its processes died, or it was shut down meanwhile
                with self._lock:
                    paths = [(s, p) for s, p in paths if s.filename not in self._points]
        for step, path in paths:
            self._attempt(step, partial(self._decode_here, path=path, disk=disk))

    def _decode_here(self, step: StepFile, path: Path, disk: str | None) -> Point:
        rules = self.catalog.flag_rules.as_dict()
        return point_of(
            step, *decode_step(str(path), self._name(step), disk, served_roots(), rules)
        )

    def _name(self, step: StepFile) -> str:
        return f"{self.bucket}/{step.filename}"

    def _take(self, step: StepFile, future: Future) -> None:
        if future.cancelled():
            raise BrokenProcessPool("the pool was shut down")
        exc = future.exception()
        if isinstance(exc, BrokenProcessPool):
            raise exc
        if exc is not None:
            self._fail(step, exc)
            return
        identity, stats = future.result()
        self._store(step, point_of(step, identity, stats))


def decode_step(
    path: str,
    name: str,
    disk: str | None,
    protected: tuple[str, ...] = (),
    rules: dict[str, Any] | None = None,
) -> tuple[FileIdentity, dict[str, Any]]:
    """A step's identity and statistics from its file, saved to the disk cache on the way
    (never inside a `protected` data directory).

    With a disk cache, only one process indexes a step at a time (its entry's lock): another
    one that finds it locked waits, then reads the entry the other wrote. Runs in a pool
    process: plain arguments, a private index, nothing shared.
    """
    found = decode_step_unless_busy(path, name, disk, protected, rules, skip_busy=False)
    if found is None:  # only `skip_busy` gives up
        raise StoreError(f"{name} could not be indexed")
    return found


def decode_step_unless_busy(
    path: str,
    name: str,
    disk: str | None,
    protected: tuple[str, ...] = (),
    rules: dict[str, Any] | None = None,
    skip_busy: bool = True,
) -> tuple[FileIdentity, dict[str, Any]] | None:
    """`decode_step`, or None at once when another process is indexing the step (its lock):
    the caller comes back to it later and finds the entry that process wrote."""
    cache = _disk_cache(disk, protected) if disk is not None else None
    lock = None
    if cache is not None:
        deadline = time.monotonic() + LOCK_WAIT_S
        while (lock := cache.try_lock(Path(path))) is None:
            if skip_busy:
                return None
            if time.monotonic() > deadline:
                break  # held too long: index it here too
            time.sleep(LOCK_POLL_S)
    try:
        # Another process may have indexed it since the caller looked for its entry (waited
        # for here, or done between that look and this lock): its entry, if still current.
        found = current_entry(cache, Path(path), rules) if cache is not None else None
        if found is not None:
            return found
        index = StepIndex.build(Path(path), name)
        columns = index.ensure_columns()
        stats = step_stats(columns, index.invalid, FlagRules.from_mapping(rules))
        if cache is not None:
            cache.save(index, columns, stats)
        return index.identity, stats
    finally:
        if lock is not None:
            lock.release()


@lru_cache(maxsize=4)
def _disk_cache(disk: str, protected: tuple[str, ...]) -> DiskCache:
    """One `DiskCache` per directory and protected roots (a pool process decodes step after
    step: resolving a thousand runs' roots each time would cost more than a small step)."""
    return DiskCache(disk, protected)


def current_entry(
    cache: DiskCache, path: Path, rules: dict[str, Any] | None
) -> tuple[FileIdentity, dict[str, Any]] | None:
    identity = FileIdentity.of(os.stat(path))
    stats = cache.load_stats(path, identity)
    wanted = FlagRules.from_mapping(rules).as_dict()
    if stats is None or stats.get("flags", {}).get("rules") != wanted:
        return None
    return identity, stats


def is_current(identity: FileIdentity | None, step: StepFile) -> bool:
    """Whether `identity` is the step's file as listed now (its size and mtime)."""
    return identity is not None and (identity.size, identity.mtime_ns) == (
        step.size_bytes,
        step.mtime_ns,
    )


def failure_message(name: str, exc: BaseException) -> str:
    """Why step `name` could not be indexed, as clients are shown it: the store's own messages
    name the step; anything else (an OSError holds the absolute path) is said in words of ours."""
    if isinstance(exc, OSError):
        exc = unreadable(name, exc)
    if isinstance(exc, StoreError):
        return str(exc)
    return f"could not be indexed ({type(exc).__name__})"


def point_of(step: StepFile, identity: FileIdentity, stats: dict[str, Any]) -> Point:
    return Point(step.step, step.filename, identity.size, identity, metrics_of(stats))
