"""Which data directory a request reads, and its one shared `Catalog` and bucket histories.

The run (one of ROLLOUTS_DATA_DIRS) comes from the URL: the view decorators take it out of the
view's arguments with `bind_run`, and everything that reads data or builds a URL asks
`current_run`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from django.core.cache import InvalidCacheBackendError, caches
from django.http import HttpRequest

from ..cache import ByteLimitedCache
from ..conf import conf
from ..store import Catalog, History, ListedRun, NotFound, RunFolder, Unavailable, changed_ns
from ..store.disk import DiskCache
from ..training import HostedElsewhere, SpecError, manager_for

_catalogs: dict[tuple[str, str, str], Catalog] = {}
_histories: dict[tuple[Catalog, str], History] = {}
_folders: dict[str, RunFolder] = {}
_lock = threading.Lock()
_fallback_cache = ByteLimitedCache("rollouts-fallback", {})


def index_cache() -> Any:
    try:
        return caches[conf.CACHE_ALIAS]
    except InvalidCacheBackendError:
        return _fallback_cache  # the W002 system check has said so at start-up


RUN_ATTRIBUTE = "rollouts_run"  # set on the request by the view wrappers from the URL


def bind_run(request: HttpRequest, view_kwargs: dict[str, Any]) -> None:
    """Move the URL's `run` (present under runs/<run>/) from the view's arguments to the request."""
    setattr(request, RUN_ATTRIBUTE, view_kwargs.pop("run", None))


def current_run(request: HttpRequest) -> str | None:
    return getattr(request, RUN_ATTRIBUTE, None)


def run_folder() -> RunFolder | None:
    """The folder of runs listed while serving (ROLLOUTS_RUNS_DIR), one per process."""
    root = conf.RUNS_DIR
    if root is None:
        return None
    key = str(root)
    folder = _folders.get(key)
    if folder is None:
        with _lock:
            folder = _folders.setdefault(key, RunFolder(root))
    return folder


def has_runs() -> bool:
    """Whether the site serves several runs (named ones, or a folder of them): a run picker."""
    return bool(conf.DATA_DIRS) or conf.RUNS_DIR is not None


def listed_runs() -> list[ListedRun]:
    """Every run served now: the named ones (ROLLOUTS_DATA_DIRS), then the folder's."""
    named = [ListedRun(name, path, changed_ns(path)) for name, path in conf.DATA_DIRS.items()]
    return named + _folder_runs()


def _folder_runs() -> list[ListedRun]:
    """The folder's runs now, but for a name taken by a named run (that is the named run)."""
    folder = run_folder()
    if folder is None:
        return []
    named = conf.DATA_DIRS
    return [run for run in folder.listing() if run.name not in named]


OVERLAY_RUNS = 20  # the most runs of a folder that the trends overlay and compare offer


def overlay_runs(current: str | None) -> list[tuple[str, Path]]:
    """The runs a page of run `current` can set beside it (the trends overlay, compare):
    every named run in its order, then the folder's most recently changed, at most
    `OVERLAY_RUNS` of them, and `current` always."""
    named = conf.DATA_DIRS
    listed = sorted(_folder_runs(), key=lambda run: run.changed_ns, reverse=True)
    newest = listed[:OVERLAY_RUNS]
    if current not in named and all(run.name != current for run in newest):
        newest = [run for run in listed if run.name == current] + newest[:-1]
    return [*named.items(), *((run.name, run.data_dir) for run in newest)]


def gone_runs() -> list[str]:
    """Runs of the folder that were listed and are no longer there."""
    folder = run_folder()
    return folder.gone() if folder is not None else []


def data_dir_of(run: str | None) -> Path:
    """The directory a request reads: its run's (ROLLOUTS_DATA_DIRS or the folder of runs), or
    ROLLOUTS_DATA_DIR."""
    runs = conf.DATA_DIRS
    if run is not None:
        if run in runs:
            return runs[run]
        folder = run_folder()
        found = folder.get(run) if folder is not None else None
        if found is not None:
            return found
        if folder is not None and folder.was_listed(run):
            raise NotFound(f"the run {run!r} is no longer there: its folder was removed or renamed")
        if folder is None:
            raise NotFound(f"no run {run!r}; the runs are: {', '.join(runs) or 'none'}")
        raise NotFound(f"no run {run!r}; the run picker lists the runs")
    followed = followed_run_dir()
    if followed is not None:
        return followed
    data_dir = conf.DATA_DIR
    if data_dir is None:
        if has_runs():
            raise NotFound("several runs are configured: choose one under runs/<name>/")
        raise Unavailable("no data directory is configured (ROLLOUTS_DATA_DIR)")
    return data_dir


def followed_run_dir() -> Path | None:
    """The hosted job's rollout_result/ while the viewer follows its job (`manage.py train`) and
    the job has one: the run the pages show, asked of the job's manager at each request (no
    setting is written while answering one). None otherwise, and for a portal."""
    if not conf.TRAIN_FOLLOW or conf.TRAIN_SPEC is None:
        return None
    try:
        manager = manager_for(conf.TRAIN_SPEC, conf.TRAIN_BACKEND, conf.TRAIN_RAY_ADDRESS)
    except (SpecError, HostedElsewhere):
        return None  # the training API says why
    return manager.rollout_dir()


def get_catalog(request: HttpRequest) -> Catalog:
    return catalog_of(data_dir_of(current_run(request)))


def catalog_of(data_dir: Path) -> Catalog:
    # One catalog per data dir for all threads: its per-step build locks must be shared.
    # (Django hands each thread its own cache object; ours is thread-safe, so any one serves.)
    disk = conf.DISK_CACHE
    key = (str(data_dir), conf.CACHE_ALIAS, str(disk))
    catalog = _catalogs.get(key)
    if catalog is None:
        with _lock:
            try:
                catalog = _catalogs.get(key) or Catalog(
                    data_dir, index_cache(), DiskCache(disk) if disk else None
                )
                _catalogs[key] = catalog
            except OSError:
                raise Unavailable(
                    f"the data directory {Path(data_dir).name!r} is missing or cannot be read"
                ) from None
    catalog.flag_rules = conf.FLAGS  # read each time: the setting may change
    return catalog


def history_of(catalog: Catalog, bucket: str) -> History:
    """The bucket's one `History` (per-step statistics indexed in the background)."""
    catalog.bucket_dir(bucket)  # NotFound for an unknown bucket
    with _lock:
        history = _histories.get((catalog, bucket))
        if history is None:
            history = _histories[(catalog, bucket)] = History(catalog, bucket)
    history.processes = conf.INDEX_PROCESSES  # read each time: the setting may change
    return history
