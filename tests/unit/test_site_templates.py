"""The site's `templates/` folder (TEMPLATES.DIRS) holds its own error pages, for what no view
of the app answers itself (an unhandled error, a request refused before any view), and is where
a deployment overrides an app template (DIRS come before the apps' folders)."""

from __future__ import annotations

import pytest
from django.core.exceptions import SuspiciousOperation
from django.template.loader import get_template
from django.test import RequestFactory
from django.views import defaults

from tests.support.servers import REPO_ROOT


def test_the_folder_the_settings_name_exists_and_comes_first(settings):
    dirs = settings.TEMPLATES[0]["DIRS"]
    assert dirs[0] == REPO_ROOT / "templates" and (REPO_ROOT / "templates").is_dir()
    origin = get_template("500.html").template.origin  # type: ignore[attr-defined]
    assert origin.name == str(REPO_ROOT / "templates" / "500.html")


def test_an_unhandled_error_gets_the_sites_page_without_any_context():
    response = defaults.server_error(RequestFactory().get("/x"))
    body = response.content.decode()
    assert response.status_code == 500
    assert "<title>Server error — Relax Rollout Viewer</title>" in body
    assert 'href="/static/rollouts/viewer.css"' in body and "{{" not in body and "{%" not in body


@pytest.mark.parametrize("secret", ["/srv/private/run-7/rollout_result/train/3.jsonl"])
def test_a_refused_request_gets_the_sites_page_and_never_the_reason(secret):
    request = RequestFactory().get("/x")
    response = defaults.bad_request(request, SuspiciousOperation(f"cannot read {secret}"))
    body = response.content.decode()
    assert response.status_code == 400 and '<h1 class="rv-page-title">Bad request</h1>' in body
    assert secret not in body and "/srv" not in body
