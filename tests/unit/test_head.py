"""HEAD gets the GET's headers and no body (`strip_head_body`): from the app's own views, as any
site mounting it calls them, and from the standalone site's middleware. The real server's side
(gunicorn logs no "no-body response") is tests/e2e/test_head.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.template import engines
from django.template.response import TemplateResponse
from django.test import RequestFactory
from django.urls import resolve

from relax_site.middleware import HeadMiddleware
from rollouts.web.responses import strip_head_body
from tests.support.data import sample

PREFIX = "/portal/rollouts"


@pytest.fixture
def rf() -> RequestFactory:
    return RequestFactory()


def test_a_plain_response_keeps_its_length_and_loses_its_body(rf):
    response = strip_head_body(rf.head("/"), HttpResponse(b"twelve bytes"))
    assert isinstance(response, HttpResponse) and response.content == b""
    assert response["Content-Length"] == "12"
    # Twice (the view's decorator, then the site's middleware) changes nothing more.
    assert strip_head_body(rf.head("/"), response)["Content-Length"] == "12"


def test_other_methods_keep_their_body(rf):
    for request in (rf.get("/"), rf.post("/"), rf.options("/")):
        response = strip_head_body(request, HttpResponse(b"body"))
        assert isinstance(response, HttpResponse) and response.content == b"body"
        assert not response.has_header("Content-Length")


def test_a_streamed_body_is_never_produced(rf):
    produced: list[int] = []

    def chunks() -> Iterator[bytes]:
        produced.append(1)  # a 1 GB step would be read from here on
        yield b"never"

    response = strip_head_body(rf.head("/"), StreamingHttpResponse(chunks()))
    assert isinstance(response, StreamingHttpResponse)
    assert b"".join(response.streaming_content) == b""  # type: ignore[arg-type]
    response.close()
    assert produced == []


def test_a_file_response_keeps_its_length_and_closes_its_file(rf, tmp_path):
    path = tmp_path / "step.jsonl"
    path.write_bytes(b"x" * 1000)
    handle = path.open("rb")
    response = strip_head_body(rf.head("/"), FileResponse(handle))
    assert isinstance(response, FileResponse)
    assert response["Content-Length"] == "1000"
    assert response.file_to_stream is None  # the WSGI server is not handed the file to send
    assert b"".join(response.streaming_content) == b""  # type: ignore[arg-type]
    response.close()
    assert handle.closed


def test_a_page_not_rendered_yet_is_emptied_once_it_is(rf):
    template = engines["django"].from_string("<p>{{ text }}</p>")
    request = rf.head("/")
    response = strip_head_body(request, TemplateResponse(request, template, {"text": "héllo"}))
    assert isinstance(response, TemplateResponse)
    response.render()
    assert response.content == b""
    assert response["Content-Length"] == str(len("<p>héllo</p>".encode()))


def call_view(rf: RequestFactory, method: str, path: str) -> Any:
    request = rf.generic(method, PREFIX + path)
    request.resolver_match = match = resolve(PREFIX + path)
    response = match.func(request, *match.args, **match.kwargs)
    if isinstance(response, TemplateResponse):
        response.render()  # as Django's handler does after the view
    return response


def body_of(response: Any) -> bytes:
    return b"".join(response.streaming_content if response.streaming else [response.content])


@pytest.mark.parametrize(
    "path", ["/train/1/", "/api/jsonl/subdirs", "/api/jsonl/train/file/1.jsonl", "/api/nope"]
)
def test_the_apps_views_answer_head_without_a_body(rf, settings, write_step, data_dir, path):
    """The real views through their real decorators (`page`, `api`), as a portal calls them."""
    write_step("train", 1, [sample(i) for i in range(3)])
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    head, get = call_view(rf, "HEAD", path), call_view(rf, "GET", path)
    assert head.status_code == get.status_code
    assert body_of(get) != b"" and body_of(head) == b""
    if not get.streaming:  # a stream's length is not known before it is sent
        assert head["Content-Length"] == str(len(get.content))


def test_the_sites_middleware_strips_what_no_view_of_ours_answered(rf):
    def not_found(request: object) -> HttpResponse:
        return HttpResponse(b"<h1>Not Found</h1>", status=404)

    response = HeadMiddleware(not_found)(rf.head("/nowhere"))
    assert response.status_code == 404
    assert isinstance(response, HttpResponse)
    assert response.content == b"" and response["Content-Length"] == "18"
