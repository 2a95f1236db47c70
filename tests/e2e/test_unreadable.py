"""A step the server may not read (issue 12, section 2), against a real `visualize` process that
is subject to file permissions (see tests/support/unprivileged.py: `nobody`, or root without
the capabilities that bypass them). Every page and endpoint touching the step answers the
viewer's error page or JSON error naming the step with a 403 (a permission, not an outage: the
data directory as a whole unreadable is the 503), never a 500, never the server's path; and
the path walk of every endpoint runs here too, unreadable step included.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import ServerProcess, loads_strict, request, run_visualize
from tests.support.unprivileged import (
    VISUALIZE,
    readable_tree,
    require_unprivileged,
    shared_dir,
)
from tests.support.wait import wait_for
from tests.support.walk import (
    UNREADABLE_STEP,
    leaks,
    paths,
    server_errors,
    top_paths,
    uncovered,
    walk,
    write_tree,
)

pytestmark = pytest.mark.e2e

MESSAGE = f"train/{UNREADABLE_STEP}.jsonl cannot be read: permission denied"


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[ServerProcess, Path, str]]:
    """(server, data dir, how it runs): train/8.jsonl unreadable, everything else readable."""
    launcher, how = require_unprivileged()
    with shared_dir("rollouts-unreadable-") as root:
        data = root / "run" / "rollout_result"
        write_tree(data, unreadable=True)
        big = data / "train" / "5.jsonl"  # for the stream test: pages of ~30 MB
        big.write_text(
            "".join(
                json.dumps({"sample_index": i, "response": "z" * 100_000, "reward": 1.0}) + "\n"
                for i in range(300)
            )
        )
        readable_tree(root)
        (data / "train" / f"{UNREADABLE_STEP}.jsonl").chmod(0)
        argv = (*launcher, *VISUALIZE)
        with run_visualize(data, "--disk-cache", "off", launcher=argv) as server:
            yield server, data, how


def get(server: ServerProcess):
    def fetch(method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        return request(server.url(path), method=method, timeout=60)

    return fetch


def test_the_server_really_may_not_read_the_step(served):
    server, _, how = served
    # It reads the others, so the permission is what stands in its way.
    status, _, body = request(server.url("/api/jsonl/train/file/1.jsonl/stats"))
    assert status == 200, (how, body[:300])
    status, _, body = request(server.url(f"/api/jsonl/train/file/{UNREADABLE_STEP}.jsonl/stats"))
    assert status == 403, (how, status, body[:300])  # forbidden: a permission, not an outage


STEP_PAGES = [
    f"/train/{UNREADABLE_STEP}/",
    f"/train/{UNREADABLE_STEP}/?sort=reward&order=desc",
    f"/train/{UNREADABLE_STEP}/sample/0/",
    f"/train/{UNREADABLE_STEP}/stats/",
    f"/train/{UNREADABLE_STEP}/group/0/",
]
STEP_API = [
    f"/api/view/train/{UNREADABLE_STEP}",
    f"/api/view/train/{UNREADABLE_STEP}/sample/0",
    *[
        f"/api/jsonl/train/file/{UNREADABLE_STEP}.jsonl{end}"
        for end in ("", "/samples", "/sample/0", "/columns", "/stats", "/group/0")
    ],
]


@pytest.mark.parametrize("path", STEP_PAGES)
def test_every_page_of_the_step_is_the_viewers_error_page_naming_it(served, path):
    server, data, _ = served
    status, headers, body = request(server.url(path))
    html = body.decode()
    assert status == 403 and headers["content-type"].startswith("text/html"), html[:300]
    assert MESSAGE in html and 'class="rv-error"' in html
    assert str(data) not in html and "Traceback" not in html
    assert 'id="rv-step"' in html  # the step selector still works around the message


@pytest.mark.parametrize("path", STEP_API)
def test_every_endpoint_of_the_step_is_the_json_error_naming_it(served, path):
    server, data, _ = served
    status, headers, body = request(server.url(path))
    assert status == 403 and headers["content-type"] == "application/json", body[:300]
    error = loads_strict(body)
    assert error["ok"] is False and error["message"] == MESSAGE
    assert (error["status"], error["error"]) == (403, "Forbidden")
    assert str(data) not in body.decode()


def test_the_bucket_and_its_trends_go_on_without_it(served):
    server, data, _ = served
    # To the newest step (urllib follows the redirect): the unreadable one, which says why.
    status, _, body = request(server.url("/train/"))
    assert status == 403 and MESSAGE in body.decode()

    def answer() -> tuple[dict, bytes]:
        _, _, body = request(server.url("/api/jsonl/train/trends"))
        return loads_strict(body), body

    # The background pass: a few steps, a moment.
    trends, body = wait_for(answer, "the trends done", 60, until=lambda got: got[0]["done"])
    assert trends["failed"] == [{"name": f"{UNREADABLE_STEP}.jsonl", "error": MESSAGE}]
    assert {p["step"] for p in trends["points"]} == {1, 2, 5}
    assert str(data) not in body.decode()
    status, _, body = request(server.url("/train/trends/"))
    assert status == 200 and str(data) not in body.decode()


def test_no_endpoint_answers_500_or_holds_the_path(served):
    server, data, _ = served
    assert {n for n in uncovered(None) if not n.startswith("run:")} == set()
    answers = walk(get(server), [*paths([1, 2, UNREADABLE_STEP]), *top_paths()])
    secrets = [str(data), str(data.resolve()), str(data.parent.parent)]
    assert leaks(answers, secrets) == []
    assert server_errors(answers) == []
    assert answers[("GET", f"/train/{UNREADABLE_STEP}/stats/")][0] == 403


def test_a_page_streamed_while_the_step_becomes_unreadable_is_sent_whole(served):
    # The page reads through one open file, as the whole-file dump does: a permission taken
    # away meanwhile does not reach it, and the page completes, consistent, rather than stopping.
    server, data, _ = served
    big = data / "train" / "5.jsonl"
    big.chmod(0o644)
    path = "/api/jsonl/train/file/5.jsonl/samples?page_size=300"
    try:
        body = _read_while(server, path, lambda: big.chmod(0))
        _, _, after = request(server.url(path))  # a page asked for now cannot be read
    finally:
        big.chmod(0o644)
    page = json.loads(body)
    assert page["complete"] is True and "error" not in page
    assert len(page["samples"]) == len(page["positions"]) == 300
    refused = json.loads(after)
    assert refused["complete"] is False and refused["samples"] == []
    assert refused["error"] == "train/5.jsonl cannot be read: permission denied"
    assert str(data) not in body.decode() and str(data) not in after.decode()


def _read_while(server: ServerProcess, path: str, change) -> bytes:
    """GET `path` over a raw socket (chunked), calling `change` once the first MB arrived."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        received = bytearray()
        changed = False
        while chunk := sock.recv(1 << 16):
            received += chunk
            if not changed and len(received) > 1 << 20:
                change()
                changed = True
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200"), head[:200]
    return body


def test_a_data_directory_the_server_may_not_list_is_503_everywhere_with_its_name():
    """The neighbour one level up: the whole data directory unreadable after start (`chmod 0`
    by a careless rsync, say). Pages and API answer 503 naming it, never its path; when it is
    readable again the viewer recovers without a restart."""
    launcher, how = require_unprivileged()
    with shared_dir("rollouts-unlistable-") as root:
        data = root / "run" / "rollout_result"
        write_tree(data)
        readable_tree(root)
        argv = (*launcher, *VISUALIZE)
        with run_visualize(data, "--disk-cache", "off", launcher=argv) as server:
            assert request(server.url("/api/jsonl/train/steps"))[0] == 200, how
            (data / "train").chmod(0)
            data.chmod(0)
            try:
                for path in ("/api/jsonl/subdirs", "/api/jsonl/train/steps", "/train/1/", "/"):
                    status, _, body = request(server.url(path))
                    assert status == 503, (path, status, body[:300])
                    assert str(root) not in body.decode("utf-8", "replace")
                    assert b"rollout_result" in body, (path, body[:300])
                    if path.startswith("/api/"):
                        assert loads_strict(body)["ok"] is False
            finally:
                data.chmod(0o755)
                (data / "train").chmod(0o755)
            assert request(server.url("/api/jsonl/train/steps"))[0] == 200
