"""Every shell block of docs/getting-started.md and docs/deployment.md, run as written.

Each command runs through bash in a fresh directory (a copy of the checkout where the block
is run from one), with the checkout's venv first on PATH, as a user who followed the page has
it. Two things are swapped, and only these: the documentation's placeholder data directories
(`/path/to/save/rollout_result`, `/data/runs/grpo-7b/rollout_result`) for the demo run of the
test, and the documented ports for free ones (a server line without a port gets `--port N`).
The last command of a block that starts a server runs until the test has checked its pages,
and is then stopped by its process group.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rollouts.demo import write_demo
from tests.support.recipes import commands, recipe
from tests.support.servers import REPO_ROOT, child_env, free_port, request

pytestmark = pytest.mark.e2e

VENV = Path(sys.executable).parent.parent
PLACEHOLDERS = ("/path/to/save/rollout_result", "/data/runs/grpo-7b/rollout_result")
PORTS = re.compile(r"(--port |PORT=|127\.0\.0\.1:)(8080|8000|8036)\b")
NOT_SOURCES = (".git", ".venv", "demo-data", "test-artifacts", "build", "*.egg-info",
               "__pycache__", "dist", "runs")  # fmt: skip
START_TIMEOUT = 120.0  # seconds: `./run demo` writes three runs of 40 steps first


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = write_demo(tmp_path_factory.mktemp("save"))
    assert data.name == "rollout_result"  # what the placeholders name
    return data


def user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = child_env(extra)
    env.pop("DJANGO_SETTINGS_MODULE")  # a user's shell has none: each command picks its own
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env['PATH']}"
    return env


def as_run_here(command: str, data_dir: Path, port: int) -> str:
    for placeholder in PLACEHOLDERS:
        command = command.replace(placeholder, str(data_dir))
    swapped, count = PORTS.subn(lambda m: f"{m.group(1)}{port}", command)
    return swapped if count else f"{swapped} --port {port}"


def run(command: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{command!r} failed:\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done.stdout + done.stderr


@contextmanager
def serving(command: str, cwd: Path, env: dict[str, str], url: str) -> Iterator[Path]:
    """The server `command` starts, once `url` answers; its output is the yielded file."""
    log = cwd / f"server-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, env=env, stdout=out, stderr=out,
            start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                request(url, timeout=5)
                break
            except OSError:
                assert proc.poll() is None, f"{command!r} exited:\n{log.read_text()[-3000:]}"
                assert time.monotonic() < deadline, f"{url} never answered:\n{log.read_text()}"
                time.sleep(0.2)
        yield log
    finally:
        with_children_stopped(proc)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def with_children_stopped(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def checkout_copy(where: Path) -> Path:
    copy = where / "checkout"
    shutil.copytree(REPO_ROOT, copy, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    (copy / ".venv").symlink_to(VENV)
    return copy


def block(name: str, data_dir: Path, port: int) -> tuple[list[str], str]:
    """The block's commands to run first, and its last one (the server)."""
    *first, last = commands(recipe(name))
    return first, as_run_here(last, data_dir, port)


# -- getting started ------------------------------------------------------------------------
def require_installed_extras(*extras: str) -> None:
    """`./run` installs what is missing first; here everything must already be there (./run
    test installs these extras), or the test would download packages."""
    digest = subprocess.run(
        ["sha1sum", str(REPO_ROOT / "pyproject.toml")], capture_output=True, text=True, check=True
    ).stdout[:16]
    missing = [e for e in extras if not (VENV / f".installed-{digest}-{e}").exists()]
    if missing:
        message = f"the venv was not made by ./run with {missing}: run the suite with ./run test"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.parametrize(
    ("name", "path", "seen"),
    [
        ("demo", "/runs/", b"steady-rise"),
        ("visualize", "/train/11/", b"Sample 1 of 64"),
        ("train", "/training/", b"Training"),
    ],
)
def test_getting_started_run_commands(
    name: str, path: str, seen: bytes, tmp_path: Path, data_dir: Path
) -> None:
    require_installed_extras("tensorboard")
    checkout = checkout_copy(tmp_path)
    port = free_port()
    first, server = block(name, data_dir, port)
    assert first == []
    assert server.startswith("./run ")
    url = f"http://127.0.0.1:{port}{path}"
    with serving(server, checkout, user_env(), url):
        status, _, body = request(url)
    assert status == 200 and seen in body, body[:500]


def test_getting_started_wheel_installs_and_serves(tmp_path: Path, data_dir: Path) -> None:
    """The wheel built and installed as written, into a venv of its own. Its dependencies come
    from this venv through a .pth line, so installing downloads nothing (building the wheel
    gets setuptools from the package index, as pip's isolated build always does)."""
    checkout = checkout_copy(tmp_path)
    (checkout / ".venv").unlink()
    venv = tmp_path / "user-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    (site,) = venv.glob("lib/python3*/site-packages")
    (ours,) = VENV.glob("lib/python3*/site-packages")
    (site / "dependencies.pth").write_text(f"{ours}\n")
    env = user_env()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    port = free_port()
    first, server = block("wheel", data_dir, port)
    for command in first:
        run(command, checkout, env)
    assert server.startswith("relax-viewer ")
    url = f"http://127.0.0.1:{port}/train/11/"
    with serving(server, checkout, env, url):
        status, _, body = request(url)
        assert status == 200 and b"Sample 1 of 64" in body
        status, _, _ = request(f"http://127.0.0.1:{port}/static/rollouts/viewer.js")
        assert status == 200
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import rollouts; print(rollouts.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert where.startswith(str(site)), where  # the wheel's copy, not the checkout's


# -- deployment: mounted in a fresh startproject site ----------------------------------------
class Browser:
    """Cookies kept, redirects not followed: what a login needs to be checked step by step."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: object, **kwargs: object) -> None:
                return None

        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), NoRedirect()
        )

    def open(self, path: str, data: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        headers = {"Referer": self.base + path} if data is not None else {}
        req = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with self.opener.open(req, timeout=30) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, dict(exc.headers), exc.read()

    def cookie(self, name: str) -> str:
        return next(c.value for c in self.jar if c.name == name and c.value is not None)


def test_mount_recipe_on_a_fresh_startproject_site(tmp_path: Path, data_dir: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    env = user_env()
    for command in commands(recipe("mount-project")):
        run(command, site, env)
    settings = site / "portal" / "settings.py"
    settings.write_text(
        settings.read_text() + "\n" + as_settings(recipe("mount-settings"), data_dir)
    )
    (site / "portal" / "urls.py").write_text(recipe("mount-urls"))
    port = free_port()
    first, server = block("mount-run", data_dir, port)
    output = "".join(run(command, site, env) for command in first)
    assert "System check identified no issues" in output
    assert "rollouts.W" not in output  # `check` warns about nothing the page left out
    base = f"http://127.0.0.1:{port}"
    with serving(server, site, env, base + "/admin/login/"):
        browser = Browser(base)
        status, headers, _ = browser.open("/rollouts/train/11/")
        assert status == 302
        assert headers["Location"] == "/admin/login/?next=/rollouts/train/11/"
        status, _, form = browser.open("/admin/login/?next=/rollouts/train/11/")
        assert status == 200 and b'name="csrfmiddlewaretoken"' in form
        status, headers, _ = browser.open(
            "/admin/login/?next=/rollouts/train/11/",
            {
                "csrfmiddlewaretoken": browser.cookie("csrftoken"),
                "username": "admin",
                "password": "change-me",
                "next": "/rollouts/train/11/",
            },
        )
        assert (status, headers["Location"]) == (302, "/rollouts/train/11/")
        status, _, body = browser.open("/rollouts/train/11/")
        assert status == 200 and b"Sample 1 of 64" in body
        status, _, _ = browser.open("/static/rollouts/viewer.js")
        assert status == 200
        status, _, body = browser.open("/rollouts/api/jsonl/subdirs")
        assert status == 200 and b'"train"' in body

    # Under a prefix (a proxy strips /portal/ before the site): the login keeps it.
    settings.write_text(settings.read_text() + "\n" + recipe("mount-prefix"))
    with serving(server, site, env, base + "/admin/login/"):
        status, headers, _ = Browser(base).open("/rollouts/train/11/")
        assert status == 302
        assert headers["Location"] == "/portal/admin/login/?next=/portal/rollouts/train/11/"


def as_settings(text: str, data_dir: Path) -> str:
    for placeholder in PLACEHOLDERS:
        text = text.replace(placeholder, str(data_dir))
    return text


# -- deployment: gunicorn configured by the environment ---------------------------------------
def test_proxy_gunicorn_command_serves_under_the_prefix(tmp_path: Path, data_dir: Path) -> None:
    port = free_port()
    first, server = block("proxy-gunicorn", data_dir, port)
    assert first == []
    base = f"http://127.0.0.1:{port}"
    with serving(server, tmp_path, user_env(), base + "/absproxy/8080/api/jsonl/subdirs"):
        for path in ("/absproxy/8080/train/11/", "/train/11/"):  # both nginx styles
            status, _, body = request(base + path)
            assert status == 200 and b"Sample 1 of 64" in body
            assert b'href="/absproxy/8080/static/rollouts/' in body
        status, _, _ = request(base + "/train/11/", headers={"Host": "viewer.example.com"})
        assert status == 200
        status, _, _ = request(base + "/train/11/", headers={"Host": "elsewhere.example.com"})
        assert status == 400
