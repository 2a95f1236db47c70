"""System checks: configuration mistakes show at start-up, not as errors on the first request."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

from .conf import conf


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    warnings: list[Warning] = []
    data_dir = conf.DATA_DIR
    if data_dir is None:
        warnings.append(
            Warning(
                "ROLLOUTS_DATA_DIR is not set; the viewer has nothing to show.",
                hint="Set ROLLOUTS_DATA_DIR (or RELAX_DATA_DIR for relax_site).",
                id="rollouts.W001",
            )
        )
    elif not data_dir.is_dir():
        warnings.append(
            Warning(
                f"ROLLOUTS_DATA_DIR {data_dir} is not a directory.",
                id="rollouts.W001",
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
