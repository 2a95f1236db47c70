"""System checks: configuration mistakes show at start-up, not as errors on the first request.

One id per condition:

- rollouts.W001  no data directory is configured (neither ROLLOUTS_DATA_DIR nor _DATA_DIRS)
- rollouts.W002  the cache alias is not a ByteLimitedCache
- rollouts.W003  the disk cache lies inside a data directory (it is then off for that one)
- rollouts.W004  a configured data directory is not a directory
- rollouts.W005  an integer setting is not an integer or below its least (its default is used)
- rollouts.W006  someone else could write the disk cache directory (it is then off)
- rollouts.W007  an access check setting names nothing usable (everyone is then denied)
- rollouts.W008  ROLLOUTS_TRAIN_SPEC cannot be read or is not a valid job spec (with the
                 backend settings over it)
- rollouts.W009  the hosted spec runs on Ray and Ray is not installed
- rollouts.W010  TensorBoard event files are configured or found, and the tensorboard package
                 is not installed (the viewer works without their scalars)
- rollouts.W011  ROLLOUTS_TENSORBOARD names a directory that is not there, or is not a path,
                 "off" or a dict of run names
- rollouts.W016  ROLLOUTS_TOKENIZER cannot be used (no `tokenizers` package, or a file it
                 cannot read): token ids are then shown without their text
- rollouts.W017  ROLLOUTS_FLAGS is not a dict of known thresholds of usable values (the
                 flags then use their defaults)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

from .conf import DEFAULT_TRAIN_ACCESS, INTEGER_SETTINGS, access_problem, conf, parse_positive_int
from .store import FlagRules
from .store.disk import DiskCache
from .training import SpecError, load_spec
from .training.backends import unavailable, with_backend
from .web import INSTALL_TOKENS, tokenizer_problem


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    warnings: list[Warning] = []
    data_dir, runs, runs_dir = conf.DATA_DIR, conf.DATA_DIRS, conf.RUNS_DIR
    if data_dir is None and not runs and runs_dir is None:
        warnings.append(
            Warning(
                "ROLLOUTS_DATA_DIR is not set; the viewer has nothing to show.",
                hint="Set ROLLOUTS_DATA_DIR, ROLLOUTS_DATA_DIRS or ROLLOUTS_RUNS_DIR"
                " (RELAX_DATA_DIR for relax_site).",
                id="rollouts.W001",
            )
        )
    named = [("ROLLOUTS_DATA_DIR", data_dir)] if data_dir is not None else []
    named += [(f"ROLLOUTS_DATA_DIRS[{name!r}]", path) for name, path in runs.items()]
    named += [("ROLLOUTS_RUNS_DIR", runs_dir)] if runs_dir is not None else []
    for setting, path in named:
        if not path.is_dir():
            warnings.append(Warning(f"{setting} {path} is not a directory.", id="rollouts.W004"))
    disk = conf.DISK_CACHE
    for setting, path in named:
        if disk is not None and path.is_dir() and DiskCache(disk).refuses(path):
            warnings.append(
                Warning(
                    f"ROLLOUTS_DISK_CACHE {disk} is inside {setting}; the data directory is "
                    "never written, so the disk cache is off for it.",
                    hint="Point ROLLOUTS_DISK_CACHE somewhere else (the default is the user's "
                    "cache directory).",
                    id="rollouts.W003",
                )
            )
    why = DiskCache(disk).untrusted() if disk is not None else None
    if why is not None:
        warnings.append(
            Warning(
                f"ROLLOUTS_DISK_CACHE {disk} is not used: {why}.",
                hint="Entries there could be planted by someone else. Use a directory only "
                "you can write (chmod go-w), or leave the setting unset.",
                id="rollouts.W006",
            )
        )
    caches_setting: dict[str, dict[str, Any]] = getattr(settings, "CACHES", {})
    cache_settings = caches_setting.get(conf.CACHE_ALIAS, {})
    if cache_settings.get("BACKEND", "") != "rollouts.cache.ByteLimitedCache":
        warnings.append(
            Warning(
                f"CACHES[{conf.CACHE_ALIAS!r}] is not rollouts.cache.ByteLimitedCache; step "
                "indexes would be pickled on every request or not bounded by size.",
                id="rollouts.W002",
            )
        )
    for name, minimum in INTEGER_SETTINGS.items():
        raw = getattr(settings, name, None)
        if raw is not None and raw != "" and parse_positive_int(raw, minimum) is None:
            warnings.append(
                Warning(
                    f"{name} must be an integer of at least {minimum}, got {raw!r}; using its"
                    " default.",
                    id="rollouts.W005",
                )
            )
    return (
        warnings
        + _flag_warnings()
        + _access_warnings()
        + _training_warnings()
        + _tokenizer_warnings()
        + _tensorboard_warnings()
    )


def _flag_warnings() -> list[Warning]:
    raw = getattr(settings, "ROLLOUTS_FLAGS", None)
    try:
        FlagRules.from_mapping(raw)
    except (TypeError, ValueError) as exc:
        return [
            Warning(
                f"ROLLOUTS_FLAGS is not used ({exc}); the flags use their default thresholds.",
                hint="See the flags' thresholds in docs/reference/settings.md.",
                id="rollouts.W017",
            )
        ]
    return []


def _access_warnings() -> list[Warning]:
    named = [("ROLLOUTS_ACCESS", getattr(settings, "ROLLOUTS_ACCESS", None))]
    if conf.TRAIN_SPEC is not None:
        train = getattr(settings, "ROLLOUTS_TRAIN_ACCESS", None) or DEFAULT_TRAIN_ACCESS
        named.append(("ROLLOUTS_TRAIN_ACCESS", train))
    return [
        Warning(
            f"{name}: {problem}; everyone is denied until it names a check.",
            hint="A callable (request) -> bool or its dotted path, e.g. "
            "'rollouts.access.require_staff'.",
            id="rollouts.W007",
        )
        for name, value in named
        if value is not None and (problem := access_problem(value)) is not None
    ]


def _training_warnings() -> list[Warning]:
    spec = conf.TRAIN_SPEC
    if spec is None:
        return []
    try:
        hosted = with_backend(load_spec(spec), conf.TRAIN_BACKEND, conf.TRAIN_RAY_ADDRESS)
    except SpecError as exc:
        return [
            Warning(
                f"ROLLOUTS_TRAIN_SPEC: {exc}; the training API answers 503 until it is fixed.",
                hint="`manage.py train SPEC --print-schema` checks a spec; ROLLOUTS_TRAIN_BACKEND "
                "and ROLLOUTS_TRAIN_RAY_ADDRESS override its backend.",
                id="rollouts.W008",
            )
        ]
    missing = unavailable(hosted.backend)  # (only Ray can be: an optional extra)
    if missing is not None:
        return [
            Warning(
                f"ROLLOUTS_TRAIN_SPEC runs its jobs on Ray, which is not installed: {missing}",
                id="rollouts.W009",
            )
        ]
    return []


def _tokenizer_warnings() -> list[Warning]:
    path = conf.TOKENIZER
    problem = tokenizer_problem(path) if path is not None else None
    if problem is None:
        return []
    return [
        Warning(
            f"ROLLOUTS_TOKENIZER: {problem}; token ids are shown without their text.",
            hint=f"Point it at a local tokenizer.json; {INSTALL_TOKENS}.",
            id="rollouts.W016",
        )
    ]


def _tensorboard_warnings() -> list[Warning]:
    """The TensorBoard scalars: a named directory that is missing, a package that is."""
    from .store.scalars import INSTALL_HINT, find_tensorboard, tensorboard_available
    from .web import OFF_VALUES, configured_dir

    setting = conf.TENSORBOARD
    if setting is not None and not isinstance(setting, str | Path | dict | bool):
        return [
            Warning(
                f"ROLLOUTS_TENSORBOARD must be a directory, 'off' or a dict of run names to "
                f"directories, got {setting!r}; no scalars are read.",
                id="rollouts.W011",
            )
        ]
    warnings: list[Warning] = []
    named: list[tuple[str | None, Path]] = [(None, conf.DATA_DIR)] if conf.DATA_DIR else []
    named += list(conf.DATA_DIRS.items())
    found = False
    for run, data_dir in named:
        configured = configured_dir(run)
        if configured is False or setting in OFF_VALUES:
            continue
        if isinstance(configured, Path) and not configured.expanduser().is_dir():
            where = "" if run is None else f"[{run!r}]"
            warnings.append(
                Warning(
                    f"ROLLOUTS_TENSORBOARD{where} {configured} is not a directory; no scalars "
                    "are read for it.",
                    id="rollouts.W011",
                )
            )
            continue
        try:
            root = data_dir.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        named_dir = configured if isinstance(configured, Path) else None
        found = found or find_tensorboard(root, named_dir) is not None
    if found and not tensorboard_available():
        warnings.append(
            Warning(
                f"TensorBoard event files are there but cannot be read. {INSTALL_HINT}",
                hint="The viewer works without them; the trends show no scalars.",
                id="rollouts.W010",
            )
        )
    return warnings
