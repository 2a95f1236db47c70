"""When a request has arrived in full, so that the viewer's gunicorn worker may hand it to a thread
(rollouts/server_worker.py): the header's blank line, and a small body of a stated length."""

from __future__ import annotations

import pytest

from rollouts import server
from rollouts.server_worker import MAX_BODY, Arriving, WholeRequestWorker, request_size

GET = b"GET /api/jsonl/subdirs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def arrived(*chunks: bytes) -> int | None:
    """request_size after the chunks arrived one after the other, as the worker asks it."""
    arriving = Arriving(deadline=0.0)
    needed = None
    for chunk in chunks:
        arriving.data += chunk
        needed = request_size(arriving)
    return needed


def test_a_header_is_complete_at_its_blank_line_however_it_was_split() -> None:
    for cut in range(1, len(GET)):
        assert arrived(GET[:cut], GET[cut:]) == len(GET), cut
    assert arrived(*(GET[i : i + 1] for i in range(len(GET)))) == len(GET)


@pytest.mark.parametrize(
    "partial",
    [
        b"",
        b"GET / HTTP/1.1\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n",
        b"GET / HTTP/1.1\r\nX-Slow: aaa",
    ],
)
def test_a_partial_header_is_not_a_request_yet(partial: bytes) -> None:
    assert arrived(partial) is None


def test_a_bare_lf_blank_line_ends_the_header_too() -> None:
    """The thread's parser then answers it (gunicorn refuses bare LF): nothing waits forever."""
    head = b"GET / HTTP/1.1\nHost: x\n\n"
    assert arrived(head) == len(head)


def test_a_small_body_of_a_stated_length_is_waited_for() -> None:
    head = b"POST /api/train/start HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n"
    assert arrived(head) == len(head) + 7
    assert arrived(head, b"{}", b"     ") == len(head) + 7
    # any spelling of the name
    assert arrived(head.replace(b"Content-Length", b"content-LENGTH")) == len(head) + 7


@pytest.mark.parametrize(
    "extra",
    [
        f"Content-Length: {MAX_BODY + 1}\r\n",  # a big body streams to the thread
        "Content-Length: 5\r\nContent-Length: 5\r\n",  # the parser refuses it, not us
        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\n",
        "Content-Length: 5\r\nExpect: 100-continue\r\n",  # the client waits for the thread
        "Content-Length: -5\r\n",
        "Content-Length: 99999999999999999999999\r\n",
    ],
)
def test_a_body_the_parser_must_judge_is_not_read_ahead(extra: str) -> None:
    head = f"POST /x HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode()
    assert arrived(head) == len(head)


def test_a_pipelined_request_behind_the_first_does_not_count() -> None:
    assert arrived(GET + GET[:10]) == len(GET)


def test_the_viewer_serves_with_the_whole_request_worker() -> None:
    module, name = server.SERVING["worker_class"].rsplit(".", 1)
    assert (module, name) == (WholeRequestWorker.__module__, WholeRequestWorker.__name__)
