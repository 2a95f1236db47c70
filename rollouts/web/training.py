"""Whether this site hosts a training job (`ROLLOUTS_TRAIN_SPEC`) and whether a request may drive
it (`ROLLOUTS_TRAIN_ACCESS`, after `ROLLOUTS_ACCESS`): the Training page, its API and the header's
link ask the same two questions here."""

from __future__ import annotations

from django.http import HttpRequest

from ..conf import conf
from .access import is_allowed


def training_hosted() -> bool:
    """Training hosting is on only when the setting names a spec file (`manage.py train`)."""
    return conf.TRAIN_SPEC is not None


def may_train(request: HttpRequest) -> bool:
    """The app's own check, then the training's (the API asks the same two)."""
    return training_hosted() and is_allowed(request) and bool(conf.TRAIN_ACCESS(request))
