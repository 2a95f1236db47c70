"""The Training page (`training/`): the HTML shell of a hosted training job.

Everything on it comes from the training JSON API (`views/training.py`), which training.js
polls; the page carries only the API's URLs (rendered here, never spelled in a script) and the
poll interval. A 404 unless `ROLLOUTS_TRAIN_SPEC` names a spec file. Not `train/`: that is the
address of the bucket `train` (buckets are only `train`, `eval` and `default`).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from ..conf import conf
from ..store import NotFound
from ..web import denied_page, may_train, training_hosted
from .decorators import page

API_ACTIONS = ("schema", "state", "start", "pause", "resume", "stop")


@page
def training_page(request: HttpRequest) -> HttpResponse:
    if not training_hosted():
        raise NotFound("no training job is hosted here (`manage.py train SPEC.toml` hosts one)")
    if not may_train(request):
        return denied_page(request)
    context = {
        "page": "training",
        "poll_ms": conf.POLL_MS,
        "api": {action: reverse(f"rollouts:api-train-{action}") for action in API_ACTIONS},
    }
    return TemplateResponse(request, "rollouts/training.html", context)
