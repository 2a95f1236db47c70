"""Issue 26, items 3, 4 and 5 in process: the files the viewer opens in a run directory (never
written through a link, a hard link or another user's file; never a FIFO that would block), the
Ray log mirror (one descriptor, never the name opened again), a record's pid that is not the
job's supervisor, and the output reader's line limit."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rollouts.control import read_ack, read_control
from rollouts.training import process, reaper
from rollouts.training.backends.rayjob import RayJob
from rollouts.training.job import JobError
from rollouts.training.output import CUT, MAX_LINE_BYTES, JobOutput
from rollouts.training.recovery import read_json
from rollouts.training.runfiles import Refused, open_append, open_read
from rollouts.training.specfile import load_spec
from tests.support.training import write_fake_spec

DECOY = b"the decoy's own bytes\n"
NOBODY = 65534


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """`call()`'s result, or a failure if it blocks longer than `seconds` (a FIFO opened
    without O_NONBLOCK would block forever: the test must fail, not hang)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the test's thread
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"blocked for over {seconds} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def decoy(tmp_path: Path) -> Path:
    path = tmp_path / "decoy.txt"
    path.write_bytes(DECOY)
    return path


# -- appending


def test_a_log_is_made_or_appended_to_when_it_is_a_regular_file_of_ours(tmp_path):
    log = tmp_path / "stdout.log"
    for line in (b"one\n", b"two\n"):  # made, then appended to
        fd = open_append(log)
        os.write(fd, line)
        os.close(fd)
    assert log.read_bytes() == b"one\ntwo\n"


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlinked_log_is_not_written_through(tmp_path, decoy, dangling):
    target = decoy if not dangling else tmp_path / "made-elsewhere.txt"
    (tmp_path / "stdout.log").symlink_to(target)
    with pytest.raises(Refused) as refused:
        open_append(tmp_path / "stdout.log")
    assert str(refused.value) == (
        "stdout.log in the run directory is a symbolic link: the viewer does not write it"
    )
    assert decoy.read_bytes() == DECOY and not (tmp_path / "made-elsewhere.txt").exists()


def test_a_hard_link_to_another_file_is_not_written(tmp_path, decoy):
    os.link(decoy, tmp_path / "stdout.log")
    with pytest.raises(Refused, match="has another hard link"):
        open_append(tmp_path / "stdout.log")
    assert decoy.read_bytes() == DECOY


def test_a_fifo_in_place_of_a_log_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "stdout.log")
    with pytest.raises(Refused, match="is not a regular file"):
        within(5, lambda: open_append(tmp_path / "stdout.log"))
    with pytest.raises(Refused, match="is not a regular file: not read"):
        within(5, lambda: open_read(tmp_path / "stdout.log"))


@pytest.mark.skipif(os.geteuid() != 0, reason="making another user's file needs root")
def test_another_user_s_log_is_not_written(tmp_path):
    log = tmp_path / "stdout.log"
    log.write_bytes(DECOY)
    os.chown(log, NOBODY, NOBODY)
    with pytest.raises(Refused, match="belongs to another user"):
        open_append(log)
    assert log.read_bytes() == DECOY


# -- reading


def test_a_symlinked_log_is_not_read(tmp_path, decoy):
    (tmp_path / "stdout.log").symlink_to(decoy)
    with pytest.raises(Refused, match="is a symbolic link: the viewer does not read it"):
        open_read(tmp_path / "stdout.log")
    with pytest.raises(FileNotFoundError):
        open_read(tmp_path / "missing.log")


def test_a_fifo_in_place_of_a_record_or_an_ack_reads_as_nothing_at_once(tmp_path):
    for name in ("resume.json", "control.json", "control.json.ack"):
        os.mkfifo(tmp_path / name)
    assert within(5, lambda: read_json(tmp_path / "resume.json")) is None
    assert within(5, lambda: read_ack(tmp_path / "control.json")) is None
    assert within(5, lambda: read_control(tmp_path / "control.json")) == {
        "pause": False,
        "stop": False,
    }


def test_a_record_a_script_points_to_through_a_symlink_is_still_read(tmp_path):
    (tmp_path / "real.json").write_text(json.dumps({"checkpoint": "c.zip"}))
    (tmp_path / "resume.json").symlink_to(tmp_path / "real.json")  # a "latest" pointer
    assert read_json(tmp_path / "resume.json") == {"checkpoint": "c.zip"}
    (tmp_path / "deep.json").write_text("[" * 100_000)
    assert read_json(tmp_path / "deep.json") is None  # not a RecursionError


# -- the Ray log mirror


def ray_job(tmp_path: Path) -> RayJob:
    spec = load_spec(write_fake_spec(tmp_path))
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    record = {"id": "r1", "ray_address": "http://127.0.0.1:1", "command": ["x"], "log_start": 0}
    return RayJob(spec, run_dir, record)


def test_the_ray_mirror_writes_through_the_one_descriptor_it_opened(tmp_path, decoy):
    job = ray_job(tmp_path)
    job._open_mirror()
    log = job.run_dir / "stdout.log"
    job._append([0], "first chunk\n")
    log.rename(job.run_dir / "kept.log")
    log.symlink_to(decoy)  # swapped in while the job runs
    job._append([0], "second chunk\n")
    job._append(None, "first chunk\nsecond chunk\nthe rest of Ray's log\n")  # the whole log
    job._close_mirror()
    assert decoy.read_bytes() == DECOY
    assert (job.run_dir / "kept.log").read_text() == (
        "first chunk\nsecond chunk\nthe rest of Ray's log\n"
    )


def test_a_re_attached_ray_job_does_not_mirror_into_a_symlinked_log(tmp_path, decoy):
    job = ray_job(tmp_path)
    (job.run_dir / "stdout.log").symlink_to(decoy)
    job._open_mirror()
    job._append([0], "a chunk of Ray's tail\n")
    job._append(None, "Ray's whole log\n")
    assert decoy.read_bytes() == DECOY
    assert job.record["message"] == (
        "the Ray log is not mirrored: stdout.log in the run directory is a symbolic link:"
        " the viewer does not write it"
    )


def test_a_ray_start_into_a_symlinked_log_submits_nothing(tmp_path, decoy):
    job = ray_job(tmp_path)  # (its address answers nothing: a submission would be a 503)
    (job.run_dir / "stdout.log").symlink_to(decoy)
    with pytest.raises(JobError) as refused:
        RayJob.start(job.spec, job.run_dir, {**job.record, "log_start": None})
    assert "is a symbolic link" in str(refused.value)
    assert decoy.read_bytes() == DECOY


# -- a record's pid


@pytest.mark.parametrize("pid", [0, 1, -1, True, "12", None])
def test_a_record_s_pid_that_cannot_be_a_child_is_never_signalled(pid):
    record = {"pid": pid, "pgid": pid, "pid_start": 0, "pid_token": "x"}
    assert process.identify(record) == process.GONE
    assert process.kill_job(record) == process.GONE


def test_a_record_naming_this_very_process_is_not_the_job(tmp_path):
    pid = os.getpid()
    started = process.start_time(pid)
    record = {"pid": pid, "pgid": os.getpgid(pid), "pid_start": started, "pid_token": "f" * 32}
    verdict = process.identify(record)
    assert verdict not in (process.OURS, process.GONE)
    assert process.kill_job(record) == verdict  # (and this test is still running)
    assert process.signal_job(record, 0) == verdict


def test_the_supervisor_refuses_a_bad_command_line():
    assert reaper.main(["--report"]) == 2
    assert reaper.command_token(os.getpid()) is None  # not a supervisor


# -- the output's line limit


def test_a_line_longer_than_the_limit_is_cut_and_the_rest_skipped(tmp_path):
    exact = b"a" * MAX_LINE_BYTES + b"\n"  # at the limit (the newline not counted): whole
    over = b"b" * (MAX_LINE_BYTES + 1) + b"\n"  # one byte over: cut
    huge = b"c" * (3 << 20) + b"\n"  # 3 MB: cut, the rest skipped without being held
    after = json.dumps({"event": "progress", "timesteps": 10}).encode() + b"\n"
    (tmp_path / "stdout.log").write_bytes(exact + over + huge + after + b"d" * 100_000)
    output = JobOutput(tmp_path)
    done = threading.Event()
    done.set()
    for reader in output.follow(tmp_path, done):
        reader.join(10)
    lines = [(line["text"], line["kind"]) for line in output.log.tail(100)["lines"]]
    texts = [text for text, _ in lines]
    assert texts[0] == "a" * 4000  # (the live log shows a line's first 4,000 characters)
    assert texts[1:3] == ["b" * 4000, CUT]
    assert texts[3:5] == ["c" * 4000, CUT]
    assert texts[5] == after.decode().strip()  # the next line is read whole
    assert texts[6:] == ["d" * 4000, CUT]  # the last line, unfinished when the job ended
    assert [p.timesteps for p in output.progress.snapshot()] == [10]
    assert output.read_to["stdout.log"] == (tmp_path / "stdout.log").stat().st_size
