"""Background indexing in a stated order that yields to people.

One `Indexer` runs its tasks on one thread, the lowest rank first; a caller re-ranks them as
what people look at changes (the run picker: the runs a request asks for, then the runs on the
page shown, then the rest, the most recently changed first). Before each task it waits while
requests are being answered (`serving`), for up to `YIELD_MAX_S` at a time, so a page is never
behind a queue of background work; the decoding itself runs on `shared_pool`'s processes (at a
lower CPU priority) when there are any.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

logger = logging.getLogger("rollouts.store")

YIELD_MAX_S = 0.5  # the longest a task waits for requests to finish before it runs anyway
NICENESS = 10  # how much lower the pool processes' CPU priority is than the server's

# A task returns None when done, or in how many seconds to run it again (work that another
# process holds, e.g. a step it is indexing).
Task = Callable[[], float | None]


@dataclass(slots=True)
class _Queued:
    rank: tuple[float, ...]
    task: Task
    not_before: float = 0.0


_serving = 0
_serving_lock = threading.Condition()


@contextlib.contextmanager
def serving() -> Iterator[None]:
    """Around a request's work: background tasks wait to start until no request is."""
    global _serving
    with _serving_lock:
        _serving += 1
    try:
        yield
    finally:
        with _serving_lock:
            _serving -= 1
            if _serving == 0:
                _serving_lock.notify_all()


def yield_to_requests(limit_s: float = YIELD_MAX_S) -> None:
    """Wait while requests are being answered, for up to `limit_s` seconds."""
    deadline = time.monotonic() + limit_s
    with _serving_lock:
        while _serving > 0 and (left := deadline - time.monotonic()) > 0:
            _serving_lock.wait(left)


class Indexer:
    """Tasks by key, each with a rank (lowest first); one thread runs them."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._queue: dict[Hashable, _Queued] = {}
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None
        self._running: Hashable | None = None

    def submit(self, key: Hashable, rank: tuple[float, ...], task: Task) -> None:
        """Queue `task` under `key`, or give the queued one this rank (and this task)."""
        with self._cv:
            queued = self._queue.get(key)
            if queued is None:
                self._queue[key] = _Queued(rank, task)
            else:
                queued.rank, queued.task = rank, task
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
            self._cv.notify()

    def rerank(self, key: Hashable, rank: tuple[float, ...]) -> None:
        with self._cv:
            queued = self._queue.get(key)
            if queued is not None:
                queued.rank = rank

    def discard(self, key: Hashable) -> None:
        with self._cv:
            self._queue.pop(key, None)

    def keys(self) -> set[Hashable]:
        """The keys queued now."""
        with self._cv:
            return set(self._queue)

    def queued(self, key: Hashable) -> bool:
        with self._cv:
            return key in self._queue or self._running == key

    def __len__(self) -> int:
        with self._cv:  # the running task stays queued until it is done: counted once
            running = self._running is not None and self._running not in self._queue
            return len(self._queue) + running

    def _next(self) -> tuple[Hashable, Task] | None:
        """The lowest-ranked task that may run now (waiting for one), or None when empty."""
        with self._cv:
            self._running = None
            while self._queue:
                now = time.monotonic()
                ready = [(q.rank, k) for k, q in self._queue.items() if q.not_before <= now]
                if ready:
                    _, key = min(ready, key=lambda item: item[0])
                    self._running = key
                    return key, self._queue[key].task
                self._cv.wait(min(q.not_before for q in self._queue.values()) - now)
            self._thread = None
            return None

    def _run(self) -> None:
        while (picked := self._next()) is not None:
            key, task = picked
            yield_to_requests()
            try:
                again = task()
            except Exception:  # a task's own errors are its to say; the queue goes on
                logger.exception("background indexing of %s failed", key)
                again = None
            with self._cv:
                queued = self._queue.get(key)
                if queued is not None and queued.task is task:
                    if again is None:
                        del self._queue[key]
                    else:
                        queued.not_before = time.monotonic() + again
                # else: submitted again while it ran: it runs again with what it was given


# A pool process is spawned inside `submit`, on a background thread. At exit, one cut off
# half-way (its parent gone before handing it its task) would print a traceback: an exit hook
# waits for the spawn under way and lets no new one start.
_spawning = threading.Lock()
_exiting = threading.Event()


@contextlib.contextmanager
def submitting() -> Iterator[bool]:
    """Around a pool's `submit`: whether it may (False once the process is exiting)."""
    with _spawning:
        yield not is_exiting()


def is_exiting() -> bool:
    """Whether the process is exiting (the exit hook below ran)."""
    return _exiting.is_set()


_pool: ProcessPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _lower_priority() -> None:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)


def shared_pool(processes: int) -> ProcessPoolExecutor | None:
    """One pool of `processes` spawned processes for all background decoding (None for 1:
    decode on the calling thread). A new size replaces the pool."""
    global _pool, _pool_size
    if processes <= 1:
        return None
    with _pool_lock:
        if _pool is None or _pool_size != processes:
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            context = multiprocessing.get_context("spawn")
            _pool = ProcessPoolExecutor(processes, mp_context=context, initializer=_lower_priority)
            _pool_size = processes
        return _pool


def reset_pool() -> None:
    """Drop the pool (its processes died): the next `shared_pool` starts a new one."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def _close_pool() -> None:
    _exiting.set()
    with _spawning:
        pass
    with _pool_lock:
        if _pool is not None:
            # Queued steps are dropped; the ones running finish (a step at most per process).
            # Waiting here also lets the pool's own thread close its wake-up pipe before
            # concurrent.futures' exit hook writes to it (in Python 3.11 a close at the same
            # moment as that write printed "Bad file descriptor" at exit).
            _pool.shutdown(wait=True, cancel_futures=True)
            _stop_resource_tracker()


def _stop_resource_tracker() -> None:
    """Stop (and reap) the process multiprocessing starts beside a spawned pool to track its
    semaphores. Left to exit on its own when this process has gone, it would be nobody's child
    for a moment: a zombie the server leaves behind. `_stop` is the standard library's own
    way of ending it (private, so looked up, and skipped if a Python lacks it)."""
    from multiprocessing import resource_tracker

    stop = getattr(getattr(resource_tracker, "_resource_tracker", None), "_stop", None)
    if stop is not None:
        with contextlib.suppress(OSError, ChildProcessError):
            stop()


# concurrent.futures stops every pool in a `threading` exit hook, which runs before `atexit`'s;
# ours is registered the same way and after it, so it runs first (they run last-in first-out)
# and background work sees the exit before its pool breaks, instead of saying it broke.
_register = getattr(threading, "_register_atexit", None)
if _register is not None:
    _register(_close_pool)
else:  # pragma: no cover - every Python this supports has it
    atexit.register(_close_pool)
