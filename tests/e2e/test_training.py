"""The training job runner and `manage.py train` with real child processes (no mock of the
child): start, poll, pause, resume, stop, exit codes; a child ignoring the control file is killed
with its whole group after the grace period; a crash then a resume continues the timesteps; a
restarted viewer re-attaches to the job it started; Ctrl+C stops the child before the server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.support.servers import REPO_ROOT, get_json, process_group_members, run_visualize
from tests.support.training import post_train, until, write_fake_spec

pytestmark = pytest.mark.e2e


def write_spec(tmp_path: Path, grace: float = 10.0) -> Path:
    return write_fake_spec(tmp_path, grace)


def ticks(manager: Manager) -> list[int]:
    return [p["timesteps"] for p in manager.snapshot({})["metrics"]["points"]]


def test_start_poll_pause_resume_stop_and_the_exit_code(tmp_path):
    manager = Manager(load_spec(write_spec(tmp_path)))
    job = manager.start({"mode": "obey"})
    pgid = job.record["pid"]
    until(lambda: len(ticks(manager)) >= 3, what="three points")
    assert manager.snapshot({})["job"]["status"] == "running"
    job.pause()
    until(lambda: job.status() == "paused", what="paused (the child's ack)")
    # The output written before the child blocked is read: the last point is its checkpoint's.
    checkpoint = job.run_dir / "resume.json"
    until(
        lambda: ticks(manager)[-1:] == [json.loads(checkpoint.read_text())["timesteps"]],
        what="the points up to the child's last checkpoint",
    )
    frozen = ticks(manager)
    wall = job.wall_seconds() or 0.0
    time.sleep(0.8)
    assert ticks(manager) == frozen  # blocked in TrainingControl.check
    assert (job.wall_seconds() or 0.0) - wall < 0.3  # a pause is not wall time
    job.resume()
    until(lambda: len(ticks(manager)) > len(frozen) + 2, what="points after the resume")
    snapshot = manager.snapshot({"log_tail": 10})
    assert snapshot["progress"]["total"] == 4000 and snapshot["progress"]["throughput"] > 0
    assert snapshot["episodes"]["columns"] == ["episode", "reward", "length", "time"]
    assert snapshot["recovery"]["resume"]["checkpoint"] == "checkpoints/latest.json"
    job.stop()
    assert job.status() == "stopping"
    assert job.wait(15)
    final = manager.snapshot({})["job"]
    assert (final["status"], final["exit_code"], final["force_killed"]) == ("exited", 0, False)
    assert (job.run_dir / "stopped.json").is_file()
    assert process_group_members(pgid) == []
    record = json.loads((job.run_dir / "job.json").read_text())
    assert record["status"] == "exited" and record["exit_code"] == 0


def test_a_child_ignoring_the_control_file_is_killed_with_its_group(tmp_path):
    manager = Manager(load_spec(write_spec(tmp_path, grace=1.0)))
    job = manager.start({"mode": "ignore"})
    pgid = job.record["pid"]
    until(lambda: len(ticks(manager)) >= 2, what="points")
    # the supervisor (reaper.py), the child and its `sleep` grandchild
    assert len(process_group_members(pgid)) == 3
    began = time.monotonic()
    job.stop()
    assert job.wait(15)
    assert time.monotonic() - began >= 1.0  # the grace period first
    snapshot = manager.snapshot({})
    assert snapshot["job"]["status"] == "killed" and snapshot["job"]["force_killed"] is True
    forced = snapshot["recovery"]["forced_stop"]
    assert forced["recovery"]["checkpoint"] == "checkpoints/latest.json"
    assert (job.run_dir / "forced_stop.json").is_file()
    until(lambda: process_group_members(pgid) == [], timeout=5, what="an empty process group")
    assert any(line["kind"] == "error" for line in snapshot["log"]["lines"])


def test_a_crash_then_a_resume_continues_the_timesteps(tmp_path):
    manager = Manager(load_spec(write_spec(tmp_path)))
    job = manager.start({"mode": "crash", "steps": 8, "crash_at": 4})
    assert job.wait(20)
    crashed = manager.snapshot({})
    assert (crashed["job"]["status"], crashed["job"]["exit_code"]) == ("failed", 1)
    assert crashed["recovery"]["failure"] == {"step": 4, "error": "boom"}
    assert any("RuntimeError: boom" in line["text"] for line in crashed["log"]["lines"])
    text = json.dumps(crashed)  # the traceback's file names too: no server path
    assert str(REPO_ROOT) not in text and str(tmp_path) not in text
    assert crashed["recovery"]["resume"]["timesteps"] == 40
    with pytest.raises(Exception, match="no such field"):
        manager.start({"bogus": 1}, resume_latest=True)
    resumed = manager.start({"mode": "obey"}, resume_latest=True)
    assert resumed.run_dir == job.run_dir
    assert resumed.record["command"][-2:] == [
        "--resume",
        f"runs/{job.record['id']}/checkpoints/latest.json",
    ]
    assert resumed.wait(20)
    snapshot = manager.snapshot({})
    assert snapshot["job"]["status"] == "exited" and snapshot["job"]["exit_code"] == 0
    assert ticks(manager) == [10 * n for n in range(1, 9)]  # continuous, none doubled
    assert snapshot["recovery"]["failure"] is None  # the crash was the previous job's
    texts = [line["text"] for line in snapshot["log"]["lines"]]
    assert "resuming from step 4" in texts


def test_a_restarted_viewer_re_attaches_to_its_job(tmp_path):
    spec = write_spec(tmp_path)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        status, started = get_json(
            s.url("/api/train/start"),
            method="POST",
            data=json.dumps({"values": {"mode": "obey"}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        assert status == 200, started
        pid = started["job"]["pid"]
        until(lambda: get_json(s.url("/api/train/state"))[1]["metrics"]["points"], what="points")
        os.killpg(s.pid, signal.SIGKILL)  # the viewer dies; its worker goes with it
        s.proc.wait()
    assert process_group_members(pid), "the training child runs on"
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        _, state = get_json(s.url("/api/train/state"))
        assert state["job"]["pid"] == pid and state["job"]["status"] in ("starting", "running")
        # the points come back, read again from the run's stdout.log
        until(lambda: get_json(s.url("/api/train/state"))[1]["metrics"]["points"], what="points")
        assert get_json(s.url("/api/train/state"))[1]["job"]["status"] == "running"
        status, stopped = get_json(s.url("/api/train/stop"), method="POST", data=b"{}")
        assert status == 200 and stopped["job"]["status"] == "stopping"
        until(
            lambda: get_json(s.url("/api/train/state"))[1]["job"]["status"] == "exited",
            what="the re-attached job to exit",
        )
    until(lambda: process_group_members(pid) == [], timeout=5, what="no process left")


def test_ctrl_c_stops_the_training_process_before_the_server(tmp_path):
    spec = write_spec(tmp_path)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        status, started = get_json(s.url("/api/train/start"), method="POST", data=b"{}")
        assert status == 200
        pid = started["job"]["pid"]
        run_dir = tmp_path / "runs" / started["job"]["id"]
        until(lambda: get_json(s.url("/api/train/state"))[1]["metrics"]["points"], what="points")
        began = time.monotonic()
        os.killpg(s.pid, signal.SIGINT)  # as a terminal sends Ctrl+C: server and worker
        s.proc.wait(30)
        # the worker stopped its child (no waiting out gunicorn's graceful timeout)
        assert time.monotonic() - began < 8
        said = s.stderr()
    job_id = started["job"]["id"]
    assert f"Stopping training job {job_id} (up to " in said  # the terminal says what it waits for
    assert f"Training job {job_id}: exited." in said
    assert (run_dir / "stopped.json").is_file()  # stopped gracefully, through the control file
    record = json.loads((run_dir / "job.json").read_text())
    assert (record["status"], record["exit_code"]) == ("exited", 0)
    assert process_group_members(pid) == []


def test_the_demo_trainer_end_to_end_through_manage_py_train(tmp_path):
    spec = tmp_path / "demo-train.toml"
    spec.write_text((REPO_ROOT / "examples" / "demo-train.toml").read_text())
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(spec, "--no-browser", launcher=launcher) as s:

        def state() -> Any:
            return get_json(s.url("/api/train/state?log_tail=50"))[1]

        values = {"steps": 60, "step_seconds": 0.1, "table_every": 2}
        status, started = post_train(s, "start", {"values": values})
        assert status == 200, started
        assert post_train(s, "start", {})[0] == 409
        until(lambda: len(state()["metrics"]["points"]) >= 3, what="points")
        assert post_train(s, "pause", {})[0] == 200
        until(lambda: state()["job"]["status"] == "paused", what="paused")
        assert post_train(s, "start", {})[0] == 409  # a paused job counts as running
        assert post_train(s, "resume", {})[0] == 200
        snapshot = state()
        assert snapshot["job"]["status"] == "running"
        assert snapshot["links"]["samples"] and snapshot["cards"]
        # the viewer shows the job's own rollout_result
        until(lambda: get_json(s.url("/api/jsonl/train/steps"))[0] == 200, what="train steps")
        assert post_train(s, "stop", {})[0] == 200
        until(lambda: state()["job"]["status"] == "exited", what="a graceful stop")
        final = state()
        assert final["job"]["exit_code"] == 0 and final["job"]["force_killed"] is False
        assert final["recovery"]["resume"] is not None and final["recovery"]["checkpoints"]
        # a crash, then "resume from the latest checkpoint" continues the timesteps
        crash = {"steps": 12, "step_seconds": 0.05, "inject_failure": True, "fail_at_step": 6}
        assert post_train(s, "start", {"values": crash})[0] == 200
        until(lambda: state()["job"]["status"] == "failed", what="the crash")
        crashed = state()
        assert crashed["recovery"]["failure"] is not None
        before = [p["timesteps"] for p in crashed["metrics"]["points"]]
        status, resumed = post_train(
            s, "start", {"values": {"inject_failure": False}, "resume_latest": True}
        )
        assert status == 200, resumed
        until(lambda: state()["job"]["status"] == "exited", what="the resumed run")
        after = [p["timesteps"] for p in state()["metrics"]["points"]]
        assert after[: len(before)] == before and after[-1] > before[-1]
        assert after == sorted(set(after))  # continuous: nothing doubled, nothing back


def test_train_behind_a_base_path(tmp_path):
    spec = write_spec(tmp_path)
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(
        spec, "--no-browser", "--base-path", "/absproxy/8036/", launcher=launcher
    ) as s:
        status, schema = get_json(s.url("/absproxy/8036/api/train/schema"))
        assert status == 200 and {f["name"] for f in schema["fields"]} >= {"mode", "steps"}
        assert "/absproxy/8036/training/" in s.stdout()
    assert not (tmp_path / "runs").exists()  # serving alone starts nothing


def test_ctrl_c_kills_a_child_ignoring_the_control_file_after_the_grace_period(tmp_path):
    spec = write_spec(tmp_path, grace=1.0)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        status, started = post_train(s, "start", {"values": {"mode": "ignore"}})
        assert status == 200, started
        pid, job_id = started["job"]["pid"], started["job"]["id"]
        until(lambda: get_json(s.url("/api/train/state"))[1]["metrics"]["points"], what="points")
        assert len(process_group_members(pid)) == 3  # the supervisor, the child, its grandchild
        began = time.monotonic()
        os.killpg(s.pid, signal.SIGINT)  # Ctrl+C
        s.proc.wait(30)
        assert 1.0 <= time.monotonic() - began < 12  # the grace period, then no more
        said = s.stderr()
    assert f"Training job {job_id}: killed." in said
    run_dir = tmp_path / "runs" / job_id
    forced = json.loads((run_dir / "forced_stop.json").read_text())
    assert forced["job_id"] == job_id and forced["signal"] == "SIGKILL"
    assert forced["recovery"]["checkpoint"] == "checkpoints/latest.json"
    record = json.loads((run_dir / "job.json").read_text())
    assert (record["status"], record["force_killed"]) == ("killed", True)
    until(lambda: process_group_members(pid) == [], timeout=5, what="no process left")


def test_a_record_whose_pid_is_now_another_process_is_neither_followed_nor_killed(tmp_path):
    """The pid of a job record is checked with its start time: a reused pid is someone else's."""
    from rollouts.training.job import JobError
    from rollouts.training.manager import stop_leftover
    from rollouts.training.process import start_time

    spec = load_spec(write_spec(tmp_path))
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)  # pid == its group
    try:
        started = start_time(other.pid)
        assert started is not None
        run = tmp_path / "runs" / "20260101-000000"
        run.mkdir(parents=True)
        record = {
            "id": run.name,
            "run": run.name,
            "command": ["python", "train.py"],
            "values": {},
            "pid": other.pid,
            "pid_start": started + 1,  # the job's process started at another time
            "started_at": time.time() - 60,
            "status": "running",
            "exit_code": None,
            "force_killed": False,
            "paused_seconds": 0.0,
        }
        (run / "job.json").write_text(json.dumps(record))
        stop_leftover(spec)  # what `train` does after its server: nothing of ours is left
        manager = Manager(spec)
        assert manager.job is not None and manager.job.wait(5)
        job = manager.snapshot({})["job"]
        assert (job["status"], job["exit_code"]) == ("exited", None)
        with pytest.raises(JobError):
            manager.job.stop()
        time.sleep(0.3)
        assert other.poll() is None, "a process that is not the job's was signalled"
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize(
    ("preset", "reading"), [("rising", "rising"), ("plateau", "plateau"), ("kl", "kl too large")]
)
def test_the_demo_spec_s_presets_give_the_readings_they_are_named_after(tmp_path, preset, reading):
    spec_path = tmp_path / "demo-train.toml"
    spec_path.write_text((REPO_ROOT / "examples" / "demo-train.toml").read_text())
    manager = Manager(load_spec(spec_path))
    values = next(p["values"] for p in manager.spec.presets if p["name"] == preset)
    job = manager.start({**values, "step_seconds": 0})  # the preset, without the waiting
    assert job.wait(60)
    snapshot = manager.snapshot({})
    assert (snapshot["job"]["status"], snapshot["job"]["exit_code"]) == ("exited", 0)
    assert len(snapshot["metrics"]["points"]) == values["steps"]
    assert snapshot["reading"]["reading"] == reading, snapshot["reading"]["why"]


OPENER = """#!/bin/sh
echo "$1" > "{opened}"
"""


def test_train_opens_the_training_page_in_a_browser_unless_told_not_to(tmp_path):
    spec = write_spec(tmp_path)
    opener, opened = tmp_path / "browser.sh", tmp_path / "opened.txt"
    opener.write_text(OPENER.format(opened=opened))
    opener.chmod(0o755)
    env = {"BROWSER": str(opener)}  # what webbrowser runs in place of a browser
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(spec, "--no-browser", env=env, launcher=launcher):
        pass
    assert not opened.exists()
    with run_visualize(spec, env=env, launcher=launcher) as s:
        until(opened.exists, timeout=10, what="the browser to be opened")
        assert opened.read_text().strip() == s.url("/training/")


def test_train_serves_static_files_by_name_and_no_directory(tmp_path):
    from tests.support.servers import request

    spec = write_spec(tmp_path)
    with run_visualize(spec, "--no-browser", launcher=(sys.executable, "manage.py", "train")) as s:
        assert request(s.url("/static/rollouts/training.js"))[0] == 200
        for path in ("/static/", "/static/rollouts/", "/static/rollouts/../", "/static/rollouts"):
            status, _, body = request(s.url(path))
            # not a static file: the viewer's own answer (404, or 503 before the first run)
            assert status in (404, 503), path
            assert b"training.js" not in body, path  # no listing
        status, _, body = request(s.url("/static/rollouts/%2e%2e/templates/rollouts/training.html"))
        assert status in (404, 503) and b"{% block" not in body
