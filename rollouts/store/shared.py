"""Work that overlapping callers share, without anyone getting an answer older than their ask.

Every page, poll and trends answer of a bucket lists its steps: a directory read and a stat per
step file. Under load, eight threads listing the same folder at once each made those stats, and
each stat let the GIL go to another thread, to be waited for again. `SharedRun` lets calls that
overlap share one run. A caller never joins a run that began before it asked (that run may have
listed the folder before the caller's new step was written): it joins the next run, which
begins once the current one ends. So at most two runs are in the way of any caller, and what
each caller gets was read after it asked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Run(Generic[T]):
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: T | None = None
        self.error: BaseException | None = None

    def outcome(self) -> T:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]  # set, since `error` is not


class SharedRun(Generic[T]):
    """`get(work)`: the value of a run of `work` that began after the call (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: _Run[T] | None = None  # begun: too early for anyone who asks now
        self._next: _Run[T] | None = None  # not begun: whoever asks now joins it

    def get(self, work: Callable[[], T]) -> T:
        with self._lock:
            before = self._running
            if before is None:
                run = self._running = _Run()
            else:
                if self._next is None:
                    self._next = _Run()
                run = self._next
        if before is not None:
            before.done.wait()
            with self._lock:
                mine = self._next is run  # the first of its callers to get here runs it
                if mine:
                    self._running, self._next = run, None
            if not mine:
                run.done.wait()
                return run.outcome()
        try:
            run.value = work()
        except BaseException as exc:  # every caller of the run gets it, as the runner does
            run.error = exc
        finally:
            with self._lock:
                if self._running is run:
                    self._running = None
            run.done.set()
        return run.outcome()
