"""A run's points in one compact entry of the disk cache, so a restarted viewer has a thousand
runs' readings back from a `stat` of their steps and one small read each.

The entry (`run-<hash of the data directory>.msgpack`) holds a bucket's steps, each with the
identity it was computed from and its metrics (`metrics_of`), under the flag thresholds they
were judged by. A step whose file no longer has that size and mtime is not taken from it: it
comes from its own entry, or is decoded again (`run_points`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .catalog import Catalog
from .disk import DiskCache, served_roots
from .errors import StoreError
from .files import FileIdentity, StepFile
from .history import (
    POOL_MIN_STEPS,
    Point,
    current_entry,
    decode_step_unless_busy,
    failure_message,
    is_current,
    point_of,
)
from .indexer import is_exiting, reset_pool, shared_pool, submitting

logger = logging.getLogger("rollouts.store")

KIND = "run"
VERSION = 1


class _Step(msgspec.Struct, array_like=True):
    step: int
    filename: str
    dev: int
    ino: int
    size: int
    mtime_ns: int
    values: list[float | None]


class _Entry(msgspec.Struct, array_like=True):
    version: int
    bucket: str
    rules: dict[str, Any]
    keys: list[str]
    steps: list[_Step]


_decoder = msgspec.msgpack.Decoder(_Entry)
_encoder = msgspec.msgpack.Encoder()


def load_points(
    disk: DiskCache, data_dir: Path, bucket: str, rules: dict[str, Any]
) -> dict[str, Point]:
    """The points the run's entry holds for `bucket` under these flag thresholds, by file name
    (not yet checked against the files: `run_points` does)."""
    blob = disk.load_blob(data_dir, KIND)
    if blob is None:
        return {}
    try:
        entry = _decoder.decode(blob)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}
    if entry.version != VERSION or entry.bucket != bucket or entry.rules != rules:
        return {}
    points = {}
    for s in entry.steps:
        if len(s.values) != len(entry.keys):
            return {}
        identity = FileIdentity(s.dev, s.ino, s.size, s.mtime_ns)
        metrics = dict(zip(entry.keys, s.values, strict=True))
        points[s.filename] = Point(s.step, s.filename, s.size, identity, metrics)
    return points


def save_points(
    disk: DiskCache, data_dir: Path, bucket: str, rules: dict[str, Any], points: list[Point]
) -> None:
    keys = sorted({key for point in points for key in point.metrics})
    steps = [
        _Step(
            p.step,
            p.filename,
            p.identity.dev,
            p.identity.ino,
            p.identity.size,
            p.identity.mtime_ns,
            [p.metrics.get(key) for key in keys],
        )
        for p in points
    ]
    blob = _encoder.encode(_Entry(VERSION, bucket, rules, keys, steps))
    disk.save_blob(data_dir, KIND, blob)


def entry_bytes(disk: DiskCache, data_dir: Path) -> int:
    """The size of the run's entry (0 without one): what a run costs on disk."""
    blob = disk.load_blob(data_dir, KIND)
    return len(blob) if blob is not None else 0


def point_is_current(point: Point | None, step: StepFile) -> bool:
    """Whether `point` was computed from the step's file as it is now (its size and mtime)."""
    return point is not None and is_current(point.identity, step)


@dataclass(slots=True)
class RunPoints:
    """A bucket's points as far as they could be had now."""

    points: list[Point] = field(default_factory=list)
    busy: int = 0  # steps another process is indexing: asked again later
    failed: dict[str, str] = field(default_factory=dict)
    decoded: int = 0  # steps read from their files here
    from_entries: int = 0  # steps read from their own disk cache entries


def run_points(
    catalog: Catalog,
    bucket: str,
    steps: list[StepFile],
    known: dict[str, Point],
    processes: int,
    pause: Callable[[], None] = lambda: None,
) -> RunPoints:
    """Every step's point: from `known` (the run's entry) while current, else from the step's
    own entry, else decoded (on the shared pool with `processes` > 1, else here, calling
    `pause` between steps). A step another process holds the lock of is left for later."""
    result = RunPoints()
    found: dict[str, Point] = {}
    missing: list[tuple[StepFile, Path]] = []
    for step in steps:
        point = known.get(step.filename)
        if point_is_current(point, step):
            found[step.filename] = point  # type: ignore[assignment]
            continue
        try:
            path = catalog.step_path(bucket, step.filename)
            point = _from_entry(catalog, step, path)
        except (OSError, StoreError) as exc:
            result.failed[step.filename] = failure_message(f"{bucket}/{step.filename}", exc)
            continue
        if point is not None:
            found[step.filename] = point
            result.from_entries += 1
        else:
            missing.append((step, path))
    disk = str(catalog.disk.directory) if catalog.disk is not None else None
    args = (disk, served_roots(), catalog.flag_rules.as_dict())
    for step, outcome in _decode(bucket, missing, args, processes, pause):
        if isinstance(outcome, BaseException):
            result.failed[step.filename] = failure_message(f"{bucket}/{step.filename}", outcome)
        elif outcome is None:
            result.busy += 1
        else:
            found[step.filename] = point_of(step, *outcome)
            result.decoded += 1
    result.points = [found[s.filename] for s in steps if s.filename in found]
    return result


def _from_entry(catalog: Catalog, step: StepFile, path: Path) -> Point | None:
    if catalog.disk is None:
        return None
    found = current_entry(catalog.disk, path, catalog.flag_rules.as_dict())
    return point_of(step, *found) if found is not None else None


Outcome = tuple[FileIdentity, dict[str, Any]] | None | BaseException


def _decode(
    bucket: str,
    missing: list[tuple[StepFile, Path]],
    args: tuple[Any, ...],
    processes: int,
    pause: Callable[[], None],
) -> list[tuple[StepFile, Outcome]]:
    if not missing:
        return []
    # As a history does: a few steps are decoded here, without starting the pool's processes.
    pool = shared_pool(processes) if len(missing) >= POOL_MIN_STEPS else None
    outcomes: list[tuple[StepFile, Outcome]] = []
    if pool is not None:
        futures = {}
        for step, path in missing:
            with submitting() as may:
                if not may:
                    return outcomes  # the process is exiting
                try:
                    job = pool.submit(
                        decode_step_unless_busy, str(path), f"{bucket}/{step.filename}", *args
                    )
                except RuntimeError:  # shut down meanwhile (exiting, or replaced)
                    break
            futures[job] = step
        left = [step for step, _ in missing if step not in futures.values()]
        for future in as_completed(futures):
            exc = None if future.cancelled() else future.exception()
            if future.cancelled() or isinstance(exc, BrokenProcessPool):
                left.append(futures[future])
                continue
            outcomes.append((futures[future], exc if exc is not None else future.result()))
        if not left:
            return outcomes
        if is_exiting():
            return outcomes
        logger.warning("indexing in this process (the pool's processes stopped)")
        reset_pool()
        missing = [(step, path) for step, path in missing if step in left]
    for step, path in missing:
        pause()
        try:
            outcome: Outcome = decode_step_unless_busy(
                str(path), f"{bucket}/{step.filename}", *args
            )
        except (OSError, StoreError) as exc:
            outcome = exc
        outcomes.append((step, outcome))
    return outcomes
