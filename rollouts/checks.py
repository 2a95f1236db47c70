"""System checks: configuration mistakes show at start-up, not as errors on the first request."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

from .conf import conf
from .store.diskcache import DiskCache


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    warnings: list[Warning] = []
    data_dir, runs = conf.DATA_DIR, conf.DATA_DIRS
    if data_dir is None and not runs:
        warnings.append(
            Warning(
                "ROLLOUTS_DATA_DIR is not set; the viewer has nothing to show.",
                hint="Set ROLLOUTS_DATA_DIR or ROLLOUTS_DATA_DIRS (RELAX_DATA_DIR for relax_site).",
                id="rollouts.W001",
            )
        )
    named = [("ROLLOUTS_DATA_DIR", data_dir)] if data_dir is not None else []
    named += [(f"ROLLOUTS_DATA_DIRS[{name!r}]", path) for name, path in runs.items()]
    for setting, path in named:
        if not path.is_dir():
            warnings.append(Warning(f"{setting} {path} is not a directory.", id="rollouts.W001"))
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
    backend = settings.CACHES.get(conf.CACHE_ALIAS, {}).get("BACKEND", "")
    if backend != "rollouts.cache.ByteLimitedCache":
        warnings.append(
            Warning(
                f"CACHES[{conf.CACHE_ALIAS!r}] is not rollouts.cache.ByteLimitedCache; step "
                "indexes would be pickled on every request or not bounded by size.",
                id="rollouts.W002",
            )
        )
    return warnings
