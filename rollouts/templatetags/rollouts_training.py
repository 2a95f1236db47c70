"""The header's `training_url` tag: the Training link shows only when this site hosts a job and
the request may drive it (`rollouts.web`'s `may_train`)."""

from __future__ import annotations

from django import template
from django.urls import reverse

from rollouts.web import may_train

register = template.Library()


@register.simple_tag(takes_context=True)
def training_url(context: template.Context) -> str:
    """The Training page's URL for a user who may drive the job; "" otherwise (no link)."""
    request = context.get("request")
    if request is None or not may_train(request):
        return ""
    return reverse("rollouts:training")
