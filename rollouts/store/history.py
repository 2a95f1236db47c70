"""A bucket's per-step statistics over time: what the trends page draws, kept current.

`History.snapshot()` answers at once with whatever is indexed so far and starts (or continues)
a background thread for the steps that are new, grown or rewritten; a page polls it and fills
in. A step comes from, in order: this process's memory, the disk cache (`diskcache.py`), or its
file (a private index, so hundreds of steps never push the viewer's own indexes out of the
shared cache). Only the newest step, the one a live run is writing, goes through the shared
catalog, which extends its index instead of rereading it.
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import StoreError
from .index import FileIdentity, StepIndex
from .stats import step_stats
from .trends import noise, reading

if TYPE_CHECKING:
    from .catalog import Catalog, StepFile

logger = logging.getLogger("rollouts.store")

SPARK_POINTS = 30  # steps drawn in a metric card's trend line
ABNORMAL_NOISE = 3.0  # a change beyond this many times the recent noise is highlighted


@dataclass(frozen=True, slots=True)
class Metric:
    key: str
    label: str
    direction: int  # +1: higher is better, -1: lower is better, 0: neither
    floor: float = 0.0  # a change smaller than this is never abnormal (rates jump by chance)


# The curves every bucket offers (when its steps have the field), in the order shown.
METRICS = (
    Metric("reward_mean", "Mean reward", +1),
    Metric("response_length_mean", "Mean response length", 0),
    Metric("truncation_rate", "Truncation rate", -1, 0.05),
    Metric("zero_signal_share", "Zero-signal groups", -1, 0.05),
    Metric("success_share", "Groups with a success", +1, 0.05),
    Metric("reward_std", "Reward std", 0),
    Metric("response_length_p90", "Response length p90", 0),
    Metric("response_length_max", "Response length max", 0),
    Metric("group_std_mean", "Mean within-group std", +1),
    Metric("samples", "Samples", 0),
    Metric("invalid", "Unreadable lines", -1, 0.5),
)
CARD_KEYS = ("reward_mean", "response_length_mean", "truncation_rate", "zero_signal_share")


def metrics_of(stats: dict[str, Any]) -> dict[str, float | None]:
    """One step's statistics as flat numbers: the y values of the trend curves.

    Besides the fixed METRICS: `status.<name>` (share of samples), `dataset.<name>` (mean
    reward of an eval dataset: its accuracy for 0/1 rewards) and `reward.<part>` (mean of one
    component of an object reward).
    """
    samples = stats["samples"]
    lengths, groups = stats["response_length"], stats["groups"]
    flat: dict[str, float | None] = {
        "reward_mean": stats["reward"]["mean"],
        "reward_std": stats["reward"]["std"],
        "response_length_mean": lengths["mean"],
        "response_length_p90": lengths["p90"],
        "response_length_max": lengths["max"],
        "truncation_rate": stats["truncation_rate"],
        "zero_signal_share": groups["zero_signal_share"],
        "success_share": groups["success_share"],
        "group_std_mean": groups["mean_std"],
        "samples": samples,
        "invalid": stats["invalid"],
    }
    for name, count in stats["status"].items():
        flat[f"status.{name}"] = count / samples if samples else None
    for name, summary in stats["reward_by_dataset"].items():
        flat[f"dataset.{name}"] = summary["mean"]
    for name, summary in stats["reward_components"].items():
        flat[f"reward.{name}"] = summary["mean"]
    return flat


@dataclass(slots=True)
class Point:
    step: int
    filename: str
    size_bytes: int
    identity: FileIdentity
    metrics: dict[str, float | None]


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
    def __init__(self, catalog: Catalog, bucket: str) -> None:
        self.catalog = catalog
        self.bucket = bucket
        self._points: dict[str, Point] = {}
        self._failed: dict[str, tuple[FileIdentity, str]] = {}
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._queue: list[StepFile] = []

    def snapshot(self) -> Snapshot:
        steps = self.catalog.steps(self.bucket)
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
        return identity is not None and (identity.size, identity.mtime_ns) == (
            step.size_bytes,
            step.mtime_ns,
        )

    def _work(self) -> None:
        while True:
            with self._lock:
                queue = [s for s in self._queue if not self._current(s)]
                if not queue:
                    self._worker = None
                    return
                newest = self._is_newest(queue[-1])
                step = queue[-1] if newest else queue[0]
                self._queue = [s for s in queue if s is not step]
            try:
                point = self._index(step, newest)
            except (OSError, StoreError) as exc:
                logger.warning("could not index %s/%s: %s", self.bucket, step.filename, exc)
                identity = FileIdentity(0, 0, step.size_bytes, step.mtime_ns)
                with self._lock:
                    self._failed[step.filename] = (identity, str(exc) or type(exc).__name__)
                continue
            with self._lock:
                self._points[step.filename] = point
                self._failed.pop(step.filename, None)

    def _is_newest(self, step: StepFile) -> bool:
        """Whether `step` is after every indexed step (so indexed first: a live run's newest).

        Called with the lock held."""
        return not self._points or step.step >= max(p.step for p in self._points.values())

    def _index(self, step: StepFile, newest: bool) -> Point:
        catalog = self.catalog
        path = catalog.step_path(self.bucket, step.filename)
        if newest:  # likely open in the viewer too, and growing: extend the shared index
            index = catalog.open_step(self.bucket, step.filename)
            stats = catalog.stats(index)
        else:
            index = StepIndex.build(path, f"{self.bucket}/{step.filename}")
            cached = catalog.disk.load(path, index.identity) if catalog.disk else None
            if cached is not None:
                stats = cached.stats
            else:
                stats = step_stats(index.ensure_columns(), index.invalid)
                if catalog.disk is not None:
                    catalog.disk.save(path, index.identity, index.columns, index.invalid, stats)
        identity = index.identity
        return Point(step.step, step.filename, identity.size, identity, metrics_of(stats))


# -- reading the curves ------------------------------------------------------------------------
def series(points: list[Point], key: str) -> list[float]:
    """One metric over the points, NaN where a step lacks it."""
    return [_number(p.metrics.get(key)) for p in points]


def convergence(points: list[Point]) -> dict[str, Any]:
    return reading(
        series(points, "reward_mean"),
        truncation=series(points, "truncation_rate"),
        zero_signal=series(points, "zero_signal_share"),
    )


def cards(points: list[Point]) -> list[dict[str, Any]]:
    """The metric cards: latest value, change since the previous step, a trend line, and a
    highlight when the change goes the wrong way by more than the recent noise allows."""
    by_key = {m.key: m for m in METRICS}
    result = []
    for key in CARD_KEYS:
        metric = by_key[key]
        steps = [(p.step, v) for p in points if math.isfinite(v := _number(p.metrics.get(key)))]
        if not steps:
            continue
        values = [v for _, v in steps]
        latest = values[-1]
        previous = values[-2] if len(values) > 1 else None
        delta = latest - previous if previous is not None else None
        card: dict[str, Any] = {
            "key": key,
            "label": metric.label,
            "step": steps[-1][0],
            "latest": latest,
            "previous": previous,
            "delta": delta,
            "spark": [{"step": s, "value": v} for s, v in steps[-SPARK_POINTS:]],
            "abnormal": False,
            "why": None,
        }
        recent = values[-11:-1]  # the noise of the steps before the latest one
        if delta is not None and len(recent) >= 3:
            allowed = max(ABNORMAL_NOISE * noise(recent), metric.floor)
            card["threshold"] = allowed
            wrong_way = delta * metric.direction < 0 if metric.direction else True
            if wrong_way and abs(delta) > allowed:
                card["abnormal"] = True
                card["why"] = (
                    f"changed by {delta:+.4g} since the previous step; more than "
                    f"{ABNORMAL_NOISE:g} x its recent noise ({allowed:.4g})"
                )
        result.append(card)
    return result


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else math.nan
