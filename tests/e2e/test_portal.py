"""The viewer mounted in a real Django portal (tests/portal: auth, sessions, SQLite), served by
gunicorn: pages, JSON, static files and links under the mount point, behind the host's login."""

from __future__ import annotations

import http.cookiejar
import json
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rollouts.demo import write_demo
from rollouts.web.access import DENIED_MESSAGE
from tests.support.servers import REPO_ROOT, child_env, free_port

pytestmark = pytest.mark.e2e

MOUNT = "/rollouts/"
PASSWORD = "correct horse battery staple"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # show the redirect itself


@dataclass
class Browser:
    """A cookie-keeping HTTP client: what a signed-in user's browser sends."""

    base: str
    jar: http.cookiejar.CookieJar

    def open(
        self,
        path: str,
        data: dict[str, str] | None = None,
        follow: bool = True,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str, dict[str, str], bytes]:
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPCookieProcessor(self.jar)]
        if not follow:
            handlers.append(NoRedirect())
        opener = urllib.request.build_opener(*handlers)
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            with opener.open(request, timeout=30) as resp:
                return resp.status, resp.url, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.url, dict(exc.headers), exc.read()

    def cookie(self, name: str) -> str:
        return next(c.value for c in self.jar if c.name == name and c.value is not None)

    def sign_in(self, username: str, next_path: str) -> tuple[int, str, dict[str, str], bytes]:
        self.open("/accounts/login/")
        return self.open(
            "/accounts/login/",
            {"username": username, "password": PASSWORD, "next": next_path,
             "csrfmiddlewaretoken": self.cookie("csrftoken")},
        )  # fmt: skip


class Urls(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        for name in ("href", "src", "action"):
            value = attr.get(name)
            if value and not value.startswith("data:"):
                self.urls.append(value)
        if tag == "option" and (attr.get("value") or "").startswith("/"):
            self.urls.append(attr["value"] or "")


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=REPO_ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def portal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example portal under gunicorn, with a migrated SQLite database and two users."""
    root = tmp_path_factory.mktemp("portal")
    env = child_env(
        {
            "DJANGO_SETTINGS_MODULE": "tests.portal.settings",
            "PORTAL_DB": str(root / "db.sqlite3"),
            "PORTAL_ROLLOUTS_DIR": str(write_demo(root / "run")),
            "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
        }
    )
    manage(env, "migrate", "--noinput")
    manage(env, "createsuperuser", "--noinput", "--username", "ada", "--email", "a@example.org")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tests.portal.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4"],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(root / "gunicorn.log").open("wb"),
        start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((root / "gunicorn.log").read_text()) from None
                time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def visitor(portal: str) -> Browser:
    return Browser(portal, http.cookiejar.CookieJar())


def test_hosts_own_page_sits_next_to_the_app(portal: str) -> None:
    status, _, _, body = visitor(portal).open("/")
    assert status == 200
    assert b"Portal home" in body


def test_signed_out_pages_redirect_to_the_hosts_login(portal: str) -> None:
    status, _, headers, _ = visitor(portal).open(MOUNT + "train/3/?sort=reward", follow=False)
    assert status == 302
    assert headers["Location"] == "/accounts/login/?next=/rollouts/train/3/%3Fsort%3Dreward"


@pytest.mark.parametrize("path", ["api/jsonl/subdirs", "api/view/train/3", "api/cache/stats"])
def test_signed_out_api_is_a_json_403(portal: str, path: str) -> None:
    status, _, headers, body = visitor(portal).open(MOUNT + path)
    assert status == 403
    assert headers["Content-Type"] == "application/json"
    assert json.loads(body)["message"] == DENIED_MESSAGE


def test_signed_in_user_sees_pages_json_and_static_files_under_the_mount(portal: str) -> None:
    user = visitor(portal)
    status, url, _, body = user.sign_in("ada", MOUNT)
    assert status == 200
    assert url == portal + MOUNT + "train/11/"  # back where the login began: the latest step
    html = body.decode()
    assert re.search(r'class="rv-position">Sample 1 of 64<', html)
    urls = sorted(set(Urls(html).urls))
    assert any(u.startswith("/static/rollouts/") for u in urls)
    for link in urls:
        if link.startswith("#"):
            continue  # a fragment (the skip link's "#rv-sample") stays on the page
        assert link.startswith(MOUNT) or link.startswith("/static/"), link
        status, _, headers, _ = user.open(link)
        assert status == 200, link
        if link.endswith(".js"):
            assert "javascript" in headers["Content-Type"]
    status, _, headers, body = user.open(MOUNT + "api/view/train/11/sample/5")
    assert status == 200
    assert json.loads(body)["urls"]["page"] == MOUNT + "train/11/sample/5/"


def test_security_headers_on_mounted_pages(portal: str) -> None:
    user = visitor(portal)
    user.sign_in("ada", MOUNT)
    _, _, headers, _ = user.open(MOUNT + "eval/8/")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "Access-Control-Allow-Origin" not in headers


def test_cache_clear_takes_a_same_origin_post_and_refuses_a_cross_site_one(portal: str) -> None:
    user = visitor(portal)
    user.sign_in("ada", MOUNT)
    own = {"Origin": portal, "Sec-Fetch-Site": "same-origin"}
    status, _, _, body = user.open(MOUNT + "api/cache/clear", data={}, headers=own)
    assert status == 200 and json.loads(body)["ok"] is True
    evil = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    status, _, _, body = user.open(MOUNT + "api/cache/clear", data={}, headers=evil)
    assert status == 403
    assert json.loads(body)["ok"] is False


def test_wrong_password_stays_signed_out(portal: str) -> None:
    user = visitor(portal)
    user.open("/accounts/login/")
    status, url, _, _ = user.open(
        "/accounts/login/",
        {"username": "ada", "password": "nope", "next": MOUNT,
         "csrfmiddlewaretoken": user.cookie("csrftoken")},
    )  # fmt: skip
    assert status == 200 and url.endswith("/accounts/login/")
    assert user.open(MOUNT + "api/jsonl/subdirs")[0] == 403


def test_no_database_file_was_written_into_the_checkout() -> None:
    assert not (Path(REPO_ROOT) / "tests" / "portal" / "portal.sqlite3").exists()
