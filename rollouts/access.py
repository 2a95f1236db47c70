"""Who may see the rollouts: one setting, `ROLLOUTS_ACCESS`, names a check `(request) -> bool`.

The standalone tool allows everyone (it binds to loopback). A host portal points the setting at
one of the checks below or at its own, e.g. `"myportal.access.can_see_rollouts"`. A denied page
request gets the host's login redirect (or a 403 page for a signed-in user without the right);
a denied API request gets a 403 in the API's JSON error shape.
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import resolve_url
from django.template.response import TemplateResponse

from .conf import conf

DENIED_MESSAGE = "you are not allowed to see these rollouts"


def allow_all(request: HttpRequest) -> bool:
    """Everyone: what `manage.py train` uses for ROLLOUTS_TRAIN_ACCESS (it binds to loopback)."""
    return True


def require_login(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def require_staff(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_active and user.is_staff)


def is_allowed(request: HttpRequest) -> bool:
    return conf.ACCESS(request)


def redirect_to_login(request: HttpRequest) -> HttpResponse:
    """The host's login page, coming back here after: what Django's own `login_required` does
    (written out because importing `django.contrib.auth.views` needs the auth app installed,
    which the standalone tool is not)."""
    parts = list(urlsplit(resolve_url(settings.LOGIN_URL)))
    query = QueryDict(parts[3], mutable=True)
    query["next"] = request.get_full_path()
    parts[3] = query.urlencode(safe="/")
    return HttpResponseRedirect(urlunsplit(parts))


def denied_page(request: HttpRequest) -> HttpResponse:
    """Send a visitor to sign in; tell a signed-in user without the right so (no login loop)."""
    if not require_login(request):
        return redirect_to_login(request)
    context = {"error": DENIED_MESSAGE}
    return TemplateResponse(request, "rollouts/sample.html", context, status=HTTPStatus.FORBIDDEN)
