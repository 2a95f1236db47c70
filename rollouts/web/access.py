"""Whether a request may see the rollouts (the check `ROLLOUTS_ACCESS` names; the bundled ones
are in `rollouts.access`), and what a denied one gets: a page request the host's login redirect
(or a 403 page for a signed-in user without the right); an API request a 403 in the API's JSON
error shape.
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.shortcuts import resolve_url
from django.template.response import TemplateResponse

from ..access import require_login
from ..conf import conf

DENIED_MESSAGE = "you are not allowed to see these rollouts"


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
