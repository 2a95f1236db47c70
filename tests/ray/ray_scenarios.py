"""The Ray backend's scenarios on a real single-node Ray head: submit, progress and log, pause and
resume, a graceful stop, a forced stop through `stop_job`, a crash and a resume from the latest
checkpoint, a stop from Ray's own side, a rejected submission, the cluster unreachable at start
and mid-run, and `manage.py train --backend ray` re-attaching after a restart.

Run only inside the loopback-only namespace `test_on_ray.py` makes (this file's name keeps it
out of an ordinary collection; it refuses to run anywhere else).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from ray.job_submission import JobSubmissionClient

from rollouts.training.backends import with_backend
from rollouts.training.backends.rayjob import OUTSIDE
from rollouts.training.job import BackendUnavailable, JobError
from rollouts.training.manager import Manager
from rollouts.training.specfile import load_spec
from tests.support.rayhead import RayHead, inside_loopback_namespace, ray_head
from tests.support.servers import REPO_ROOT, free_port, get_json, run_visualize
from tests.support.training import until as until_within
from tests.support.training import write_fake_spec

if not (os.environ.get("RELAX_RAY_NAMESPACE") and inside_loopback_namespace()):
    pytest.exit("ray_scenarios.py runs only inside test_on_ray.py's namespace", returncode=4)

RAY = '[ray]\nenv = { RELAX_TEST_MARK = "from-the-spec" }'


@pytest.fixture(scope="module")
def head() -> Iterator[RayHead]:
    with ray_head() as running:
        yield running


def write_spec(tmp_path: Path, grace: float = 10.0) -> Path:
    return write_fake_spec(tmp_path, grace, 0.1, head='backend = "ray"\n', tail=RAY)


def manager(tmp_path: Path, address: str, grace: float = 10.0) -> Manager:
    return Manager(with_backend(load_spec(write_spec(tmp_path, grace)), "ray", address))


def until(check: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    return until_within(check, timeout, what)  # Ray's submission and tail take seconds


def ticks(m: Manager) -> list[int]:
    return [p["timesteps"] for p in m.snapshot({})["metrics"]["points"]]


def ray_status(head: RayHead, sid: str) -> str:
    return str(JobSubmissionClient(head.address).get_job_status(sid).value)


def saved_ticks(run_dir: Path) -> int:
    """The timesteps of the trainer's own latest checkpoint (it writes one every step)."""
    return int(json.loads((run_dir / "checkpoints" / "latest.json").read_text())["timesteps"])


def trainers_of(run_dir: Path) -> list[int]:
    """Trainer processes whose command line names this run (this pid namespace's only)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
                state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
            except OSError:
                continue
            mine = f"runs/{run_dir.name} ".encode() in cmdline and b"fake_trainer" in cmdline
            if mine and state != "Z":
                found.append(int(entry.name))
    return found


def test_a_job_is_submitted_watched_paused_resumed_and_stopped_gracefully(tmp_path, head):
    m = manager(tmp_path, head.address)
    job = m.start({"mode": "obey"})
    sid = job.record["submission_id"]
    assert sid == job.record["id"]  # the job id is the submission id
    until(lambda: len(ticks(m)) >= 3, what="three points through Ray's log")
    assert ray_status(head, sid) == "RUNNING"
    snapshot = m.snapshot({"log_tail": 4000})
    backend = snapshot["job"]["backend"]
    assert (backend["kind"], backend["submission_id"], backend["reachable"]) == ("ray", sid, True)
    assert backend["address"] == head.address and snapshot["job"]["status"] == "running"
    texts = [line["text"] for line in snapshot["log"]["lines"]]
    assert any(f"submitted as Ray job {sid}" in t for t in texts)
    assert any('"event": "progress"' in t for t in texts)
    # the log cursor: only newer lines, never the whole log again
    cursor = snapshot["log"]["cursor"]
    until(lambda: m.snapshot({"after_log": cursor})["log"]["lines"], what="newer log lines")
    newer = m.snapshot({"after_log": cursor})["log"]["lines"]
    assert newer and all(line["n"] > cursor for line in newer)
    # what Ray was given: the argument list quoted in the spec's directory, the environment
    info = JobSubmissionClient(head.address).get_job_info(sid)
    assert info.entrypoint == f"cd {shlex.quote(str(tmp_path))} && exec " + shlex.join(
        job.record["command"]
    )
    env = (info.runtime_env or {})["env_vars"]
    assert env["RELAX_TEST_MARK"] == "from-the-spec" and env["PYTHONUNBUFFERED"] == "1"
    assert env["RELAX_CONTROL_FILE"] == f"runs/{sid}/control.json"
    assert info.metadata == {"relax_viewer_job": sid}
    job.pause()
    until(lambda: job.status() == "paused", what="paused (the trainer's ack)")
    # what the trainer wrote before it blocked comes through Ray's tail a little later
    until(lambda: ticks(m)[-1] == saved_ticks(job.run_dir), what="the log caught up")
    frozen = ticks(m)
    time.sleep(2.0)
    assert ticks(m) == frozen and saved_ticks(job.run_dir) == frozen[-1], "paused: no progress"
    job.resume()
    until(lambda: len(ticks(m)) > len(frozen) + 2, what="progress after the resume")
    job.stop()
    assert job.status() == "stopping"
    assert job.wait(60)
    final = m.snapshot({})["job"]
    assert (final["status"], final["exit_code"], final["force_killed"]) == ("exited", 0, False)
    assert final["outcome"] == "stopped"  # by the user: not "finished"
    assert (job.run_dir / "stopped.json").is_file()  # saved on the control file's stop
    assert ray_status(head, sid) == "SUCCEEDED"
    assert trainers_of(job.run_dir) == []


def test_a_script_ignoring_the_control_file_is_stopped_through_stop_job(tmp_path, head):
    m = manager(tmp_path, head.address, grace=1.0)
    job = m.start({"mode": "ignore"})
    until(lambda: len(ticks(m)) >= 2, what="points")
    assert len(trainers_of(job.run_dir)) == 1
    began = time.monotonic()
    job.stop()
    assert job.wait(60)
    assert time.monotonic() - began >= 1.0  # the grace period first
    snapshot = m.snapshot({})
    assert snapshot["job"]["status"] == "killed" and snapshot["job"]["force_killed"] is True
    assert snapshot["job"]["outcome"] == "forced"
    forced = json.loads((job.run_dir / "forced_stop.json").read_text())
    assert forced["signal"].startswith("Ray stop_job")
    assert forced["recovery"]["checkpoint"] == "checkpoints/latest.json"
    assert snapshot["recovery"]["forced_stop"] is not None
    assert ray_status(head, job.record["submission_id"]) == "STOPPED"
    until(lambda: trainers_of(job.run_dir) == [], timeout=15, what="no trainer left")


def test_a_crash_then_a_resume_from_the_latest_checkpoint_continues(tmp_path, head):
    m = manager(tmp_path, head.address)
    crashed = m.start({"mode": "crash", "steps": 12, "step_seconds": 0.05, "crash_at": 5})
    assert crashed.wait(60)
    snapshot = m.snapshot({})
    assert snapshot["job"]["status"] == "failed" and snapshot["job"]["exit_code"] == 1
    assert snapshot["job"]["outcome"] == "failed" and snapshot["reading"]["reading"] == "failed"
    assert snapshot["recovery"]["failure"] is not None
    assert ray_status(head, crashed.record["submission_id"]) == "FAILED"
    before = ticks(m)
    assert before[-1] == 50
    resumed = m.start({"mode": "obey"}, resume_latest=True)
    assert resumed.record["id"] == crashed.record["id"]
    assert resumed.record["submission_id"] == f"{crashed.record['id']}-resume-1"
    assert resumed.wait(60)
    after = ticks(m)
    final = m.snapshot({"log_tail": 4000})
    assert (final["job"]["status"], final["job"]["outcome"]) == ("exited", "finished")
    assert after[: len(before)] == before and after[-1] == 120  # on from step 5 to step 12
    assert after == sorted(set(after))  # one curve: nothing doubled, nothing back
    attempts = final["metrics"]["attempts"]
    assert [a["start_timesteps"] for a in attempts] == [0, 50]
    assert [p["attempt"] for p in final["metrics"]["points"]][-1] == 1
    texts = [line["text"] for line in final["log"]["lines"]]
    assert sum("submitted as Ray job" in t for t in texts) == 2  # one per submission, once each
    assert final["log"]["cursor"] == len(texts)


def test_a_job_stopped_from_rays_own_side_says_so(tmp_path, head):
    m = manager(tmp_path, head.address)
    job = m.start({"mode": "obey"})
    until(lambda: ticks(m), what="points")
    assert JobSubmissionClient(head.address).stop_job(job.record["submission_id"])
    assert job.wait(60)
    final = m.snapshot({})["job"]
    assert final["status"] == "killed" and final["force_killed"] is False
    assert final["message"] == OUTSIDE and final["outcome"] == "forced"


def test_a_submission_the_cluster_rejects_is_one_line_and_leaves_nothing(tmp_path, head):
    client = JobSubmissionClient(head.address)
    now = datetime.now()
    for n in range(8):  # the ids the viewer picks in the next seconds, already taken
        stamp = (now + timedelta(seconds=n)).strftime("%Y%m%d-%H%M%S")
        client.submit_job(entrypoint="true", submission_id=stamp)
    m = manager(tmp_path, head.address)
    with pytest.raises(JobError) as raised:
        m.start({"mode": "obey"})
    message = str(raised.value)
    assert message.startswith("the cluster rejected the job: Job with submission_id 20")
    assert "already exists" in message and "\n" not in message and "Traceback" not in message
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    assert m.job is None


def test_the_cluster_unreachable_at_start_is_a_503_line_and_shown(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}"
    m = manager(tmp_path, closed)
    with pytest.raises(BackendUnavailable) as raised:
        m.start({"mode": "obey"})
    assert str(raised.value).startswith(f"cluster unreachable at {closed}")
    backend = m.snapshot({})["job"]["backend"]
    assert backend["reachable"] is False and backend["message"] == str(raised.value)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    launcher = (sys.executable, "manage.py", "train")
    spec = write_spec(tmp_path)
    with run_visualize(spec, "--no-browser", "--ray-address", closed, launcher=launcher) as s:
        status, body = get_json(s.url("/api/train/start"), method="POST", data=b"{}")
        assert status == 503 and body["message"].startswith("cluster unreachable at")
        _, state = get_json(s.url("/api/train/state"))
        assert state["job"]["backend"]["reachable"] is False


def test_the_demo_trainer_on_ray_through_train_re_attaches_after_a_restart(tmp_path, head):
    spec = tmp_path / "demo-train.toml"
    spec.write_text((REPO_ROOT / "examples" / "demo-train.toml").read_text())
    args = ("--no-browser", "--backend", "ray", "--ray-address", head.address)
    launcher = (sys.executable, "manage.py", "train")
    with run_visualize(spec, *args, launcher=launcher) as s:
        assert f"Ray jobs on {head.address}" in s.stdout()
        values = {"steps": 400, "step_seconds": 0.2, "table_every": 2}
        body = json.dumps({"values": values}).encode()
        status, started = get_json(s.url("/api/train/start"), method="POST", data=body)
        assert status == 200, started
        sid = started["job"]["backend"]["submission_id"]

        def points() -> list[Any]:
            return get_json(s.url("/api/train/state"))[1]["metrics"]["points"]

        until(lambda: len(points()) >= 2, what="points")
        # the viewer shows the rollout_result the job writes on the cluster's side
        until(lambda: get_json(s.url("/api/jsonl/train/steps"))[0] == 200, what="train steps")
        state = get_json(s.url("/api/train/state?log_tail=4000"))[1]
        kinds = {line["kind"] for line in state["log"]["lines"]}
        assert {"progress", "table"} <= kinds  # progress JSON and SB3 tables, through Ray
        assert state["cards"] and state["reading"]["reading"]
        seen = len(points())
        os.killpg(s.pid, signal.SIGINT)  # Ctrl+C: the viewer goes, the Ray job stays
        s.proc.wait(30)
        said = s.stderr()
    assert f"Leaving Ray job {sid} running on its cluster" in said
    assert ray_status(head, sid) == "RUNNING"
    with run_visualize(spec, *args, launcher=launcher) as s:
        _, state = get_json(s.url("/api/train/state"))
        assert state["job"]["backend"]["submission_id"] == sid
        assert state["job"]["status"] in ("starting", "running")
        # the curve comes back from the mirrored log, and goes on
        until(lambda: len(get_json(s.url("/api/train/state"))[1]["metrics"]["points"]) > seen)
        status, stopped = get_json(s.url("/api/train/stop"), method="POST", data=b"{}")
        assert status == 200 and stopped["job"]["status"] == "stopping"
        until(
            lambda: get_json(s.url("/api/train/state"))[1]["job"]["status"] == "exited",
            what="the re-attached job to exit",
        )
        final = get_json(s.url("/api/train/state"))[1]
        assert final["job"]["exit_code"] == 0 and final["recovery"]["resume"] is not None
    assert ray_status(head, sid) == "SUCCEEDED"


# Last in this file: it takes the module's head down (a second head on one machine would want
# every one of Ray's ports set apart).
def test_the_cluster_going_away_mid_run_keeps_the_last_known_state(tmp_path, head):
    m = manager(tmp_path, head.address)
    job = m.start({"mode": "obey", "step_seconds": 0.2})
    until(lambda: len(ticks(m)) >= 3, what="points")
    head.stop()
    until(
        lambda: m.snapshot({})["job"]["backend"]["reachable"] is False,
        what="the snapshot to say the cluster is unreachable",
        timeout=30,
    )
    snapshot = m.snapshot({})
    assert snapshot["job"]["backend"]["message"].startswith(
        f"cluster unreachable at {head.address}"
    )
    assert snapshot["job"]["status"] in ("running", "starting")  # the last known state
    assert snapshot["progress"]["timesteps"] and len(ticks(m)) >= 3
    assert job.running and snapshot["job"]["exit_code"] is None
