"""Whether this site hosts a training job (`ROLLOUTS_TRAIN_SPEC`) and may this request drive it
(`ROLLOUTS_TRAIN_ACCESS`, after `ROLLOUTS_ACCESS`), and the header's `training_url` tag: the
Training link shows only when both say yes."""

from __future__ import annotations

from django import template
from django.http import HttpRequest
from django.urls import reverse

from rollouts.access import is_allowed
from rollouts.conf import conf

register = template.Library()


def training_hosted() -> bool:
    """Training hosting is on only when the setting names a spec file (`manage.py train`)."""
    return conf.TRAIN_SPEC is not None


def may_train(request: HttpRequest) -> bool:
    """The app's own check, then the training's (the API asks the same two)."""
    return training_hosted() and is_allowed(request) and bool(conf.TRAIN_ACCESS(request))


@register.simple_tag(takes_context=True)
def training_url(context: template.Context) -> str:
    """The Training page's URL for a user who may drive the job; "" otherwise (no link)."""
    request = context.get("request")
    if request is None or not may_train(request):
        return ""
    return reverse("rollouts:training")
