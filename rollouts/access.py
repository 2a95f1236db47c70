"""The bundled access checks, named by dotted path in settings: `ROLLOUTS_ACCESS` (who may see
the rollouts) and `ROLLOUTS_TRAIN_ACCESS` (who may drive a hosted training run).

A check is `(request) -> bool`. The standalone tool allows everyone (it binds to loopback); a
host portal points the setting at one of these or at its own, e.g.
`"myportal.access.can_see_rollouts"`. How a request is checked, and what a denied one gets, is
`rollouts.web.access`.
"""

from __future__ import annotations

from django.http import HttpRequest


def allow_all(request: HttpRequest) -> bool:
    """Everyone: what `manage.py train` uses for ROLLOUTS_TRAIN_ACCESS (it binds to loopback)."""
    return True


def require_login(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def require_staff(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)
