"""App settings, read from Django settings at access time so overrides in tests just work."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils.module_loading import import_string

from .store import FlagRules

# Pad tokens collapsed into one badge with a count (the CLI's --mask-str overrides it).
DEFAULT_MASK_STR = r"<\|image_pad\|>|<\|imgpad\|>|<\|audio_comp_pad\|>"


def normalize_base_path(raw: str) -> str:
    """'/absproxy/8080/' -> '/absproxy/8080'; '' or '/' -> '' (served at the root)."""
    stripped = raw.strip().strip("/")
    return "/" + stripped if stripped else ""


DEFAULT_POLL_MS = 3000  # how often an open page asks whether the run wrote something new
# The original viewer's API took page_size up to 1000; scripts written for it ask for that.
DEFAULT_MAX_PAGE_SIZE = 1000
# The index cache's budget: the original viewer's --cache-memory 4096 (MB), --cache-entries 20.
DEFAULT_CACHE_MEMORY_MB = 4096
DEFAULT_CACHE_ENTRIES = 20


def default_index_processes() -> int:
    """Processes that decode a bucket's steps in the background: the CPUs, at most 4."""
    return min(4, os.cpu_count() or 1)


DEFAULT_TRAIN_ACCESS = "rollouts.access.require_staff"


def _allow_all(request: Any) -> bool:
    return True


def _deny_all(request: Any) -> bool:
    return False


def access_problem(check: Any) -> str | None:
    """Why an access setting cannot be used (`checks.py` says it at start-up), or None."""
    if isinstance(check, str):
        try:
            check = import_string(check)
        except Exception as exc:  # a bad dotted path is an ImportError; a broken module anything
            return f"{check!r} cannot be imported ({type(exc).__name__}: {exc})"
    return None if callable(check) else f"{check!r} is neither callable nor a dotted path"


def access_check(check: Any) -> Callable[[Any], bool]:
    """The check an access setting names; one that cannot be used denies everyone (closed,
    never a 500): the system check says why."""
    if access_problem(check) is not None:
        return _deny_all
    return import_string(check) if isinstance(check, str) else check


def _positive_int(name: str, default: int) -> int:
    """The setting as an integer >= its minimum; unset or unusable: `default` (`checks.py` says
    which)."""
    value = parse_positive_int(getattr(settings, name, None), INTEGER_SETTINGS[name])
    return default if value is None else value


def parse_positive_int(raw: object, minimum: int = 1) -> int | None:
    """`raw` (an int, or digits from the environment) as an integer >= `minimum`; else None."""
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value >= minimum else None


# Integer settings: a bad value falls back to the setting's default, and system check W005 says
# so at start-up, instead of breaking an import or a request.
# By name, the least each takes: a page polling more often than ten times a second would load
# the server for nothing a person could see.
MIN_POLL_MS = 100
# A search answers after this long at most (then goes on from its cursor): one request must not
# hold a worker; less than this, and every answer is mostly overhead.
DEFAULT_SEARCH_MS = 1000
MIN_SEARCH_MS = 50
INTEGER_SETTINGS = {
    "ROLLOUTS_POLL_MS": MIN_POLL_MS,
    "ROLLOUTS_INDEX_PROCESSES": 1,
    "ROLLOUTS_MAX_PAGE_SIZE": 1,
    "ROLLOUTS_SEARCH_MS": MIN_SEARCH_MS,
}


class RolloutsSettings:
    @property
    def DATA_DIR(self) -> Path | None:
        value = getattr(settings, "ROLLOUTS_DATA_DIR", None)
        return Path(value) if value else None

    @property
    def DATA_DIRS(self) -> dict[str, Path]:
        """Several runs by name (a portal serving more than one); empty for the simple layout."""
        value = getattr(settings, "ROLLOUTS_DATA_DIRS", None) or {}
        return {str(name): Path(path) for name, path in value.items()}

    @property
    def RUNS_DIR(self) -> Path | None:
        """A folder of runs, listed while serving (`visualize PARENT`): a run folder that
        appears under it is served, one that goes says so."""
        value = getattr(settings, "ROLLOUTS_RUNS_DIR", None)
        return Path(value) if value else None

    @property
    def CACHE_ALIAS(self) -> str:
        return getattr(settings, "ROLLOUTS_CACHE_ALIAS", "rollouts")

    @property
    def MASK_STR(self) -> str:
        return getattr(settings, "ROLLOUTS_MASK_STR", DEFAULT_MASK_STR)

    @property
    def ACCESS(self) -> Callable[[Any], bool]:
        """The access check: a callable or its dotted path; everyone is allowed by default."""
        check = getattr(settings, "ROLLOUTS_ACCESS", None)
        if check is None:
            return _allow_all
        return access_check(check)

    @property
    def TRAIN_SPEC(self) -> Path | None:
        """The job spec (TOML) of the training run this site hosts; None: training is off."""
        value = getattr(settings, "ROLLOUTS_TRAIN_SPEC", None)
        return Path(value).expanduser() if value else None

    @property
    def TRAIN_ACCESS(self) -> Callable[[Any], bool]:
        """Who may see and drive the training run, besides the app's ACCESS: a callable or its
        dotted path; staff users by default (`manage.py train` allows the local user)."""
        return access_check(
            getattr(settings, "ROLLOUTS_TRAIN_ACCESS", None) or DEFAULT_TRAIN_ACCESS
        )

    @property
    def TRAIN_BACKEND(self) -> Any:
        """Where the hosted spec's jobs run, over the spec's own `[job] backend`: "local" or
        "ray"; None keeps the spec's (checked when the training API first answers)."""
        return getattr(settings, "ROLLOUTS_TRAIN_BACKEND", None) or None

    @property
    def TRAIN_RAY_ADDRESS(self) -> Any:
        """The Ray dashboard address (`http://HOST:8265`) over the spec's `[ray] address`."""
        return getattr(settings, "ROLLOUTS_TRAIN_RAY_ADDRESS", None) or None

    @property
    def TRAIN_FOLLOW(self) -> bool:
        """Whether the viewer's data directory follows the hosted job's rollout_result (set by
        `manage.py train`; a portal keeps its own data directories)."""
        return bool(getattr(settings, "ROLLOUTS_TRAIN_FOLLOW", False))

    @property
    def DISK_CACHE(self) -> Path | None:
        """Where per-step columns and statistics are kept between runs; None: nowhere.

        Unset means the user's cache directory; "" or False turns the disk cache off.
        """
        value = getattr(settings, "ROLLOUTS_DISK_CACHE", None)
        if value is None:
            from .store.disk import default_directory

            return default_directory()
        return Path(value).expanduser() if value else None

    @property
    def MAX_PAGE_SIZE(self) -> int:
        """The largest `page_size` the samples endpoint accepts (the original's `le=1000`)."""
        return _positive_int("ROLLOUTS_MAX_PAGE_SIZE", DEFAULT_MAX_PAGE_SIZE)

    @property
    def POLL_MS(self) -> int:
        """Milliseconds between an open page's polls for new steps (rendered as data-poll-ms)."""
        return _positive_int("ROLLOUTS_POLL_MS", DEFAULT_POLL_MS)

    @property
    def INDEX_PROCESSES(self) -> int:
        """Processes decoding a bucket's steps for its trends (1: on the server's own thread)."""
        return _positive_int("ROLLOUTS_INDEX_PROCESSES", default_index_processes())

    @property
    def SEARCH_MS(self) -> int:
        """Milliseconds one search request scans before it answers with a cursor."""
        return _positive_int("ROLLOUTS_SEARCH_MS", DEFAULT_SEARCH_MS)

    @property
    def TOKENIZER(self) -> Path | None:
        """A local tokenizer.json that shows token ids as text on the sample page (the `tokens`
        extra); None: ids and log-probs only. Never downloaded."""
        value = getattr(settings, "ROLLOUTS_TOKENIZER", None)
        return Path(value).expanduser() if value else None

    # -- TensorBoard scalars --------------------------------------------------------------
    @property
    def TENSORBOARD(self) -> Any:
        """The data directory's TensorBoard directory: unset (None) finds `tensorboard_log/` in
        or beside it; a path names it (for ROLLOUTS_DATA_DIR; a dict names one per run of
        ROLLOUTS_DATA_DIRS); "" or False: no scalars."""
        return getattr(settings, "ROLLOUTS_TENSORBOARD", None)

    @property
    def FLAGS(self) -> FlagRules:
        """The flags' thresholds: ROLLOUTS_FLAGS (a dict) over the defaults; an unusable value
        means the defaults (`checks.py` says why)."""
        try:
            return FlagRules.from_mapping(getattr(settings, "ROLLOUTS_FLAGS", None))
        except (TypeError, ValueError):
            return FlagRules()

    @property
    def KL_SCALARS(self) -> tuple[str, ...]:
        """Scalar tags read as the policy's KL by the convergence reading (the first logged)."""
        return tuple(getattr(settings, "ROLLOUTS_KL_SCALARS", DEFAULT_KL_SCALARS))

    @property
    def EXPLAINED_VARIANCE_SCALARS(self) -> tuple[str, ...]:
        """Scalar tags read as the value function's explained variance (the first logged)."""
        return tuple(getattr(settings, "ROLLOUTS_EXPLAINED_VARIANCE_SCALARS", DEFAULT_EV_SCALARS))


DEFAULT_KL_SCALARS = ("train/kl_loss", "train/approx_kl")
DEFAULT_EV_SCALARS = ("train/explained_variance",)


conf = RolloutsSettings()
