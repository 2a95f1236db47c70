"""`SharedRun`: calls that overlap share one run, but never get a run that began before they
asked; the listing of a bucket is shared that way (`Catalog.steps`)."""

from __future__ import annotations

import threading

import pytest

from rollouts.store import Catalog
from rollouts.store.shared import SharedRun
from tests.support.data import sample

WAIT_S = 30  # only a broken build waits this long: the test then fails, it never hangs


def test_a_call_alone_runs_the_work_itself_every_time():
    shared: SharedRun[int] = SharedRun()
    runs = iter(range(100))
    assert [shared.get(lambda: next(runs)) for _ in range(3)] == [0, 1, 2]


def test_callers_during_a_run_share_the_next_run_never_the_one_under_way():
    shared: SharedRun[int] = SharedRun()
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def work() -> int:
        runs.append(len(runs))
        if len(runs) == 1:  # the first run waits until the others have asked
            started.set()
            assert release.wait(WAIT_S)
        return len(runs)

    got: dict[str, int] = {}
    first = threading.Thread(target=lambda: got.setdefault("first", shared.get(work)))
    first.start()
    assert started.wait(WAIT_S)
    late = [
        threading.Thread(target=lambda n=n: got.setdefault(f"late{n}", shared.get(work)))
        for n in range(5)
    ]
    for thread in late:
        thread.start()
    while shared._next is None:  # the late callers have joined the next run
        threading.Event().wait(0.001)
    release.set()
    for thread in [first, *late]:
        thread.join(WAIT_S)
    assert got["first"] == 1  # the run under way when they asked
    assert {got[f"late{n}"] for n in range(5)} == {2}  # one run for all five, begun after
    assert runs == [0, 1]


def test_an_error_reaches_every_caller_of_the_run_and_the_next_call_runs_again():
    shared: SharedRun[int] = SharedRun()

    def broken() -> int:
        raise OSError("gone")

    with pytest.raises(OSError, match="gone"):
        shared.get(broken)
    assert shared.get(lambda: 7) == 7


def test_a_bucket_listing_sees_a_step_written_just_before_the_call(write_step, data_dir):
    catalog = Catalog(data_dir)
    write_step("train", 0, [sample(0)])
    listed = catalog.steps("train")
    listed.clear()  # each caller's own list: emptying it changes nothing for the next
    write_step("train", 1, [sample(0)])
    assert [s.step for s in catalog.steps("train")] == [0, 1] and listed == []
