"""The app's URLs are reversed once and remembered, keyed by everything reverse() reads: the
script prefix (a proxy's base path), the request's URLconf, the run and the arguments."""

from __future__ import annotations

from django.test import RequestFactory
from django.urls import set_script_prefix, set_urlconf

from rollouts.web.links import app_url
from rollouts.web.runs import bind_run


def request(run: str | None = None):
    req = RequestFactory().get("/")
    bind_run(req, {"run": run} if run else {})
    return req


def test_the_same_url_under_two_prefixes_two_runs_and_two_urlconfs(settings):
    settings.ROOT_URLCONF = "relax_site.urls"
    try:
        set_script_prefix("/")
        plain = app_url(request(), "step", bucket="train", step="3")
        set_script_prefix("/absproxy/8080/")
        proxied = app_url(request(), "step", bucket="train", step="3")
        in_run = app_url(request("a"), "step", bucket="train", step="3")
        other_run = app_url(request("b"), "step", bucket="train", step="3")
        set_urlconf("tests.urls")  # a request's own URLconf: the app under portal/rollouts/
        in_portal = app_url(request(), "step", bucket="train", step="3")
    finally:
        set_script_prefix("/")
        set_urlconf(None)
    assert plain == "/train/3/"
    assert proxied == "/absproxy/8080/train/3/"
    assert (in_run, other_run) == (
        "/absproxy/8080/runs/a/train/3/",
        "/absproxy/8080/runs/b/train/3/",
    )
    assert in_portal == "/absproxy/8080/portal/rollouts/train/3/"
    assert (
        app_url(request(), "sample", bucket="train", step="3", position=7) == "/train/3/sample/7/"
    )
