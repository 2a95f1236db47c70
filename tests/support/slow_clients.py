"""Clients that hold a server's connections without finishing a request (standard library only).

`held_open(port, slow=8, idle=30)` opens `idle` sockets that send nothing and `slow` ones that
send the start of a request header, then one more header byte every `trickle` seconds, never
finishing it (the two attacks of issue 26). Loopback only; bounded in count (`MAX_SOCKETS`) and
time (the trickle ends by itself after `MAX_SECONDS`); every socket is closed on exit.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

from tests.support.servers import LOOPBACK

SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
MAX_SOCKETS = 1000
MAX_SECONDS = 300.0  # the trickle stops by itself after this, whatever happens


class HeldOpen:
    """The open sockets: `slow` ones first, then `idle` ones."""

    def __init__(self, port: int, *, slow: int, idle: int, trickle: float) -> None:
        if not 0 <= slow + idle <= MAX_SOCKETS:
            raise ValueError(f"at most {MAX_SOCKETS} sockets")
        self.sockets: list[socket.socket] = []
        self.slow: list[socket.socket] = []
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            for _ in range(slow):
                sock = socket.create_connection((LOOPBACK, port), timeout=5)
                self.sockets.append(sock)
                sock.sendall(SLOW_HEAD)
                self.slow.append(sock)
            for _ in range(idle):
                self.sockets.append(socket.create_connection((LOOPBACK, port), timeout=5))
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._trickle, args=(trickle,), daemon=True)
        self._thread.start()

    def _trickle(self, every: float) -> None:
        end = time.monotonic() + MAX_SECONDS
        while not self._stopping.wait(every) and time.monotonic() < end:
            for sock in self.slow:
                with contextlib.suppress(OSError):
                    sock.send(b"a")

    def open_count(self) -> int:
        """How many of the sockets the server has neither closed nor answered yet."""
        still = 0
        for sock in self.sockets:
            sock.setblocking(False)
            try:
                sock.recv(1, socket.MSG_PEEK)
            except BlockingIOError:
                still += 1
            except OSError:
                pass
        return still

    def endings(self, timeout: float) -> list[bytes | None]:
        """What the server sent on each socket before closing it, waiting `timeout` seconds at
        most; None for a socket still open then."""
        received = {sock: b"" for sock in self.sockets}
        open_ = set(self.sockets)
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            for sock in self.sockets:
                sock.setblocking(False)
                selector.register(sock, selectors.EVENT_READ, sock)
            while open_ and (left := deadline - time.monotonic()) > 0:
                for key, _ in selector.select(min(left, 1.0)):
                    sock = key.data
                    try:
                        chunk = sock.recv(4096)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if chunk and len(received[sock]) < 4096:
                        received[sock] += chunk
                    elif not chunk:
                        open_.discard(sock)
                        selector.unregister(sock)
        return [None if sock in open_ else received[sock] for sock in self.sockets]

    def close(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(5)
        for sock in self.sockets:
            sock.close()


@contextlib.contextmanager
def held_open(
    port: int, *, slow: int = 0, idle: int = 0, trickle: float = 2.0
) -> Iterator[HeldOpen]:
    clients = HeldOpen(port, slow=slow, idle=idle, trickle=trickle)
    try:
        time.sleep(0.2)  # the server has accepted them: they are in its way from now on
        yield clients
    finally:
        clients.close()


def timed_get(url: str, timeout: float) -> tuple[float, int | None]:
    """(seconds, status) of one GET on a new connection; status None when it did not answer
    within `timeout` (or at all)."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            resp.read()
            status: int | None = resp.status
    except urllib.error.HTTPError as exc:
        with exc:
            status = exc.code
    except OSError:
        status = None
    return time.perf_counter() - start, status
