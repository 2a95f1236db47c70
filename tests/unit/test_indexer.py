"""The background indexer (rollouts/store/indexer.py): tasks by rank on one thread, re-ranked
as people look elsewhere, run again after the delay they ask for, a failing one logged and
passed over, and the queue waiting while requests are answered (`serving`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from functools import partial

import pytest

from rollouts.store import Indexer, serving
from rollouts.store import indexer as indexer_module
from tests.support.wait import wait_for

BOUND_S = 10.0  # the most any wait for the indexer's thread may take


class Log:
    """What the tasks did, in order."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self._lock = threading.Lock()

    def task(self, name: str, again: float | None = None) -> Callable[[], float | None]:
        def run() -> float | None:
            with self._lock:
                self.ran.append(name)
            return again

        return run

    def until(self, count: int) -> list[str]:
        return wait_for(lambda: list(self.ran), f"{count} tasks run", BOUND_S,
                        until=lambda ran: len(ran) >= count)  # fmt: skip


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Opened to let the first task (which holds the thread while the others are queued) end."""
    event = threading.Event()
    yield event
    event.set()


def gated(indexer: Indexer, gate: threading.Event, log: Log) -> None:
    """Queue a first task that holds the indexer's one thread until `gate` opens, and wait
    until it runs: what is queued meanwhile is then ordered only by rank."""
    started = threading.Event()

    def hold() -> None:
        started.set()
        gate.wait(BOUND_S)
        log.ran.append("gate")

    indexer.submit("gate", (-1,), hold)
    assert started.wait(BOUND_S)


def test_tasks_run_lowest_rank_first(gate):
    indexer, log = Indexer("test"), Log()
    gated(indexer, gate, log)
    for name, rank in [("c", (2, 0)), ("a", (0, 5)), ("d", (2, 1)), ("b", (1, -3))]:
        indexer.submit(name, rank, log.task(name))
    gate.set()
    assert log.until(5) == ["gate", "a", "b", "c", "d"]


def test_submitting_again_with_a_lower_rank_moves_a_task_forward(gate):
    indexer, log = Indexer("test"), Log()
    gated(indexer, gate, log)
    indexer.submit("first", (1,), log.task("first"))
    indexer.submit("second", (2,), log.task("second"))
    indexer.submit("third", (3,), log.task("third"))
    indexer.submit("third", (0,), log.task("third again"))  # its new rank and its new task
    indexer.rerank("first", (5,))
    indexer.rerank("unknown", (0,))  # nothing queued under it: nothing happens
    gate.set()
    assert log.until(4) == ["gate", "third again", "second", "first"]
    wait_for(lambda: len(indexer) == 0, "the queue empty", BOUND_S)
    assert log.ran == ["gate", "third again", "second", "first"]  # each once


def test_a_task_that_asks_for_a_delay_runs_again_after_it_and_others_meanwhile(gate):
    indexer, log = Indexer("test"), Log()
    gated(indexer, gate, log)
    delays = iter([0.5, None])  # busy the first time (e.g. another process indexes it): later

    def later() -> float | None:
        log.ran.append("later")
        return next(delays)

    indexer.submit("later", (0,), later)
    indexer.submit("next", (1,), log.task("next"))
    gate.set()
    assert log.until(4) == ["gate", "later", "next", "later"]
    wait_for(lambda: not indexer.queued("later"), "the task done", BOUND_S)
    assert len(indexer) == 0


def test_a_task_that_raises_is_logged_and_the_queue_goes_on(gate, caplog):
    indexer, log = Indexer("test"), Log()
    gated(indexer, gate, log)

    def broken() -> None:
        log.ran.append("broken")
        raise RuntimeError("a task's own bug")

    indexer.submit("broken", (0,), broken)
    indexer.submit("fine", (1,), log.task("fine"))
    with caplog.at_level(logging.ERROR, logger="rollouts.store"):
        gate.set()
        assert log.until(3) == ["gate", "broken", "fine"]
    failed = [r for r in caplog.records if "background indexing of broken failed" in r.message]
    assert failed and failed[0].exc_info is not None
    wait_for(lambda: len(indexer) == 0, "the queue empty", BOUND_S)
    assert not indexer.queued("broken")  # not run again


def test_len_and_queued_count_the_running_task_and_the_waiting_ones(gate):
    indexer, log = Indexer("test"), Log()
    assert len(indexer) == 0 and not indexer.queued("gate")
    gated(indexer, gate, log)
    assert len(indexer) == 1 and indexer.queued("gate")  # running
    indexer.submit("x", (0,), log.task("x"))
    indexer.submit("y", (1,), log.task("y"))
    indexer.submit("x", (2,), log.task("x"))  # the same key: still one task
    assert len(indexer) == 3
    assert indexer.queued("x") and indexer.queued("y") and not indexer.queued("z")
    indexer.discard("y")
    assert len(indexer) == 2 and not indexer.queued("y")
    indexer.discard("gate")  # dropped while it runs: still running, counted once
    assert len(indexer) == 2 and indexer.queued("gate")
    gate.set()
    assert log.until(2) == ["gate", "x"]
    wait_for(lambda: len(indexer) == 0, "the queue empty", BOUND_S)
    assert not indexer.queued("x") and log.ran == ["gate", "x"]


def test_a_task_waits_while_a_request_is_served_and_runs_once_it_is_answered(monkeypatch):
    # However long the request takes: the cap on the wait is the next test's.
    monkeypatch.setattr(
        indexer_module, "yield_to_requests", partial(indexer_module.yield_to_requests, BOUND_S)
    )
    indexer = Indexer("test")
    ran = threading.Event()
    with serving():
        indexer.submit("work", (0,), lambda: ran.set())
        assert not ran.wait(0.2), "a background task ran while a request was being answered"
        assert indexer.queued("work")
    assert ran.wait(BOUND_S)


def test_a_task_runs_anyway_after_yield_max_s_of_requests():
    indexer = Indexer("test")
    ran = threading.Event()
    with serving():
        indexer.submit("work", (0,), lambda: ran.set())
        assert ran.wait(BOUND_S), "the task waited for requests without end"


def test_serving_counts_nested_requests():
    done = threading.Event()

    def background() -> None:
        indexer_module.yield_to_requests(BOUND_S)
        done.set()

    with serving():
        with serving():
            pass  # one request ends; the other is still being answered
        thread = threading.Thread(target=background, daemon=True)
        thread.start()
        assert not done.wait(0.2)
    assert done.wait(BOUND_S)
    thread.join(BOUND_S)
