"""One indexer of a step at a time across processes (rollouts/store/disk/lock.py, DiskCache.
try_lock, history.decode_step / decode_step_unless_busy), with real other processes: a lock
a live process holds is respected, one whose owner died (its pid, or its age) is taken over,
and release never removes another's lock."""

from __future__ import annotations

import errno
import hashlib
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rollouts.store import FileIdentity, StepIndex
from rollouts.store.disk import lock as lock_module
from rollouts.store.disk.cache import DiskCache
from rollouts.store.disk.lock import EntryLock
from rollouts.store.history import decode_step, decode_step_unless_busy
from rollouts.store.reading import metrics_of
from rollouts.store.stats import step_stats
from tests.support.data import relax_line, sample
from tests.support.servers import REPO_ROOT
from tests.support.wait import wait_for

CHILD_S = 30.0  # the most any exchange with a child process may take

# A process that takes the lock `name` in `directory` with lock.py's own code (loaded from its
# file: no package imports, so it starts at once), says so, and then either dies holding it or
# releases it when told.
HOLDER = r"""
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("entry_lock", sys.argv[1])
lock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lock)
directory, name, then = sys.argv[2], sys.argv[3], sys.argv[4]
held = lock.try_lock(os.open(directory, os.O_RDONLY | os.O_DIRECTORY), name)
print("held" if held is not None else "busy", flush=True)
if then == "die":
    os._exit(0)
sys.stdin.readline()
held.release()
print("released", flush=True)
sys.stdin.readline()
"""

# A process decoding a step with decode_step, which stops (holding the step's lock) when it is
# about to read the file, until told to go on; it then writes the step's entry and releases.
DECODER = r"""
import sys
from rollouts.store import StepIndex
from rollouts.store.history import decode_step

real = StepIndex.build

def build(*args, **kwargs):
    print("building", flush=True)
    sys.stdin.readline()
    return real(*args, **kwargs)

StepIndex.build = build
decode_step(sys.argv[1], sys.argv[2], sys.argv[3])
print("done", flush=True)
sys.stdin.readline()
"""


class Child:
    """A Python process of ours, talked to a line at a time, every read bounded."""

    def __init__(self, script: str, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def said(self) -> str:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], CHILD_S)
        assert ready, f"the child said nothing in {CHILD_S:g} s"
        return self.proc.stdout.readline().strip()

    def tell(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(CHILD_S)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def children() -> Iterator[list[Child]]:
    started: list[Child] = []
    yield started
    for child in started:
        child.end()


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    path = tmp_path / "cache"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def step(tmp_path: Path) -> Path:
    train = tmp_path / "data" / "train"
    train.mkdir(parents=True)
    path = train / "0.jsonl"
    path.write_text("".join(relax_line(sample(i, reward=i / 4)) for i in range(4)))
    return path.resolve()


def lock_name(path: Path) -> str:
    """The lock beside the step's entry (named by the step's path, as the entry is)."""
    return hashlib.sha1(os.fsencode(path), usedforsecurity=False).hexdigest() + ".msgpack.lock"


def holder(children: list[Child], cache_dir: Path, step: Path, then: str = "hold") -> Child:
    child = Child(HOLDER, lock_module.__file__, str(cache_dir), lock_name(step), then)
    children.append(child)
    assert child.said() == "held"
    return child


def owner_of(lock_file: Path) -> list[str]:
    return lock_file.read_text().split(" ")


def take_over_when_stale(cache: DiskCache, step: Path, lock_file: Path) -> EntryLock:
    """Age the held lock past STALE_S: this process takes it over and it says so."""
    old = time.time() - lock_module.STALE_S - 60
    os.utime(lock_file, (old, old))
    held = cache.try_lock(step)
    assert held is not None
    assert owner_of(lock_file)[1] == str(os.getpid())
    return held


def test_a_lock_a_live_process_holds_is_respected_until_it_releases_it(children, cache_dir, step):
    cache = DiskCache(cache_dir)
    child = holder(children, cache_dir, step)
    assert cache.try_lock(step) is None
    assert cache.try_lock(step) is None  # asking again changes nothing
    lock_file = cache_dir / lock_name(step)
    assert owner_of(lock_file)[:2] == [socket.gethostname(), str(child.proc.pid)]
    child.tell()
    assert child.said() == "released"
    assert not lock_file.exists()
    held = cache.try_lock(step)
    assert held is not None
    assert owner_of(lock_file)[:2] == [socket.gethostname(), str(os.getpid())]
    held.release()
    assert not lock_file.exists()


def test_a_lock_left_by_a_dead_process_of_this_host_is_taken_over(children, cache_dir, step):
    child = holder(children, cache_dir, step, then="die")
    assert child.proc.wait(CHILD_S) == 0
    lock_file = cache_dir / lock_name(step)
    assert owner_of(lock_file)[1] == str(child.proc.pid)  # left behind
    held = DiskCache(cache_dir).try_lock(step)
    assert held is not None
    assert owner_of(lock_file)[1] == str(os.getpid())
    held.release()


def test_a_lock_older_than_stale_s_is_taken_over_even_from_a_live_process(
    children, cache_dir, step
):
    cache = DiskCache(cache_dir)
    child = holder(children, cache_dir, step)
    lock_file = cache_dir / lock_name(step)
    assert cache.try_lock(step) is None
    held = take_over_when_stale(cache, step, lock_file)
    # The child's release finds the lock is no longer its own: it leaves ours in place.
    child.tell()
    assert child.said() == "released"
    assert owner_of(lock_file)[1] == str(os.getpid())
    held.release()
    assert not lock_file.exists()


def test_a_fresh_lock_of_another_host_is_respected_and_a_stale_one_taken_over(cache_dir, step):
    cache = DiskCache(cache_dir)
    lock_file = cache_dir / lock_name(step)
    # No process here has that pid; but it is another host's, so it says nothing of its owner.
    lock_file.write_text(f"elsewhere.invalid {os.getpid() + 10**7} {time.time():.3f}")
    assert cache.try_lock(step) is None
    assert lock_file.read_text().startswith("elsewhere.invalid ")
    old = time.time() - lock_module.STALE_S - 60
    os.utime(lock_file, (old, old))
    held = cache.try_lock(step)
    assert held is not None
    assert owner_of(lock_file)[0] == socket.gethostname()
    held.release()


def test_release_leaves_a_lock_that_is_no_longer_this_process_s(cache_dir, step):
    held = DiskCache(cache_dir).try_lock(step)
    assert held is not None
    lock_file = cache_dir / lock_name(step)
    lock_file.unlink()  # taken over meanwhile (its owner was thought gone)
    lock_file.write_text(f"elsewhere.invalid 12 {time.time():.3f}")
    held.release()
    assert lock_file.read_text().startswith("elsewhere.invalid 12 ")
    held.release()  # twice is harmless
    assert lock_file.exists()


def test_decoding_skips_a_step_another_process_indexes_or_waits_and_reads_its_entry(
    children, cache_dir, step, monkeypatch
):
    disk = str(cache_dir)
    child = Child(DECODER, str(step), "train/0.jsonl", disk)
    children.append(child)
    assert child.said() == "building"  # it holds the step's lock now
    assert decode_step_unless_busy(str(step), "train/0.jsonl", disk) is None

    def not_here(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("decoded here instead of reading the other process's entry")

    monkeypatch.setattr(StepIndex, "build", not_here)
    answers: list[Any] = []
    real_try_lock = DiskCache.try_lock

    def counted(cache: DiskCache, path: Path) -> Any:
        held = real_try_lock(cache, path)
        answers.append(held)
        return held

    monkeypatch.setattr(DiskCache, "try_lock", counted)
    result: list[Any] = []

    def wait_mode() -> None:
        try:
            result.append(decode_step(str(step), "train/0.jsonl", disk))
        except BaseException as exc:  # shown by the assertion below
            result.append(exc)

    waiter = threading.Thread(target=wait_mode, daemon=True)
    waiter.start()
    wait_for(lambda: answers, "decode_step to find the step locked", CHILD_S)
    assert answers[0] is None
    child.tell()  # the other process reads the step, writes its entry and releases its lock
    assert child.said() == "done"
    waiter.join(CHILD_S)
    assert not waiter.is_alive()
    (found,) = result
    assert not isinstance(found, BaseException), found
    identity, stats = found
    assert identity == FileIdentity.of(os.stat(step))
    monkeypatch.undo()
    truth = StepIndex.build(step, "train/0.jsonl")
    expected = step_stats(truth.ensure_columns(), truth.invalid)
    assert metrics_of(stats) == metrics_of(expected)
    assert metrics_of(stats)["reward_mean"] == pytest.approx(sum(i / 4 for i in range(4)) / 4)
    assert not (cache_dir / lock_name(step)).exists()


@pytest.mark.parametrize("content", ["", "half-written", "a b c d"])
def test_a_lock_that_says_no_owner_is_respected_while_fresh_and_taken_over_once_stale(
    cache_dir, step, content
):
    """Its owner died between creating it and writing it (or the machine did, before the
    write reached the disk): only its age can tell, as for any owner."""
    cache = DiskCache(cache_dir)
    lock_file = cache_dir / lock_name(step)
    lock_file.write_text(content)
    assert cache.try_lock(step) is None  # perhaps being written this very moment
    take_over_when_stale(cache, step, lock_file).release()


def test_a_disk_too_full_to_write_the_lock_indexes_without_one_and_leaves_none(
    cache_dir, step, monkeypatch
):
    real = os.fdopen

    class Full:
        """A file whose write finds the disk full."""

        def __init__(self, opened: Any) -> None:
            self.opened = opened

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.opened.close()

        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    def full(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        opened = real(fd, mode, *args, **kwargs)
        return Full(opened) if "w" in mode else opened

    cache = DiskCache(cache_dir)
    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fdopen", full)
    held = cache.try_lock(step)
    monkeypatch.undo()
    assert held is lock_module.UNLOCKED  # as alone, as with a read-only directory
    assert not (cache_dir / lock_name(step)).exists()  # no empty lock for the others to wait on
    assert len(os.listdir("/proc/self/fd")) == before  # the directory's descriptor closed
