"""A sample's tokens card at its own URL, which the sample page loads after it has gone out
(viewer.js): with `RV-Fragment: 1` the card alone, built from the sample's line only; without,
the sample page with the card in it, for a browser without the script and for a link."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from ..store import UnreadableLine, step_filename
from ..web import get_catalog
from .decorators import FRAGMENT_HEADER, page, render_sample_page
from .sample_extras import card_view
from .samples import sample_context


@page
def sample_tokens(request: HttpRequest, bucket: str, step: str, position: int) -> HttpResponse:
    if request.headers.get(FRAGMENT_HEADER) != "1":
        context, status = sample_context(request, bucket, step, position)
        return render_sample_page(request, context, status)
    index = get_catalog(request).open_step(bucket, step_filename(step), position + 1)
    try:
        values = index.read(position).decoded.values()
    except UnreadableLine:
        values = {}
    view = card_view(values)
    if view is None:  # no tokens (or an unreadable line): nothing to show, the page says why
        return HttpResponse(status=204)
    return TemplateResponse(request, "rollouts/_tokens.html", {"token_view": view})
