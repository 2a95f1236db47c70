"""HEAD on the real server: the GET's status and headers, not one body byte, and nothing for
gunicorn to drop (it logs "WSGI app sent body bytes on a no-body response" when it has to).

Read from a raw socket: urllib, knowing HEAD has no body, would never read body bytes that the
server did send.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from rollouts.demo import write_demo
from tests.support.servers import LOOPBACK, ServerProcess, request, run_visualize

pytestmark = pytest.mark.e2e

PATHS = {
    "page": "/train/11/",
    "JSON": "/api/jsonl/subdirs",
    "streamed step": "/api/jsonl/train/file/11.jsonl",
    "static file": "/static/rollouts/viewer.js",
    "unknown URL": "/no/such/page/",
    "unknown API URL": "/api/no/such/thing",
}


def raw_head(port: int, path: str, host: str = LOOPBACK) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, whatever followed them) of `HEAD path`, read until the server closes."""
    with socket.create_connection((LOOPBACK, port), timeout=30) as sock:
        sock.sendall(f"HEAD {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, rest


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with run_visualize(write_demo(tmp_path_factory.mktemp("demo"))) as srv:
        yield srv


@pytest.mark.parametrize("what", PATHS)
def test_head_answers_as_get_without_a_body(server: ServerProcess, what: str) -> None:
    path = PATHS[what]
    status, headers, body = request(server.url(path))
    head_status, head_headers, rest = raw_head(server.port, path)
    assert head_status == status
    assert rest == b""
    assert head_headers["content-type"] == headers["content-type"]
    if "content-length" in headers:  # not for a stream: its length is not known in advance
        assert head_headers["content-length"] == headers["content-length"] == str(len(body))
    assert body  # what GET sends and HEAD leaves out


def test_a_refused_host_is_answered_without_a_body_too(server: ServerProcess) -> None:
    status, headers, rest = raw_head(server.port, "/", host="evil.example")
    assert status == 400 and rest == b"" and int(headers["content-length"]) > 0


def test_the_server_never_had_a_body_to_drop(server: ServerProcess) -> None:
    for path in PATHS.values():
        raw_head(server.port, path)
    raw_head(server.port, "/", host="evil.example")
    assert "no-body response" not in server.output()
