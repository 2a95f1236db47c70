"""gunicorn's threaded worker, with threads that only ever get whole requests.

gunicorn's `gthread` worker hands a connection to a thread as soon as it has a byte to read, and
the thread then waits, blocked, for the rest of the request. Eight clients that send a header a
byte at a time hold eight threads for as long as they like, and each connection that sends
nothing holds one for 5 s: a request from anyone else waits behind them (measured: over 130 s,
and 14 s behind 30 idle sockets).

`WholeRequestWorker` reads what arrives on a connection in the worker's event loop instead,
without blocking, and hands the connection to a thread once its request header is complete (and
its body too, when it is small and its length is given). A client that takes longer than
`REQUEST_TIMEOUT` for that is disconnected; one that sends more header than `MAX_HEADER` gets a
431. Neither ever holds a thread. Plain HTTP/1 only: with TLS or HTTP/2 configured in gunicorn
(the viewer sets neither), connections take gthread's own path.

Written against gunicorn 27's `ThreadWorker` (its `enqueue_req`, `murder_keepalived`, poller
and connection objects).
"""

from __future__ import annotations

import contextlib
import re
import selectors
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import ThreadWorker

REQUEST_TIMEOUT = 10.0  # seconds for a request's header (and small body) to arrive, in full
MAX_HEADER = 64 * 1024  # bytes of header held per connection; more is a 431
MAX_BODY = 64 * 1024  # bytes of body read ahead with the header; a larger body is the thread's
STOP_LINGER = 2.0  # seconds a stopping worker still waits for a request being sent
READ_SIZE = 64 * 1024  # bytes per read

_BODY_SIZE = re.compile(rb"^content-length[ \t]*:[ \t]*(\d{1,18})[ \t]*\r?$", re.I | re.M)
# Framing the thread's parser decides (chunked, 100-continue): the body is not read ahead.
_STREAMED = re.compile(rb"^(transfer-encoding|expect)[ \t]*:", re.I | re.M)
_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"Connection: close\r\nContent-Length: 0\r\n\r\n"
)
_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


@dataclass
class Arriving:
    """A request still arriving: its bytes so far and when it must be complete."""

    deadline: float
    data: bytearray = field(default_factory=bytearray)
    scanned: int = 0  # the header's end is not in data[:scanned]
    needed: int | None = None  # the whole request's size, once the header is in


def header_end(data: bytearray, start: int) -> int:
    """Where the header ends (after its blank line) in `data`, searched from `start`; -1 when it
    has not ended. A bare LF blank line ends it too: the parser then answers what it thinks."""
    ends = []
    for blank in (b"\r\n\r\n", b"\n\n"):
        at = data.find(blank, start)
        if at >= 0:
            ends.append(at + len(blank))
    return min(ends, default=-1)


def request_size(arriving: Arriving) -> int | None:
    """Bytes the request needs before a thread may read it (header, and a small body given by
    its length); None while the header is still incomplete."""
    if arriving.needed is not None:
        return arriving.needed
    end = header_end(arriving.data, max(arriving.scanned - 3, 0))
    arriving.scanned = len(arriving.data)
    if end < 0:
        return None
    head = bytes(arriving.data[:end])
    body = 0
    lengths = _BODY_SIZE.findall(head)
    if len(lengths) == 1 and not _STREAMED.search(head) and int(lengths[0]) <= MAX_BODY:
        body = int(lengths[0])
    arriving.needed = len(head) + body
    return arriving.needed


class WholeRequestWorker(ThreadWorker):
    """gthread, but a connection reaches a thread only with a whole request to read."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Insertion order is deadline order: every wait is REQUEST_TIMEOUT long.
        self.arriving: dict[Any, Arriving] = {}
        self.stop_deadline: float | None = None

    def enqueue_req(self, conn: Any) -> None:
        if not self._reads_ahead(conn):
            super().enqueue_req(conn)
            return
        arriving = Arriving(time.monotonic() + REQUEST_TIMEOUT)
        try:
            conn.init()  # plain HTTP/1: makes the parser, reads nothing
            arriving.data += conn.parser.unreader.take_buffered()  # a pipelined request's start
            if self._complete(arriving):
                self._hand_over(conn, arriving)
                return
            conn.sock.setblocking(False)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))
        except (OSError, ValueError):  # the client is already gone: not a reason to crash
            self.nr_conns -= 1
            conn.close()
            return
        self.arriving[conn] = arriving

    def _reads_ahead(self, conn: Any) -> bool:
        """Plain HTTP/1, which this worker can read ahead; TLS and HTTP/2 go gthread's way."""
        return not (
            self.cfg.is_ssl
            or getattr(self.cfg, "protocol", "http") != "http"
            or negotiation.prior_knowledge_allowed(self.cfg, conn.client)
        )

    def _complete(self, arriving: Arriving) -> bool:
        needed = request_size(arriving)
        return needed is not None and len(arriving.data) >= needed

    def _on_readable(self, conn: Any, client: Any) -> None:
        arriving = self.arriving.get(conn)
        if arriving is None:
            return
        try:
            chunk = conn.sock.recv(READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._drop(conn)
            return
        arriving.data += chunk
        if self._complete(arriving):
            self._stop_watching(conn)
            self._hand_over(conn, arriving)
        elif arriving.needed is None and len(arriving.data) > MAX_HEADER:
            self._drop(conn, _TOO_LARGE)

    def _hand_over(self, conn: Any, arriving: Arriving) -> None:
        conn.parser.unreader.unread(bytes(arriving.data))
        super().enqueue_req(conn)

    def _stop_watching(self, conn: Any) -> None:
        del self.arriving[conn]
        with contextlib.suppress(KeyError, ValueError, OSError):
            self.poller.unregister(conn.sock)

    def _drop(self, conn: Any, answer: bytes = b"") -> None:
        self._stop_watching(conn)
        if answer:
            with contextlib.suppress(OSError):
                conn.sock.send(answer)  # best effort: the socket does not block
        self.nr_conns -= 1
        conn.close()

    def murder_keepalived(self, force: bool = False) -> None:
        """gthread's sweep of idle kept-alive connections, and ours of requests too slow to
        arrive. A stopping worker waits STOP_LINGER at most for a request being sent."""
        super().murder_keepalived(force)
        now = time.monotonic()
        if not self.alive and self.stop_deadline is None:
            self.stop_deadline = now + STOP_LINGER
        expired = []
        for conn, arriving in self.arriving.items():
            deadline = arriving.deadline
            if self.stop_deadline is not None:
                deadline = min(deadline, self.stop_deadline)
            if force or deadline <= now:
                expired.append(conn)
            elif self.stop_deadline is None:
                break  # the others' deadlines come later
        for conn in expired:
            self._drop(conn, _TIMED_OUT if self.arriving[conn].data else b"")
