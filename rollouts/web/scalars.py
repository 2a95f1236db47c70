"""A data directory's TensorBoard scalars for the web: which directory, one reader per directory,
and what the trends JSON adds from them (`tb.<tag>` series, the KL and value-function rules,
the bucket's reading with its verdict).

The reading itself is plain Python (`store/scalars/`); this module only maps settings and runs
to it, as `runs.py` does for catalogs.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..conf import conf
from ..presentation import with_verdict
from ..store import EV_WINDOW, KL_MAX, Point, convergence, update_rules
from ..store.disk import DiskCache
from ..store.scalars import (
    INSTALL_HINT,
    TENSORBOARD_DIR_NAME,
    ScalarStore,
    find_tensorboard,
    list_event_files,
    tensorboard_available,
)

PREFIX = "tb."  # a scalar's key among the trends' series: tb.train/kl_loss
OFF_VALUES = ("", "off", False)

_stores: dict[tuple[str, str], ScalarStore] = {}
_lock = threading.Lock()


def configured_dir(run: str | None) -> Path | bool | None:
    """What the setting says for this run: a directory, None (find it), or False (off)."""
    setting = conf.TENSORBOARD
    if setting in OFF_VALUES:
        return False
    if isinstance(setting, dict):
        named = setting.get(run) if run is not None else None
        if named in OFF_VALUES:
            return False
        return Path(str(named)) if named else None
    if setting is None or run is not None:  # a plain path is ROLLOUTS_DATA_DIR's
        return None
    return Path(str(setting))


def store_for(data_root: Path, run: str | None) -> tuple[ScalarStore | None, str]:
    """The reader of the data directory's TensorBoard directory, or None and why there is none."""
    configured = configured_dir(run)
    if configured is False:
        return None, "TensorBoard scalars are turned off (--tensorboard off)"
    named = configured if isinstance(configured, Path) else None
    tb = find_tensorboard(data_root, named)
    if tb is None:
        if named is not None:
            return None, f"the TensorBoard directory {named.name!r} named by the setting is missing"
        return None, (
            f"no {TENSORBOARD_DIR_NAME}/ in this data directory or beside its rollout_result/"
            " (name one with --tensorboard DIR)"
        )
    disk = conf.DISK_CACHE
    key = (str(tb.root), str(disk))
    with _lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = ScalarStore(tb, DiskCache(disk) if disk else None)
    return store, ""


def absent_source(why: str) -> dict[str, Any]:
    return {
        "found": False,
        "directory": None,
        "found_by": None,
        "files": [],
        "files_total": 0,
        "version": 0,
        "message": why,
    }


@dataclass
class TrendScalars:
    """What the trends JSON of a bucket takes from the scalars."""

    source: dict[str, Any]
    series: list[dict[str, Any]] = field(default_factory=list)
    by_step: dict[int, dict[str, float | None]] = field(default_factory=dict)
    latest: dict[str, float] = field(default_factory=dict)  # tag -> its latest finite value
    recent: dict[str, list[float]] = field(default_factory=dict)  # tag -> its last finite ones

    def at(self, step: int) -> dict[str, float | None]:
        return self.by_step.get(step, {})


def kind_of(tag: str) -> str:
    """The group a scalar joins in the curve selector: its prefix (`train/`, `eval/`...)."""
    head, slash, _ = tag.partition("/")
    return f"tb:{head}" if slash and head else "tb:"


def trend_scalars(data_root: Path, run: str | None, steps: list[int]) -> TrendScalars:
    """Every scalar as a series `tb.<tag>`, its values on those of the bucket's `steps` that
    logged it."""
    return _scalars(data_root, run, steps)


def rule_scalars(data_root: Path, run: str | None) -> TrendScalars:
    """Only what the reading's KL and value-function rules read (`latest`, `recent` of their
    tags): the run picker's, which draws no `tb.` series, so it builds none."""
    return _scalars(data_root, run, None)


def _scalars(data_root: Path, run: str | None, steps: list[int] | None) -> TrendScalars:
    """The scalars of the bucket's `steps` as `trend_scalars` says them, or with `steps` None
    only the rules' tags' latest and recent values."""
    store, why = store_for(data_root, run)
    if store is None:
        return TrendScalars(absent_source(why))
    store.refresh()
    snapshot = store.snapshot()  # one version for the whole answer
    result = TrendScalars(store.source(snapshot))
    if steps is None:
        for tag in (*conf.KL_SCALARS, *conf.EXPLAINED_VARIANCE_SCALARS):
            _latest_and_recent(result, tag, snapshot.points(tag))
        return result
    wanted = set(steps)
    for tag in snapshot.tag_names():
        points = snapshot.points(tag)
        if not points:
            continue
        key = PREFIX + tag
        matched = 0
        for step, value, _ in points:
            if step in wanted:
                result.by_step.setdefault(step, {})[key] = value if math.isfinite(value) else None
                matched += 1
        _latest_and_recent(result, tag, points)
        result.series.append(
            {
                "key": key,
                "label": tag,
                "direction": 0,
                "kind": kind_of(tag),
                "points": len(points),
                "on_steps": matched,  # the rest are at steps this bucket has no samples of
            }
        )
    return result


def _latest_and_recent(result: TrendScalars, tag: str, points: Sequence[Any]) -> None:
    """The tag's last EV_WINDOW finite values (oldest first) and the latest of them."""
    last = list(
        itertools.islice((v for _, v, _ in reversed(points) if math.isfinite(v)), EV_WINDOW)
    )[::-1]
    if last:
        result.latest[tag], result.recent[tag] = last[-1], last


def first_logged(latest: dict[str, float], tags: tuple[str, ...]) -> tuple[str, float] | None:
    """The first of `tags` logged, with its latest value (a NaN is no value)."""
    for tag in tags:
        value = latest.get(tag)
        if value is not None and math.isfinite(value):
            return tag, value
    return None


def reference_lines(scalars: TrendScalars) -> list[dict[str, Any]]:
    """The reading's thresholds as lines on the curves they judge: KL_MAX on each KL-like
    scalar (ROLLOUTS_KL_SCALARS) the run logs, so the chart shows the number the reading cites
    (the page never spells it itself)."""
    drawn = {s["key"] for s in scalars.series}
    return [
        {
            "key": PREFIX + tag,
            "value": KL_MAX,
            "label": f"KL {KL_MAX:g}: too large above (the reading)",
        }
        for tag in conf.KL_SCALARS
        if PREFIX + tag in drawn
    ]


def with_update_rules(result: dict[str, Any], scalars: TrendScalars) -> dict[str, Any]:
    """The bucket's reading with the KL and value-function rules of the training front end,
    when a KL-like scalar (ROLLOUTS_KL_SCALARS) or the explained variance is logged."""
    kl = first_logged(scalars.latest, conf.KL_SCALARS)
    ev = first_logged(scalars.latest, conf.EXPLAINED_VARIANCE_SCALARS)
    if kl is None and ev is None:
        return result
    result = update_rules(
        result,
        kl[1] if kl else None,
        scalars.recent.get(ev[0], []) if ev else [],
        kl_name=kl[0] if kl else "KL",
        ev_name=ev[0] if ev else "explained variance",
    )
    result["thresholds"].update(
        kl_tag=kl[0] if kl else None, explained_variance_tag=ev[0] if ev else None
    )
    return result


def bucket_reading(points: Sequence[Point], scalars: TrendScalars) -> dict[str, Any]:
    """A bucket's whole reading, as the run picker and the trends say it: the mean reward's
    convergence, the KL and value-function rules of the run's scalars, and the `verdict`
    (label, tone, why) every page shows, so none of them decides it again."""
    return with_verdict(with_update_rules(convergence(points), scalars))


def with_scalars_version(cursor: dict[str, int] | None, data_root: Path, run: str | None) -> Any:
    """A poll's (or the trends') cursor with the scalars' version: a page whose cursor differs
    reads the trends again, so new scalars arrive with the same poll as new steps."""
    if cursor is None:
        return None
    store, _ = store_for(data_root, run)
    if store is not None:
        store.refresh()
        cursor = {**cursor, "scalars": store.version}
    return cursor


def tensorboard_flag_problem(raw: str | None, runs: dict[str, Path]) -> str | None:
    """Why `visualize --tensorboard DIR` cannot be used (a one-line error), or None."""
    if raw is None or raw == "off":
        return None
    if runs:
        return (
            "--tensorboard names one run's directory; with several runs each finds its own"
            " tensorboard_log/ (ROLLOUTS_TENSORBOARD takes a dict of run names)"
        )
    path = Path(raw).expanduser()
    if not path.is_dir():
        return f"--tensorboard {raw} is not a directory"
    if not os.access(path, os.R_OK | os.X_OK):
        return f"--tensorboard {raw} is not readable"
    return None


def scalars_state(data_root: Path, run: str | None) -> str:
    """What the start-up banner says of a run's scalars: where, how many event files (unread),
    and how many of them will be read when there are more than the limit."""
    store, why = store_for(data_root, run)
    if store is None:
        return why
    listing = list_event_files(store.tb.root, store.max_files)
    count = listing.found
    found = f"{count} event file{'s' if count != 1 else ''} in {store.tb.shown} ({store.tb.origin})"
    if count > len(listing.files):
        found += (
            f"; read the newest {len(listing.files):,} of {count:,} event files"
            f" (at most {store.max_files:,})"
        )
    return found if tensorboard_available() or not count else f"{found}; {INSTALL_HINT}"
