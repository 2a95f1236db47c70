"""Which `Host` names the viewer answers to: the guard against DNS rebinding (the standalone
site's MIDDLEWARE has it; a portal may add it too).

A page on evil.example whose name is made to resolve to this machine can make the browser send
requests here that it then treats as its own origin, reading the rollouts and clearing the
cache. Such a request carries `Host: evil.example`, so the viewer answers only to:

- the loopback names (127.0.0.1, localhost, [::1]), always;
- names in `RELAX_HOSTS` (RELAX_ALLOWED_HOSTS, `visualize --allowed-host`, and with
  `--host 0.0.0.0` the machine's own names), as Django's ALLOWED_HOSTS patterns;
- with `RELAX_ACCEPT_IP_HOSTS` (`visualize --host 0.0.0.0`), any IP address: no DNS is involved
  in reaching an address, so there is nothing to rebind.

Anything else is a 400 and one log line saying why and how to allow the name. Django's own check
(ALLOWED_HOSTS) is left open for this middleware to do the work, because it says neither.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Callable, Sequence
from http import HTTPStatus

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port, validate_host

from rollouts.web.responses import error_response

logger = logging.getLogger(__name__)

REFUSED = (
    "this viewer does not answer to the host name in this request; the server's log says"
    " which names it accepts and how to allow another one"
)
_API_PATH = re.compile(r"(^|/)api/")  # under a base path or not, and under runs/<name>/


def is_ip_literal(domain: str) -> bool:
    try:
        ipaddress.ip_address(domain.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    return True


def refusal(raw_host: str, names: Sequence[str], accept_ip: bool) -> str | None:
    """Why a request for `raw_host` (the Host header) is refused; None when it is accepted."""
    domain, _port = split_domain_port(raw_host)
    if not domain:
        return f"the Host header {raw_host!r} is missing or not a host name"
    if validate_host(domain, list(names)) or (accept_ip and is_ip_literal(domain)):
        return None
    accepted = ", ".join(names) + (", any IP address" if accept_ip else "")
    return (
        f"refused a request for host {domain!r}: not a name this viewer answers to"
        f" (it answers to {accepted}); to allow it, start visualize with"
        f" --allowed-host {domain} or add it to RELAX_ALLOWED_HOSTS"
    )


class HostCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # The raw header: Django's get_host() would apply ALLOWED_HOSTS ("*" here).
        raw = request.META.get("HTTP_HOST") or request.META.get("SERVER_NAME", "")
        why = refusal(
            raw,
            getattr(settings, "RELAX_HOSTS", ()),
            getattr(settings, "RELAX_ACCEPT_IP_HOSTS", False),
        )
        if why is not None:
            logger.warning("%s", why)
            if _API_PATH.search(request.path_info):  # every answer under api/ is JSON
                return error_response(HTTPStatus.BAD_REQUEST, REFUSED)
            body = f"Bad Request: {REFUSED}.\n"
            return HttpResponse(body, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
