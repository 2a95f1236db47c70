"""Every URL the app's pages and JSON carry: reversed (never spelled), inside the request's run.

`url_maker` is the one way to build many URLs of one view: it reverses once with a placeholder
and fills it in, so a page listing 500 steps or 2,000 samples does not reverse 2,000 times, and
a URL template sent to a script (`/train/{step}/`) comes from the same place.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.translation import get_language

from ..presentation import format_bytes
from ..store import StepFile
from .runs import current_run

# Digits, so that it fits every converter a placeholder stands in for (step names, positions).
_PLACEHOLDER = "9" * 18
REVERSED_URLS = 4096  # URLs remembered (`_reversed`): a few hundred bytes each


def app_url(request: HttpRequest, name: str, **kwargs: Any) -> str:
    """The URL of one of the app's views, inside the run this request is in (if any)."""
    run = current_run(request)
    if run is not None:
        name, kwargs = f"run:{name}", {"run": run, **kwargs}
    # What else reverse() depends on: the prefix, the URLconf, the language (i18n_patterns).
    language = get_language() if settings.USE_I18N else None
    where = (get_script_prefix(), get_urlconf(), language)
    return _reversed(where, name, tuple(kwargs.items()))


@functools.lru_cache(maxsize=REVERSED_URLS)
def _reversed(where: tuple[str, Any, str | None], name: str, kwargs: tuple) -> str:
    """reverse(), remembered: a page asks for the same 20-30 URLs as the page before it, and
    every reverse() walks the URL patterns."""
    return reverse(f"rollouts:{name}", kwargs=dict(kwargs) or None)


def url_maker(request: HttpRequest, name: str, field: str, **kwargs: Any) -> Callable[[Any], str]:
    """value -> the URL of view `name` with `field` = value (and `kwargs`), reversing once."""
    head, _, tail = app_url(request, name, **kwargs, **{field: _PLACEHOLDER}).partition(
        _PLACEHOLDER
    )
    return lambda value: f"{head}{value}{tail}"


def step_url(request: HttpRequest, bucket: str, step: str) -> str:
    return app_url(request, "step", bucket=bucket, step=step)


def sample_url(request: HttpRequest, bucket: str, step: str, position: int) -> str:
    return app_url(request, "sample", bucket=bucket, step=step, position=position)


def step_entries(request: HttpRequest, bucket: str, steps: Sequence[StepFile]) -> list[dict]:
    """Steps as the step selector and the live poll list them, each with its page's URL."""
    url_of = url_maker(request, "step", "step", bucket=bucket)
    return [
        {
            "step": s.step,
            "name": s.name,
            "size": format_bytes(s.size_bytes),
            "size_bytes": s.size_bytes,
            "url": url_of(s.name),
        }
        for s in steps
    ]
