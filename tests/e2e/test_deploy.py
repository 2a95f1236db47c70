"""Deployment paths as users take them, against real servers: `manage.py visualize` (and its
flags: --host 0.0.0.0, --allowed-host, --port 0, --version) and gunicorn run from the
environment alone (RELAX_* variables, `-c python:relax_site.gunicorn_conf`)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from rollouts.demo import write_demo
from tests.support.proxy import Process, start, stopping
from tests.support.servers import (
    REPO_ROOT,
    ServerProcess,
    child_env,
    free_port,
    get_json,
    request,
    run_manage,
    run_visualize,
    start_visualize,
)
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

CONSOLE_SCRIPT = Path(sys.executable).parent / "relax-viewer"
GUNICORN = [sys.executable, "-m", "gunicorn", "-c", "python:relax_site.gunicorn_conf"]
REFUSED = "refused a request for host"


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"), train_steps=3, samples_per_step=8)


def wait_for_output(server: ServerProcess | Process, text: str, timeout: float = 10) -> None:
    wait_for(server.output, repr(text), timeout, until=lambda out: text in out)


# -- visualize: hosts ------------------------------------------------------------------------
@contextlib.contextmanager
def any_port(data_dir: Path, *args: str) -> Iterator[tuple[ServerProcess, int]]:
    """`visualize DATA_DIR ARGS --port 0`, and the port its banner says it bound."""
    server = start_visualize(data_dir, *args, port=0)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"open: +http://[^/]+:(\d+)/", server.stdout())):
            assert server.proc.poll() is None and time.monotonic() < deadline, server.output()
            time.sleep(0.05)
        port = int(found.group(1))
        server.port, server.base_url = port, f"http://127.0.0.1:{port}"
        server.wait_until_ready()
        yield server, port
    finally:
        server.stop()


def status_for_host(server: ServerProcess, host: str, path: str = "/api/jsonl/subdirs") -> int:
    return request(server.url(path), headers={"Host": host})[0]


def test_port_0_prints_the_port_bound_and_serves_there(demo_dir: Path) -> None:
    with any_port(demo_dir, "--disk-cache", "off") as (server, port):
        assert port != 0
        assert "http://127.0.0.1:0/" not in server.stdout()
        assert get_json(server.url("/api/jsonl/subdirs"))[0] == 200


def test_host_0_0_0_0_refuses_a_rebinding_name_and_says_how_to_allow_it(demo_dir: Path) -> None:
    args = ("--host", "0.0.0.0", "--allowed-host", "viewer.test", "--allowed-host", ".corp.test")
    with any_port(demo_dir, *args, "--disk-cache", "off") as (server, port):
        assert "any IP address" in server.stdout() and "viewer.test" in server.stdout()
        for host in ("127.0.0.1", "localhost", "[::1]", "10.1.2.3", "[2001:db8::1]",
                     socket.gethostname(), "viewer.test", "a.corp.test"):  # fmt: skip
            assert status_for_host(server, f"{host}:{port}") == 200, host
        status, headers, body = request(
            server.url("/train/2/"), headers={"Host": f"rebind.evil.test:{port}"}
        )
        assert status == 400 and b"does not answer to the host name" in body
        assert headers["content-type"].startswith("text/plain")
        status, body = get_json(
            server.url("/api/jsonl/subdirs"), headers={"Host": f"rebind.evil.test:{port}"}
        )  # under api/, the JSON error shape
        assert status == 400 and body["ok"] is False and "host name" in body["message"]
        wait_for_output(server, REFUSED)
        log = server.output()
        assert f"{REFUSED} 'rebind.evil.test'" in log
        assert "--allowed-host rebind.evil.test" in log and "RELAX_ALLOWED_HOSTS" in log
        # Nor can a rebinding page clear the cache, or read a page.
        clear = request(
            server.url("/api/cache/clear"),
            method="POST",
            headers={"Host": "rebind.evil.test", "Origin": "http://rebind.evil.test"},
        )
        assert clear[0] == 400
        assert status_for_host(server, "rebind.evil.test", "/train/2/") == 400


def test_loopback_default_refuses_other_names_too(demo_dir: Path) -> None:
    with run_visualize(demo_dir, "--disk-cache", "off") as server:
        assert status_for_host(server, f"localhost:{server.port}") == 200
        assert status_for_host(server, "10.1.2.3") == 400  # no --host 0.0.0.0: names only
        assert status_for_host(server, "evil.test") == 400
        wait_for_output(server, REFUSED)
        assert f"{REFUSED} 'evil.test'" in server.output()


def test_a_bad_allowed_host_is_one_line(demo_dir: Path) -> None:
    result = run_manage("visualize", str(demo_dir), "--allowed-host", "http://x.test/")
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [
        "CommandError: --allowed-host 'http://x.test/' is not a host name (no scheme, port or path)"
    ]


# -- visualize: pages and the API on the real server -----------------------------------------
def test_writes_to_pages_are_405_with_allow_and_unknown_paths_answer_in_kind(
    demo_dir: Path,
) -> None:
    with run_visualize(demo_dir, "--disk-cache", "off") as server:
        for path in ("/", "/train/", "/train/2/", "/train/2/sample/0/", "/train/trends/"):
            for method in ("POST", "PUT", "DELETE"):
                status, headers, _ = request(server.url(path), method=method, data=b"x=1")
                assert (status, headers.get("allow")) == (405, "GET, HEAD"), (method, path)
        status, headers, body = request(server.url("/train/abc/"))
        assert status == 404 and b'class="rv-error" role="alert"' in body
        assert b"no page &#x27;abc/&#x27;" in body
        assert get_json(server.url("/api/nope/deeper"))[0] == 404


def test_a_data_dir_removed_under_the_server_is_503_everywhere(tmp_path: Path) -> None:
    data = write_demo(tmp_path / "run", train_steps=2, samples_per_step=4)
    with run_visualize(data, "--disk-cache", "off") as server:
        assert get_json(server.url("/api/jsonl/subdirs"))[1]["subdirs"] == ["train", "eval"]
        shutil.rmtree(data)
        status, body = get_json(server.url("/api/jsonl/subdirs"))
        assert status == 503 and "is missing or cannot be read" in body["message"]
        assert str(tmp_path) not in body["message"]
        status, _, page = request(server.url("/train/1/"))
        assert status == 503 and b"is missing or cannot be read" in page
        assert str(tmp_path).encode() not in page


def test_several_runs_every_api_path_is_json(tmp_path: Path) -> None:
    a = write_demo(tmp_path / "a", train_steps=2, samples_per_step=4)
    b = write_demo(tmp_path / "b", train_steps=2, samples_per_step=4)
    with run_visualize(a, str(b), "--disk-cache", "off") as server:
        for path in ("/runs/a/api/nope", "/runs/b/api/jsonl/train/nope/x", "/runs/zz/api/x"):
            status, body = get_json(server.url(path))
            assert status == 404 and body["ok"] is False, path
        status, _, page = request(server.url("/runs/a/train/abc/"))
        assert status == 404 and b'class="rv-error" role="alert"' in page


# -- visualize: the command line -------------------------------------------------------------
def test_version_is_the_packages_and_usage_reads_as_typed() -> None:
    from importlib.metadata import version

    result = run_manage("visualize", "--version")
    assert result.stdout.strip() == version("relax-rollout-viewer")
    assert run_manage("visualize", "--help").stdout.startswith("usage: manage.py visualize [-h]")

    def script(*args: str) -> str:
        return subprocess.run(
            [str(CONSOLE_SCRIPT), *args], env=child_env(), capture_output=True, text=True,
            timeout=60, check=False,
        ).stdout  # fmt: skip

    assert script("--version").strip() == version("relax-rollout-viewer")
    # The manage.py spelling, "relax-viewer visualize DATA_DIR", works as well.
    missing = subprocess.run(
        [str(CONSOLE_SCRIPT), "visualize", "/no/such/dir"], env=child_env(), capture_output=True,
        text=True, timeout=60, check=False,
    )  # fmt: skip
    assert missing.stderr.strip() == "CommandError: DATA_DIR /no/such/dir does not exist"
    usage = script("--help")
    assert usage.startswith("usage: relax-viewer [-h]"), usage[:200]


@pytest.mark.parametrize("raw", ["-1", "abc"])
def test_a_bad_environment_variable_stops_visualize_with_one_line(demo_dir: Path, raw) -> None:
    result = run_manage("visualize", str(demo_dir), env={"RELAX_CACHE_MEMORY_MB": raw})
    assert result.returncode == 3
    assert result.stderr.strip().splitlines() == [
        f"relax-viewer: RELAX_CACHE_MEMORY_MB={raw!r} is not usable: RELAX_CACHE_MEMORY_MB takes"
        " a whole number of MB, at least 1 (default 4096)"
    ]
    assert "open:" not in result.stdout


# -- gunicorn from the environment -----------------------------------------------------------
def gunicorn_env(**relax: str) -> dict[str, str]:
    env = child_env(relax)
    for name in ("PORT", "GUNICORN_CMD_ARGS", "SCRIPT_NAME", "FORWARDED_ALLOW_IPS"):
        env.pop(name, None)
    return env


@contextlib.contextmanager
def run_gunicorn(tmp_path: Path, argv: list[str], env: Mapping[str, str]) -> Iterator[Process]:
    port = free_port()
    server = start(
        "gunicorn",
        argv,
        port=port,
        log_dir=tmp_path / f"gunicorn-{port}",
        stop_signal=signal.SIGTERM,
        env={**env, "PORT": str(port)},
    )
    with stopping(server):
        server.wait_until_answers("/api/jsonl/subdirs")
        yield server


def fetch(server: Process, path: str, **kwargs) -> tuple[int, dict[str, str], bytes]:
    return request(f"http://127.0.0.1:{server.port}{path}", **kwargs)


def test_allowed_hosts_keep_loopback_and_the_log_says_why_a_host_is_refused(
    demo_dir: Path, tmp_path: Path
) -> None:
    env = gunicorn_env(RELAX_DATA_DIR=str(demo_dir), RELAX_ALLOWED_HOSTS="viewer.example.com")
    with run_gunicorn(tmp_path, [*GUNICORN, "relax_site.wsgi"], env) as server:
        assert fetch(server, "/api/jsonl/subdirs")[0] == 200  # curl 127.0.0.1 keeps working
        assert fetch(server, "/train/2/", headers={"Host": "localhost"})[0] == 200
        assert fetch(server, "/train/2/", headers={"Host": "viewer.example.com"})[0] == 200
        status, _, body = fetch(server, "/train/2/", headers={"Host": "other.example.com"})
        assert status == 400 and b"does not answer to the host name" in body
        wait_for_output(server, REFUSED)
        assert f"{REFUSED} 'other.example.com'" in server.output()
        assert "RELAX_ALLOWED_HOSTS" in server.output()


def test_relax_data_dirs_serves_several_runs_under_gunicorn(tmp_path: Path) -> None:
    a = write_demo(tmp_path / "alpha", train_steps=2, samples_per_step=4)
    b = write_demo(tmp_path / "beta", train_steps=3, samples_per_step=6)
    env = gunicorn_env(RELAX_DATA_DIRS=os.pathsep.join([f"first={a}", str(b)]))
    assert b.name == "rollout_result"  # named by the folder above it
    with run_gunicorn(tmp_path, [*GUNICORN, "relax_site.wsgi"], env) as server:
        status, _, body = fetch(server, "/")
        assert status == 200
        names = re.findall(r'<a class="rv-run" href="/runs/([^/]+)/">', body.decode())
        assert names == ["first", "beta"]
        status, _, _ = fetch(server, "/runs/first/train/1/")
        assert status == 200
        status, _, raw = fetch(server, "/runs/beta/api/jsonl/train/steps")
        assert status == 200 and json.loads(raw)["total"] == 3
        status, _, raw = fetch(server, "/runs/beta/api/nope")
        assert status == 404 and json.loads(raw)["ok"] is False


def test_a_folder_of_runs_indexed_on_the_pool_leaves_no_process_behind(tmp_path: Path) -> None:
    # Runs of more steps than POOL_MIN_STEPS: the picker's indexing starts the pool's processes
    # (and multiprocessing's semaphore tracker beside them); stopped at once, the worker must
    # reap them all, or they outlive it as zombies (run_gunicorn fails on any left behind).
    for name in ("a", "b", "c"):
        write_demo(tmp_path / "runs" / name, train_steps=12, samples_per_step=4)
    env = gunicorn_env(RELAX_RUNS_DIR=str(tmp_path / "runs"), RELAX_INDEX_PROCESSES="2")
    with run_gunicorn(tmp_path, [*GUNICORN, "relax_site.wsgi"], env) as server:
        status, _, body = fetch(server, "/")
        assert status == 200 and body.count(b'class="rv-run"') == 3
        wait_for(
            lambda: json.loads(fetch(server, "/api/runs")[2]),
            "the runs read on the pool",
            60,
            until=lambda answer: answer["done"],
        )


def test_a_missing_data_dir_under_gunicorn_is_503_not_a_made_up_bucket(tmp_path: Path) -> None:
    env = gunicorn_env(RELAX_DATA_DIR=str(tmp_path / "not-yet"))
    with run_gunicorn(tmp_path, [*GUNICORN, "relax_site.wsgi"], env) as server:
        for path in ("/api/jsonl/subdirs", "/api/jsonl/default/steps", "/api/jsonl/train/trends"):
            status, _, body = fetch(server, path)
            assert status == 503 and b"'not-yet' is missing or cannot be read" in body, path
            assert str(tmp_path).encode() not in body
        for path in ("/", "/train/", "/default/3/"):
            status, _, body = fetch(server, path)
            assert status == 503 and b'class="rv-error" role="alert"' in body, path


@pytest.mark.parametrize(
    ("name", "raw"),
    [("RELAX_CACHE_MEMORY_MB", "-1"), ("RELAX_CACHE_MEMORY_MB", "abc"),
     ("RELAX_CACHE_ENTRIES", "0"), ("RELAX_POLL_MS", "fast"), ("RELAX_MASK_STR", "(["),
     ("RELAX_ALLOWED_HOSTS", "https://viewer.example.com"), ("RELAX_DEBUG", "true")],
)  # fmt: skip
@pytest.mark.parametrize("config", [True, False], ids=["gunicorn_conf", "bare"])
def test_a_bad_variable_stops_gunicorn_with_one_line(
    tmp_path: Path, name: str, raw: str, config: bool
) -> None:
    """With the config module, before any worker; bare (`gunicorn relax_site.wsgi`), the worker
    says it and exits 3, which stops gunicorn instead of restarting the worker forever."""
    port = free_port()
    env = {**gunicorn_env(RELAX_DATA_DIR=str(tmp_path)), name: raw}
    if config:
        argv = [*GUNICORN, "relax_site.wsgi"]
        env["PORT"] = str(port)
    else:
        argv = [sys.executable, "-m", "gunicorn", "-b", f"127.0.0.1:{port}", "relax_site.wsgi"]
    result = subprocess.run(
        argv, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    line = f"{name}={raw!r} is not usable: {name} takes"
    assert [text for text in output.splitlines() if line in text], output
    assert "Traceback" not in output
    if config:
        assert result.stderr.strip().splitlines() == [
            next(t for t in output.splitlines() if line in t)
        ]
