"""Whether this site hosts a training job (`ROLLOUTS_TRAIN_SPEC`), who may drive it
(`ROLLOUTS_TRAIN_ACCESS`), and the header's `training_url` tag: the Training link shows only
when both say yes."""

from __future__ import annotations

from typing import Any

from django import template
from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils.module_loading import import_string

from rollouts.access import is_allowed, require_staff

register = template.Library()


def training_hosted() -> bool:
    """Training hosting is on only when the setting names a spec file (`manage.py train`)."""
    return bool(getattr(settings, "ROLLOUTS_TRAIN_SPEC", None))


def may_train(request: HttpRequest) -> bool:
    """The app's own check, then the training's (a dotted path or a callable; staff by default)."""
    if not training_hosted() or not is_allowed(request):
        return False
    check: Any = getattr(settings, "ROLLOUTS_TRAIN_ACCESS", None) or require_staff
    if isinstance(check, str):
        check = import_string(check)
    return bool(check(request))


@register.simple_tag(takes_context=True)
def training_url(context: template.Context) -> str:
    """The Training page's URL for a user who may drive the job; "" otherwise (no link)."""
    request = context.get("request")
    if request is None or not may_train(request):
        return ""
    return reverse("rollouts:training")
