"""What a user must be able to trust on the Training page, with real child processes (the fake
trainer): "paused" only once the script acknowledged, four distinct outcomes (finished,
stopped, forced, failed) and no green reading on a failed job, a resume whose log holds each
line once and whose points are a new attempt, and a restarted viewer that takes the next start
at once."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rollouts.training import job as job_module
from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.support.training import until, write_fake_spec

pytestmark = pytest.mark.e2e


def manager_of(tmp_path: Path, grace: float = 10.0, step_seconds: float = 0.05) -> Manager:
    return Manager(load_spec(write_fake_spec(tmp_path, grace, step_seconds=step_seconds)))


def lines_in(run_dir: Path) -> int:
    return sum(
        len((run_dir / name).read_text().splitlines()) for name in ("stdout.log", "stderr.log")
    )


def test_paused_only_after_the_ack_and_a_note_when_none_comes(tmp_path, monkeypatch):
    monkeypatch.setattr(job_module, "PAUSE_NOTE_AFTER", 0.5)
    # a script that never reads the control file and is quiet for seconds at a time (as SB3
    # is between its tables): silence is not a pause
    manager = manager_of(tmp_path, grace=1.0, step_seconds=3.0)
    job = manager.start({"mode": "ignore", "steps": 5})
    until(lambda: manager.snapshot({})["job"]["status"] == "running", what="running")
    job.pause()
    time.sleep(2.5)  # longer than the old no-output rule's 2 s
    snapshot = manager.snapshot({})["job"]
    assert snapshot["status"] == "pausing"
    assert "has not acknowledged the pause" in snapshot["note"]
    assert "rollouts.control" in snapshot["note"]
    job.stop()
    assert job.wait(20)


def test_an_obeying_script_acknowledges_its_pause(tmp_path):
    manager = manager_of(tmp_path)
    job = manager.start({"mode": "obey"})
    until(lambda: manager.snapshot({})["metrics"]["points"], what="a point")
    job.pause()
    until(lambda: job.status() == "paused", what="paused after the ack")
    assert manager.snapshot({})["job"]["note"] is None
    job.resume()
    until(lambda: job.status() == "running", what="running again")
    job.stop()
    assert job.wait(15)


@pytest.mark.parametrize(
    ("mode", "stop", "outcome", "status"),
    [
        ("obey", False, "finished", "exited"),
        ("obey", True, "stopped", "exited"),
        ("ignore", True, "forced", "killed"),
        ("crash", False, "failed", "failed"),
    ],
)
def test_four_distinct_outcomes(tmp_path, mode, stop, outcome, status):
    manager = manager_of(tmp_path, grace=1.0)
    job = manager.start({"mode": mode, "steps": 8 if not stop else 400})
    assert manager.snapshot({})["job"]["outcome"] is None  # not while it runs
    if stop:
        until(lambda: manager.snapshot({})["metrics"]["points"], what="a point")
        job.stop()
    assert job.wait(20)
    snapshot = manager.snapshot({})
    assert (snapshot["job"]["status"], snapshot["job"]["outcome"]) == (status, outcome)
    assert job.record["outcome"] == outcome  # kept in job.json for a restarted viewer
    if outcome == "failed":
        reading = snapshot["reading"]
        assert reading["reading"] == "failed" and "exit code 1" in reading["why"]
        assert reading["notes"][0].startswith("before it failed the curve read")
    again = Manager(manager.spec).snapshot({})["job"]  # a restarted viewer says the same
    assert (again["status"], again["outcome"]) == (status, outcome)


def test_a_resume_keeps_one_log_and_starts_a_new_attempt(tmp_path):
    manager = manager_of(tmp_path, grace=1.0)
    job = manager.start({"mode": "crash", "crash_at": 6, "steps": 12})
    assert job.wait(20)
    page_cursor = manager.snapshot({})["log"]["cursor"]  # what an open page has read
    assert page_cursor == lines_in(job.run_dir)
    resumed = manager.start({"mode": "obey"}, resume_latest=True)
    assert resumed.wait(20)
    snapshot = manager.snapshot({"after_log": page_cursor, "log_tail": 4000})
    new_lines = snapshot["log"]["lines"]
    # each new line once: the resumed process's own, plus the viewer's one resume line
    assert len(new_lines) == lines_in(job.run_dir) - page_cursor + 1
    assert new_lines[0]["text"].startswith("[viewer] resumed from ")
    whole = manager.snapshot({"log_tail": 4000})["log"]
    assert whole["cursor"] == len(whole["lines"]) == lines_in(job.run_dir) + 1
    attempts = snapshot["metrics"]["attempts"]
    assert [a["start_timesteps"] for a in attempts] == [0, 60]
    assert attempts[1]["resumed_from"].endswith("checkpoints/latest.json")
    points = manager.snapshot({})["metrics"]["points"]
    assert {p["attempt"] for p in points} == {0, 1}
    assert next(p["timesteps"] for p in points if p["attempt"] == 1) == 70
    assert snapshot["progress"]["timesteps"] == 120 and snapshot["progress"]["attempt"] == 1
    # a restarted viewer reads the same attempts back from the record and the log
    again = Manager(manager.spec)
    until(lambda: again.job is not None and not again.job.running, what="re-read")
    assert again.job is not None and again.job.wait(10)
    reread = again.snapshot({})["metrics"]
    assert [a["start_timesteps"] for a in reread["attempts"]] == [0, 60]
    assert [(p["attempt"], p["timesteps"]) for p in reread["points"]] == [
        (p["attempt"], p["timesteps"]) for p in points
    ]


def test_a_restarted_viewer_takes_the_next_start_at_once(tmp_path):
    manager = manager_of(tmp_path)
    first = manager.start({"mode": "obey", "steps": 3})
    assert first.wait(15)
    # a long log, so reading it back takes a while after the restart
    with open(first.run_dir / "stdout.log", "a") as log:
        log.write("plain line\n" * 200_000)
    restarted = Manager(manager.spec)
    assert restarted.job is not None and restarted.job.record["status"] == "exited"
    second = restarted.start({"mode": "obey", "steps": 3})  # no 409: nothing runs
    assert second.run_dir != first.run_dir
    assert second.wait(15)
