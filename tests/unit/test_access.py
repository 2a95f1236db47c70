"""ROLLOUTS_ACCESS: one setting decides who may see the data, for pages and API alike."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from django.core.cache import caches
from django.template.response import TemplateResponse
from django.test import RequestFactory

from rollouts import access
from rollouts.views import samples
from rollouts.web import DENIED_MESSAGE
from tests.support.data import sample

PREFIX = "/portal/rollouts"


def deny(request) -> bool:
    return False


def allow_with_header(request) -> bool:
    return request.headers.get("X-Team") == "rl"


@pytest.fixture(autouse=True)
def _app(settings, data_dir, write_step):
    settings.ROLLOUTS_DATA_DIR = str(data_dir)
    settings.LOGIN_URL = "/accounts/login/"
    write_step("train", 0, [sample(0)])
    caches["rollouts"].clear()


def test_everyone_is_allowed_by_default(client):
    assert client.get(PREFIX + "/train/0/").status_code == 200
    assert client.get(PREFIX + "/api/jsonl/subdirs").status_code == 200


def test_denied_visitor_is_sent_to_the_hosts_login_page(client, settings):
    settings.ROLLOUTS_ACCESS = deny
    response = client.get(PREFIX + "/train/0/sample/0/?sort=reward")
    assert response.status_code == 302
    assert response["Location"] == (
        "/accounts/login/?next=/portal/rollouts/train/0/sample/0/%3Fsort%3Dreward"
    )


@pytest.mark.parametrize(
    "path", ["/api/jsonl/subdirs", "/api/jsonl/train/file/0.jsonl/sample/0", "/api/view/train/0"]
)
def test_denied_api_request_is_a_json_403(client, settings, path):
    settings.ROLLOUTS_ACCESS = deny
    response = client.get(PREFIX + path)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body == {
        "ok": False,
        "status": 403,
        "error": "Forbidden",
        "message": DENIED_MESSAGE,
    }


def test_the_check_can_be_named_by_its_dotted_path(client, settings):
    settings.ROLLOUTS_ACCESS = "tests.unit.test_access.allow_with_header"
    assert client.get(PREFIX + "/api/jsonl/subdirs").status_code == 403
    assert client.get(PREFIX + "/api/jsonl/subdirs", headers={"X-Team": "rl"}).status_code == 200
    assert client.get(PREFIX + "/train/0/", headers={"X-Team": "rl"}).status_code == 200


def test_signed_in_user_without_the_right_gets_a_403_page_not_a_login_loop(settings):
    settings.ROLLOUTS_ACCESS = "rollouts.access.require_staff"
    request = RequestFactory().get(PREFIX + "/train/0/")
    request.user = SimpleNamespace(  # type: ignore[assignment]
        is_authenticated=True, is_active=True, is_staff=False
    )
    response = samples.step_page(request, bucket="train", step="0")
    assert isinstance(response, TemplateResponse)
    response.render()
    assert response.status_code == 403
    assert DENIED_MESSAGE in response.content.decode()
    assert "Content-Security-Policy" in response


@pytest.mark.parametrize(
    ("user", "login", "staff"),
    [
        (None, False, False),
        (SimpleNamespace(is_authenticated=False, is_active=False, is_staff=False), False, False),
        (SimpleNamespace(is_authenticated=True, is_active=True, is_staff=False), True, False),
        (SimpleNamespace(is_authenticated=True, is_active=False, is_staff=True), True, False),
        (SimpleNamespace(is_authenticated=True, is_active=True, is_staff=True), True, True),
    ],
)
def test_bundled_checks(user, login, staff):
    request = RequestFactory().get("/")
    if user is not None:
        request.user = user
    assert access.require_login(request) is login
    assert access.require_staff(request) is staff


NOT_A_CHECK = 42  # a module attribute that is not callable


@pytest.mark.parametrize(
    "setting",
    [
        "no.such.module.check",
        "rollouts.access.no_such_check",
        "not a dotted path",
        "tests.unit.test_access.NOT_A_CHECK",
        True,
    ],
)
def test_an_unusable_check_denies_everyone_and_is_reported_at_start_up(client, settings, setting):
    from rollouts.checks import check_settings

    settings.ROLLOUTS_ACCESS = setting
    warnings = [w for w in check_settings() if w.id == "rollouts.W007"]
    assert len(warnings) == 1 and "ROLLOUTS_ACCESS" in warnings[0].msg
    api = client.get(PREFIX + "/api/jsonl/subdirs")
    assert api.status_code == 403 and json.loads(api.content)["message"] == DENIED_MESSAGE
    assert client.get(PREFIX + "/train/0/").status_code == 302  # to sign in, not a 500


def test_a_usable_check_is_not_reported(settings):
    from rollouts.checks import check_settings

    settings.ROLLOUTS_ACCESS = "tests.unit.test_access.allow_with_header"
    assert [w.id for w in check_settings() if w.id == "rollouts.W007"] == []
