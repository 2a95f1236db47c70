"""Slow and silent clients cannot hold the viewer (issue 26, item 2), against the real servers:
`manage.py visualize`, `gunicorn -c python:relax_site.gunicorn_conf relax_site.wsgi` and
`manage.py train`.

Before: 8 sockets sending a header a byte at a time held gunicorn's 8 threads for as long as they
liked (a request waited over 130 s), and 30 idle sockets delayed a request by 14 s. The one
timing bound asserted is the issue's own: a request is answered within `BOUND` (1 s; a normal
one takes a few milliseconds here, so the margin is wide even on a loaded machine). Every
request is given up after `GIVE_UP` seconds, so a regression fails instead of hanging.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollouts.demo import write_demo
from rollouts.server_worker import REQUEST_TIMEOUT
from tests.support.proxy import start
from tests.support.servers import (
    LOOPBACK,
    child_env,
    free_port,
    get_json,
    run_visualize,
)
from tests.support.slow_clients import held_open, timed_get
from tests.support.training import until, write_fake_spec

pytestmark = pytest.mark.e2e

SLOW, IDLE = 8, 30  # the figures
BOUND = 1.0  # seconds: the bound on a request's delay
GIVE_UP = 10.0  # seconds before a request counts as not answered
REQUESTS = 15  # normal requests per case, PAUSE apart: the slow clients trickle meanwhile
PAUSE = 0.2
SAMPLE = "/api/jsonl/train/file/0.jsonl/sample/0"
GUNICORN = [sys.executable, "-m", "gunicorn", "-c", "python:relax_site.gunicorn_conf"]


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"), train_steps=2, samples_per_step=8)


@contextlib.contextmanager
def gunicorn_conf(data_dir: Path, log_dir: Path) -> Iterator[str]:
    """gunicorn from the config module, configured by the environment alone."""
    port = free_port()
    env = child_env({"RELAX_DATA_DIR": str(data_dir), "PORT": str(port)})
    for name in ("GUNICORN_CMD_ARGS", "SCRIPT_NAME", "FORWARDED_ALLOW_IPS"):
        env.pop(name, None)  # a developer's shell must not change what is tested
    server = start(
        "gunicorn",
        [*GUNICORN, "relax_site.wsgi"],
        port=port,
        log_dir=log_dir,
        stop_signal=signal.SIGTERM,
        env=env,
    )
    try:
        server.wait_until_answers("/api/jsonl/subdirs")
        yield f"http://{LOOPBACK}:{port}"
    finally:
        server.stop()


@pytest.fixture(scope="module", params=["visualize", "gunicorn_conf"])
def base_url(
    request: pytest.FixtureRequest, demo_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "visualize":
        with run_visualize(demo_dir, "--disk-cache", "off") as server:
            yield server.base_url
    else:
        with gunicorn_conf(demo_dir, tmp_path_factory.mktemp("gunicorn")) as url:
            yield url


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def assert_answered_in_time(url: str) -> None:
    for _ in range(REQUESTS):
        took, status = timed_get(url, GIVE_UP)
        assert status == 200, f"no answer within {GIVE_UP:g} s" if status is None else status
        assert took < BOUND, f"{took:.2f} s"
        time.sleep(PAUSE)


@pytest.mark.parametrize(
    ("slow", "idle"),
    [(SLOW, 0), (0, IDLE), (SLOW, IDLE)],
    ids=["8-partial-headers", "30-idle-sockets", "both"],
)
def test_slow_and_idle_clients_do_not_delay_a_request(base_url: str, slow: int, idle: int) -> None:
    with held_open(port_of(base_url), slow=slow, idle=idle, trickle=1.0) as clients:
        assert_answered_in_time(base_url + SAMPLE)
        assert clients.open_count() == slow + idle  # they were there all along


def test_many_more_slow_and_idle_clients_do_not_delay_a_request(base_url: str) -> None:
    """Not a matter of having more threads than attackers: 64 threads fail at 100 + 300."""
    with held_open(port_of(base_url), slow=100, idle=300, trickle=1.0):
        assert_answered_in_time(base_url + SAMPLE)


def test_a_request_too_slow_to_arrive_gets_a_408_and_a_silent_one_is_closed(
    base_url: str,
) -> None:
    with held_open(port_of(base_url), slow=2, idle=2, trickle=1.0) as clients:
        endings = clients.endings(timeout=REQUEST_TIMEOUT + 5)  # the sweep runs every second
    slow, idle = endings[:2], endings[2:]
    for ending in slow:
        assert ending is not None and ending.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert idle == [b"", b""]  # nothing was asked, so nothing is answered


def raw_exchange(url: str, pieces: list[bytes], pause: float = 0.3) -> bytes:
    """Send `pieces` on one connection, `pause` apart, then read until the server closes."""
    with socket.create_connection((LOOPBACK, port_of(url)), timeout=GIVE_UP) as sock:
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(pause)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_a_request_sent_in_pieces_within_the_timeout_is_answered(base_url: str) -> None:
    head = f"GET {SAMPLE} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    answer = raw_exchange(base_url, [head[:5], head[5:30], head[30:-2], head[-2:]])
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    # a small body, read ahead with its header
    post = b"POST /api/cache/clear HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    answer = raw_exchange(base_url, [post + b"Content-Length: 2\r\n\r\n", b"{", b"}"])
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")


def test_pipelined_and_kept_alive_requests_are_all_answered(base_url: str) -> None:
    one = f"GET {SAMPLE} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    last = one.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n")
    # two requests in one packet, then a third on the kept-alive connection, in pieces
    answer = raw_exchange(base_url, [one + one, last[:20], last[20:]])
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 3


def test_a_header_over_64_kib_gets_a_431(base_url: str) -> None:
    head = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (65 * 1024)
    assert raw_exchange(base_url, [head]).startswith(b"HTTP/1.1 431 ")


def test_a_stop_is_not_held_up_by_slow_clients(demo_dir: Path) -> None:
    with run_visualize(demo_dir, "--disk-cache", "off") as server:
        with held_open(server.port, slow=SLOW, idle=IDLE, trickle=1.0):
            assert server.stop() == 0
        assert not server.killed  # SIGTERM was enough, well within the 10 s before SIGKILL


def test_train_serves_and_stops_with_the_same_protections(tmp_path: Path) -> None:
    """`manage.py train` serves through the same worker: its API answers while slow and idle
    clients are open, and Ctrl+C still stops the job first, then the server, promptly."""
    spec = write_fake_spec(tmp_path)
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(spec, "--no-browser", launcher=launcher) as server:
        with held_open(server.port, slow=SLOW, idle=IDLE, trickle=1.0):
            status, started = get_json(
                server.url("/api/train/start"), method="POST", data=b"{}", timeout=GIVE_UP
            )
            assert status == 200
            until(lambda: get_json(server.url("/api/train/state"))[1]["metrics"]["points"])
            assert_answered_in_time(server.url("/api/train/state"))
            began = time.monotonic()
            os.killpg(server.pid, signal.SIGINT)  # as a terminal sends Ctrl+C
            server.proc.wait(30)
            assert time.monotonic() - began < 8  # as without slow clients (test_training.py)
        said = server.stderr()
    assert f"Training job {started['job']['id']}: exited." in said
